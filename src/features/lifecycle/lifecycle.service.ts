// Applying a signed lifecycle manifest (API.md section 6): every check runs, in its order,
// before anything is written; then one transaction indexes the asset and its bundle, records
// the metadata and provenance blobs, closes the upload session and appends to the feed. The
// provenance blob's bytes are the manifest the feed's row holds: they are stored there only,
// never as a file (decision 0038).
import type { Static } from 'typebox'
import type { OpRequest } from '../../contract/albums.ts'
import type { Deps } from '../../deps.ts'
import { AppError } from '../../errors.ts'
import { StorageUnavailableError, type Store } from '../../storage/port.ts'
import type { Album } from '../../storage/port/albums.ts'
import type { AssetBlobRef } from '../../storage/port/lifecycle.ts'
import type { UploadSession } from '../../storage/port/uploads.ts'
import type { ChainSlot, CustodyBundle } from '../custody/receipts.ts'
import type { Caller } from '../context.ts'
import { presentBlobs } from '../uploads/uploads.service.ts'
import { checkEnvelopeShape, readEnvelope, strictBase64, type Envelope } from './envelope.ts'
import {
  appliedOutcome,
  assetTrashed,
  decodeManifest,
  ensureChain,
  ensureWriter,
  feedEntry,
  lifecycleWrite,
  lockForWrite,
  refuseInvalid,
  replayOf,
  sha256,
  staleRevival,
  type OpOutcome,
} from './write.ts'

/** Bytes the write stores as blobs besides the uploaded ones. */
interface ExtraBlob {
  readonly hash: string
  readonly bytes: Buffer
  readonly role: 'metadata' | 'provenance'
}

const bundleIncomplete = (detail: string) => new AppError('error.op.bundle_incomplete', detail)

/** Check 2 beyond the schema: the manifest bytes, the metadata bytes, the envelope's own fields. */
function decodeRequest(body: Static<typeof OpRequest>, albumId: string, caller: Caller) {
  const envelope = readEnvelope(body.manifest_envelope)
  checkEnvelopeShape(envelope, albumId, caller.userId)
  const manifest = decodeManifest(body.manifest_cbor)
  const metadataText = body.metadata_blob ?? null
  const metadata = metadataText === null ? null : strictBase64(metadataText)
  if (metadataText !== null && metadata === null) throw refuseInvalid('metadata_blob must be standard base64')
  return { envelope, manifest, metadata }
}

/**
 * Check 6: the bundle of this write is complete and consistent. Of several open sessions for
 * the same original, the newest whose blobs are all stored and whose suite the envelope names.
 */
async function findBundle(deps: Deps, caller: Caller, albumId: string, envelope: Envelope, metadata: Buffer | null, now: number): Promise<UploadSession> {
  const sessions = await deps.storage.findOpenSessionsForOriginal(caller.userId, albumId, envelope.ciphertext_hash, now)
  if (sessions.length === 0) throw bundleIncomplete('No open upload session of this album has ciphertext_hash as its original')
  const missing = await Promise.all(
    sessions.map(async (candidate) => {
      const present = await presentBlobs(deps, caller.userId, candidate.blobs)
      return candidate.blobs.filter((blob) => !present.has(blob.hash)).map((blob) => blob.hash)
    }),
  )
  const complete = sessions.filter((_, i) => missing[i]?.length === 0)
  if (complete.length === 0) {
    const lacking = missing[0] ?? []
    throw bundleIncomplete(`The newest session for this original still lacks ${lacking.length} blob(s): ${lacking.join(', ')}`)
  }
  const session = complete.find((candidate) => candidate.cryptoSuiteId === envelope.crypto_suite_id)
  if (session === undefined) throw bundleIncomplete('manifest_envelope.crypto_suite_id differs from the upload session’s')
  if ((metadata === null) !== (envelope.metadata_blob_hash === null)) {
    throw bundleIncomplete('metadata_blob must be present exactly when metadata_blob_hash is non-null')
  }
  if (metadata !== null && sha256(metadata) !== envelope.metadata_blob_hash)
    throw bundleIncomplete('The SHA-256 of metadata_blob differs from metadata_blob_hash')
  return session
}

/** The references of the new bundle: the session's blobs, then the metadata and the manifest. */
function bundleRefs(session: UploadSession, extras: readonly ExtraBlob[]): AssetBlobRef[] {
  return [
    ...session.blobs.map((blob) => ({ hash: blob.hash, role: blob.role, size: blob.size })),
    ...extras
      .filter((extra) => !session.blobs.some((blob) => blob.hash === extra.hash))
      .map((extra) => ({ hash: extra.hash, role: extra.role, size: extra.bytes.length })),
  ]
}

