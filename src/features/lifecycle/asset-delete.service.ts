// Asset deletion (API.md section 6, "Asset deletion"; docs/decisions/0018): a signed `delete`
// manifest ends an asset's chain. Checks 1-5 of the ops operation, then the chain (the delete
// continues from the asset's head and names its current original), then the retention floor;
// no upload session, no blob stored, no receipt. Then one transaction: the feed gains the
// delete, the asset's chain head moves to it and the asset is no longer live, its bundle
// superseded (garbage for the next collection unless a legal hold keeps it). The trash
// (trash.service.ts, decision 0059) runs the same checks and applies the same transaction later.
import type { Static } from 'typebox'
import type { AssetDeleteRequest } from '../../contract/albums.ts'
import { timestamp } from '../../contract/common.ts'
import type { Deps } from '../../deps.ts'
import { retainedUntil } from '../../domain/lifecycle-write.ts'
import { AppError } from '../../errors.ts'
import type { Store } from '../../storage/port.ts'
import type { Asset } from '../../storage/port/lifecycle.ts'
import type { Caller } from '../context.ts'
import { checkEnvelopeShape, readEnvelope, type Envelope } from './envelope.ts'
import {
  appendToFeed,
  decodeManifest,
  ensureChain,
  ensureWriter,
  lifecycleWrite,
  lockForWrite,
  refuseInvalid,
  replayOf,
  type OpOutcome,
  type WriteSteps,
} from './write.ts'

/** A delete request past check 2, and the hash of its manifest. */
export interface Deletion {
  readonly envelope: Envelope
  readonly manifest: Buffer
  readonly manifestHash: string
}

/** Check 2 beyond the schema: the envelope's album, author and asset are the operation's own. */
function decodeDeletion(body: Static<typeof AssetDeleteRequest>, albumId: string, fileId: string, caller: Caller) {
  const envelope = readEnvelope(body.manifest_envelope)
  checkEnvelopeShape(envelope, albumId, caller.userId)
  if (envelope.file_id !== fileId) throw refuseInvalid('manifest_envelope.file_id must equal the asset of the path')
  return { envelope, manifest: decodeManifest(body.manifest_cbor) }
}

/** The chain check, then the retention floor (409 error.asset.retained while it is ahead). */
export function ensureDeletable(envelope: Envelope, asset: Asset | undefined, now: number): void {
  ensureChain(envelope, asset)
  const until = asset === undefined ? null : retainedUntil(asset, now)
  if (until !== null) {
    throw new AppError('error.asset.retained', `The asset’s manifests keep it until ${timestamp(until)}; it cannot be deleted before then`, {
      extensions: { retained_until: timestamp(until) },
    })
  }
}

/**
 * The delete's checks and writes around `apply` (the delete route's, or the trash's): the
 * lifecycle write's checks 1-5, then the chain and the retention floor.
 */
export function deletionWrite<R>(
  deps: Deps,
  caller: Caller,
  albumId: string,
  fileId: string,
  validate: () => Static<typeof AssetDeleteRequest>,
  steps: Pick<WriteSteps<Deletion, void, R>, 'apply' | 'replayed'>,
): Promise<R> {
  return lifecycleWrite(deps, caller, albumId, {
    decode: () => decodeDeletion(validate(), albumId, fileId, caller),
    async check({ envelope }, _album, now) {
      ensureDeletable(envelope, await deps.storage.findAsset(envelope.file_id), now)
    },
    ...steps,
  })
}

/**
 * The delete's transaction (the route's, with its `writer`, or the maintenance pass's for a
 * delete the trash held): under the album lock the checks a racing write could invalidate
 * again, then the feed entry,
 * the asset ended, its bundle superseded, and its trash row gone.
 */
export async function applyDeletion(
  tx: Store,
  albumId: string,
  { envelope, manifest, manifestHash }: Deletion,
  now: number,
  writer: Caller | null,
): Promise<OpOutcome> {
  const replay = await lockForWrite(tx, albumId, manifestHash, now)
  if (replay !== undefined) return replay
  const asset = await tx.findAsset(envelope.file_id)
  // The route's writer may still change the asset; the trash's purge applies what was allowed when it was trashed.
  if (writer !== null) await ensureWriter(tx, albumId, writer, asset)
  // A replace or another delete may have moved the chain since the checks.
  ensureDeletable(envelope, asset, now)
  await tx.removeFromTrash(albumId, envelope.file_id)
  const syncSeq = await tx.takeSyncSeq(albumId)
  await tx.supersedeBundle(envelope.file_id, now)
  await tx.endAsset(envelope.file_id, manifestHash, now)
  // No upload session; the schema made metadata_blob_hash null.
  return appendToFeed(tx, { albumId, syncSeq, manifestHash, envelope, manifest, uploadId: null, now })
}

/**
 * Deletes the asset `fileId` of the album (taking it out of the trash if it is there). `validate`
 * checks the request body's shape; it runs after the album check, as on the ops operation.
 */
export function deleteAsset(
  deps: Deps,
  caller: Caller,
  albumId: string,
  fileId: string,
  validate: () => Static<typeof AssetDeleteRequest>,
): Promise<OpOutcome> {
  return deletionWrite(deps, caller, albumId, fileId, validate, {
    apply: (deletion, _found, album, now) => deps.storage.transaction((tx) => applyDeletion(tx, album.albumId, deletion, now, caller)),
    replayed: replayOf,
  })
}
