// The trash (decision 0059): a signed `delete` held for TRASH_RETENTION_S instead of applied.
// Putting an asset in the trash runs exactly the delete's checks; until its purge instant the
// asset stays live (its blobs download, verification and receipts unchanged) and it can be
// restored (the row goes) or deleted at once (the delete route, which takes the row too). Then
// the maintenance pass applies the stored delete in the delete route's own transaction.
import type { Static } from 'typebox'
import type { AssetDeleteRequest } from '../../contract/albums.ts'
import type { Deps } from '../../deps.ts'
import { AppError } from '../../errors.ts'
import type { TrashRow } from '../../storage/port/trash.ts'
import { writableAlbum } from '../albums/albums.service.ts'
import type { Caller } from '../context.ts'
import { ensureNotSuspended } from '../moderation/moderation.service.ts'
import { applyDeletion, deletionWrite, ensureDeletable } from './asset-delete.service.ts'
import { checkEnvelopeProtocol, readEnvelope } from './envelope.ts'
import { assetTrashed, ensureWriter, lockForWrite, staleRevival } from './write.ts'

/** Due rows the maintenance pass reads per round trip. */
const PURGE_PAGE = 100

/**
 * Puts the asset in the trash with the signed delete of the request. The same manifest again
 * answers the same row; another one while the asset is there: 409 error.asset.trashed.
 */
export function trashAsset(deps: Deps, caller: Caller, albumId: string, fileId: string, validate: () => Static<typeof AssetDeleteRequest>): Promise<TrashRow> {
  return deletionWrite(deps, caller, albumId, fileId, validate, {
    apply: ({ envelope, manifest, manifestHash }, _found, album, now) =>
      deps.storage.transaction(async (tx) => {
        // Applied already: the asset ended at this very manifest.
        if ((await lockForWrite(tx, album.albumId, manifestHash, now)) !== undefined) throw staleRevival(manifestHash)
        const asset = await tx.findAsset(envelope.file_id)
        await ensureWriter(tx, album.albumId, caller, asset)
        const held = await tx.findTrashed(envelope.file_id)
        if (held !== undefined) {
          if (held.manifestHash === manifestHash) return held
          throw assetTrashed()
        }
        ensureDeletable(envelope, asset, now)
        return tx.putInTrash({
          userId: caller.userId,
          albumId: album.albumId,
          fileId: envelope.file_id,
          manifestHash,
          manifestCbor: manifest,
          manifestEnvelope: JSON.stringify(envelope),
          trashedAt: now,
          purgeAt: now + deps.config.trashRetentionS * 1000,
        })
      }),
    replayed: (applied) => {
      throw staleRevival(applied.manifestHash)
    },
  })
}

/**
 * Takes the asset out of the trash (404 when it is not there): the album's owner, or the
 * contributor who put it there. Under the album lock, so a purge under way either ran first or
 * finds nothing.
 */
export async function restoreAsset(deps: Deps, caller: Caller, albumId: string, fileId: string): Promise<void> {
  await writableAlbum(deps.storage, caller, albumId)
  ensureNotSuspended(caller)
  const restored = await deps.storage.transaction(async (tx) => {
    if ((await tx.lockAlbum(albumId)) === undefined) return false
    const held = await tx.findTrashed(fileId)
    if (held === undefined || held.albumId !== albumId) return false
    await ensureWriter(tx, albumId, caller, held.userId === caller.userId ? undefined : await tx.findAsset(fileId))
    return tx.removeFromTrash(albumId, fileId)
  })
  if (!restored) throw new AppError('error.not_found', 'This asset is not in the trash')
}

/** A page of the caller's trash, in the order the assets went in. */
export function trashPage(deps: Deps, caller: Caller, after: number, limit: number): Promise<TrashRow[]> {
  return deps.storage.trashPage(caller.userId, after, limit)
}

/**
 * Applies the delete of one due row, in one transaction under the album lock; false when the row
 * went meanwhile (restored, deleted at once, or applied by another instance's pass).
 */
function purgeOne(deps: Deps, row: TrashRow, now: number): Promise<boolean> {
  return deps.storage.transaction(async (tx) => {
    const album = await tx.lockAlbum(row.albumId)
    const held = await tx.findTrashed(row.fileId)
    if (album === undefined || held?.manifestHash !== row.manifestHash) return false
    const envelope = readEnvelope(JSON.parse(row.manifestEnvelope))
    // The delete route's checks that time can change: the album's protocol (an upgrade since), the chain, the floor, an upgrade window.
    checkEnvelopeProtocol(deps, envelope, album)
    await applyDeletion(tx, row.albumId, { envelope, manifest: row.manifestCbor, manifestHash: row.manifestHash }, now, null)
    return true
  })
}

/**
 * The maintenance pass's part: applies every due delete the trash holds. One that the delete
 * route would now refuse stays in the trash (an upgrade window passes; the owner may restore it
 * or delete it anew) and is counted as kept. Safe on several instances at once.
 */
export async function purgeDueTrash(deps: Deps): Promise<{ purged: number; kept: number }> {
  const now = deps.clock.now()
  let purged = 0
  let kept = 0
  for (let after = 0; ; ) {
    const due = await deps.storage.dueTrash(now, after, PURGE_PAGE)
    for (const row of due) {
      try {
        if (await purgeOne(deps, row, now)) purged++
      } catch (error) {
        if (!(error instanceof AppError)) throw error
        kept++
        deps.log.warn({ fileId: row.fileId, albumId: row.albumId, code: error.code }, 'a delete the trash held no longer applies; it stays in the trash')
      }
    }
    if (due.length < PURGE_PAGE) return { purged, kept }
    after = due.at(-1)?.trashSeq ?? after
  }
}