/** The write's transaction; `takeSlot` answers the write's chain slot, ready (see storeAndApply). */
async function writeAndIndex(
  tx: Store,
  caller: Caller,
  album: Album,
  envelope: Envelope,
  manifest: Buffer,
  manifestHash: string,
  session: UploadSession,
  extras: readonly ExtraBlob[],
  bundle: CustodyBundle,
  takeSlot: (tx: Store) => Promise<ChainSlot>,
  now: number,
): Promise<OpOutcome> {
  // Under the album lock the checks that a racing write could invalidate are made again.
  const replay = await lockForWrite(tx, album.albumId, manifestHash, now)
  if (replay !== undefined) return replay
  const asset = await tx.findAsset(envelope.file_id)
  await ensureWriter(tx, album.albumId, caller, asset)
  ensureChain(envelope, asset)
  // A replace of an asset in the trash would leave its waiting delete stale (decision 0059).
  if (asset !== undefined && (await tx.findTrashed(asset.assetId)) !== undefined) throw assetTrashed()
  if (!(await tx.closeUploadSession(session.uploadId, now))) throw bundleIncomplete('The upload session was closed meanwhile')

  const syncSeq = await tx.takeSyncSeq(album.albumId)
  await tx.recordOwnedBlobs(
    caller.userId,
    extras.map((extra) => ({ hash: extra.hash, size: extra.bytes.length })),
    now,
  )
  // A retention floor only rises: a later manifest cannot release what an earlier one promised to keep.
  const claimed = envelope.retention_until === null ? null : Date.parse(envelope.retention_until)
  const retentionUntil = claimed === null ? (asset?.retentionUntil ?? null) : Math.max(claimed, asset?.retentionUntil ?? claimed)
  const head = { assetId: envelope.file_id, chainHead: manifestHash, originalHash: envelope.ciphertext_hash, retentionUntil }
  const indexed = await tx.indexWrite(
    {
      asset: asset === undefined ? { created: { ...head, albumId: album.albumId, ownerId: caller.userId } } : { advanced: head },
      bundle: { ownerId: caller.userId, syncSeq, uploadId: session.uploadId, refs: bundle.blobs },
      op: feedEntry({ albumId: album.albumId, syncSeq, manifestHash, envelope, manifest, uploadId: session.uploadId, now }),
    },
    now,
  )
  // A create of the same id in another album (under another album's lock) may have won meanwhile.
  if (!indexed) throw staleRevival(null)
  // Last: on PostgreSQL the write waits here for the earlier slots' transactions, which must need no lock it holds.
  await (await takeSlot(tx)).append(tx)
  return appliedOutcome(envelope, syncSeq)
}

/** Puts the metadata bytes in the blob store (before the transaction: no fsync inside it). */
async function storeExtras(deps: Deps, caller: Caller, extras: readonly ExtraBlob[]): Promise<void> {
  const owned = await deps.storage.ownedBlobHashes(
    caller.userId,
    extras.map((extra) => extra.hash),
  )
  for (const extra of extras) {
    if (owned.has(extra.hash) && (await deps.blobs.size(extra.hash)) === extra.bytes.length) continue
    const outcome = await deps.blobs.put(extra.hash, extra.bytes.length, [extra.bytes])
    if (outcome.kind !== 'stored') throw new Error(`storing a ${extra.role} blob failed: ${outcome.detail}`)
  }
}

/**
 * After a failed transaction, the files this write put down that no row owns go again, unless
 * another writer has rewritten them since (their modification time moved past `storedAt`).
 */
async function dropUnownedExtras(deps: Deps, extras: readonly ExtraBlob[], storedAt: number): Promise<void> {
  const owned = await deps.storage.blobHashesStillNeeded(
    extras.map((extra) => extra.hash),
    deps.clock.now(),
  )
  for (const extra of extras) if (!owned.has(extra.hash)) await deps.blobs.remove(extra.hash, storedAt)
}

/** A failed first try that came back sooner than this met a dead connection, not an unreachable database. */
const DEAD_CONNECTION_MS = 1000
/** Long enough for the pool to see its dead connections closed and drop them. */
const RETRY_PAUSE_MS = 100

/**
 * Takes back the extras a failed write declared and stored. A connection cut under the write
 * cuts its idle neighbours too, and the pool may hand one out before it has seen it close: a
 * take-back that fails at once is tried once more. Past that (the database is unreachable) the
 * session's expiry and garbage collection remove both, and the write's own error stands.
 */
async function takeBackExtras(deps: Deps, uploadId: string, extras: readonly ExtraBlob[], storedAt: number): Promise<void> {
  const started = Date.now()
  for (let tries = 1; ; tries++) {
    try {
      await deps.storage.withdrawExtras(uploadId)
      await dropUnownedExtras(deps, extras, storedAt)
      return
    } catch (error) {
      const deadConnection = error instanceof StorageUnavailableError && Date.now() - started < DEAD_CONNECTION_MS
      if (tries > 1 || !deadConnection) {
        deps.log.warn({ err: error, uploadId }, "could not take back a failed write's extras: its session's expiry and garbage collection remove them")
        return
      }
      await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS))
    }
  }
}

/**
 * The lifecycle write (create or replace). `validate` checks the request body's shape; it runs
 * after the album check, as API.md orders them.
 */
export function applyLifecycleManifest(deps: Deps, caller: Caller, albumId: string, validate: () => Static<typeof OpRequest>): Promise<OpOutcome> {
  return lifecycleWrite(deps, caller, albumId, {
    decode: () => decodeRequest(validate(), albumId, caller),
    async check({ envelope, metadata }, _album, now) {
      // 6. Bundle.
      const session = await findBundle(deps, caller, albumId, envelope, metadata, now)
      // 7. Chain.
      ensureChain(envelope, await deps.storage.findAsset(envelope.file_id))
      return session
    },
    apply: ({ envelope, manifest, metadata, manifestHash }, session, album, now) =>
      storeAndApply(deps, caller, album, envelope, manifest, manifestHash, metadata, session, now),
    replayed: replayOf,
  })
}

/** The writes: the metadata blob's bytes first (no fsync inside the transaction), then the transaction. */
async function storeAndApply(
  deps: Deps,
  caller: Caller,
  album: Album,
  envelope: Envelope,
  manifest: Buffer,
  manifestHash: string,
  metadata: Buffer | null,
  session: UploadSession,
  now: number,
): Promise<OpOutcome> {
  const filed: ExtraBlob[] =
    metadata === null || envelope.metadata_blob_hash === null ? [] : [{ hash: envelope.metadata_blob_hash, bytes: metadata, role: 'metadata' }]
  const extras: ExtraBlob[] = [...filed, { hash: manifestHash, bytes: manifest, role: 'provenance' }]
  // Declared on the session before their bytes are stored: a collection running meanwhile keeps them.
  await deps.storage.declareExtras(
    session.uploadId,
    filed.map((extra) => extra.hash),
  )
  const bundle: CustodyBundle = { assetId: envelope.file_id, uploadId: session.uploadId, blobs: bundleRefs(session, extras), envelopeHash: manifestHash }
  let slot: ChainSlot | undefined
  const takeSlot = async (store: Store) => {
    slot ??= deps.receiptChain.reserve(deps, store, bundle)
    await slot.ready()
    return slot
  }
  let storedAt: number | undefined
  let written: OpOutcome
  try {
    // The slot is taken once the extras are stored: the later writes' receipts wait for this
    // write's transaction, never for its blob store (a slow bucket stalls this write alone).
    await storeExtras(deps, caller, filed)
    storedAt = Date.now()
    // SQLite runs its write transactions one at a time on its one write connection: the
    // receipts are signed before the transaction takes it. On PostgreSQL the slot is taken last
    // inside the transaction (see writeAndIndex); its signing still overlaps the earlier writes'
    // appends and commits.
    if (deps.storage.engine === 'sqlite') await takeSlot(deps.storage)
    const outcome = await deps.storage.transaction((tx) =>
      writeAndIndex(tx, caller, album, envelope, manifest, manifestHash, session, extras, bundle, takeSlot, now),
    )
    slot?.end(true)
    written = outcome
  } catch (error) {
    slot?.end(false)
    // What this write stored was written before `storedAt`, or before now when storing failed part-way.
    if (filed.length > 0) await takeBackExtras(deps, session.uploadId, filed, storedAt ?? Date.now())
    throw error
  }
  // Outside the try: the write has committed; waiting for its receipts never undoes it.
  await slot?.onChain()
  return written
}
