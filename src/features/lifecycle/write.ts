// What every lifecycle write shares (API.md section 6), the ops operation's creates and replaces
// and asset deletion alike: checks 1 to 5 in their order, the replay answer (also for a request
// refused by a later check because its identical twin was applied meanwhile), the chain check,
// and the album lock that starts each write's transaction, under which the checks a racing
// write could invalidate are made again.
import { createHash } from 'node:crypto'
import type { Deps } from '../../deps.ts'
import { checkChain, type ChainFacts } from '../../domain/lifecycle-write.ts'
import { liveCeremony } from '../../domain/upgrade.ts'
import { AppError } from '../../errors.ts'
import type { Album, AlbumStore } from '../../storage/port/albums.ts'
import type { AppliedOp, Asset, LifecycleStore } from '../../storage/port/lifecycle.ts'
import type { MemberStore } from '../../storage/port/members.ts'
import { readOnly, writableAlbum } from '../albums/albums.service.ts'
import type { Caller } from '../context.ts'
import { ensureNotSuspended } from '../moderation/moderation.service.ts'
import { checkEnvelopeProtocol, strictBase64, type Envelope } from './envelope.ts'

export interface OpOutcome {
  readonly assetId: string
  readonly syncSeq: number
  readonly action: AppliedOp['action']
  readonly replayed: boolean
}

/** A request past check 2: its envelope read and its manifest decoded. */
export interface DecodedWrite {
  readonly envelope: Envelope
  readonly manifest: Buffer
}

export function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex')
}

export function refuseInvalid(detail: string): AppError {
  return new AppError('error.request.invalid', detail)
}

/** Check 2 for `manifest_cbor`: standard base64 of 1 byte or more. */
export function decodeManifest(text: string): Buffer {
  const manifest = strictBase64(text)
  if (manifest === null || manifest.length === 0) throw refuseInvalid('manifest_cbor must be standard base64 of 1 byte or more')
  return manifest
}

const upgradeInFlight = () => new AppError('error.upgrade.in_flight', 'An upgrade ceremony is in flight on this album; writes resume after it')

export function staleRevival(chainHead: string | null): AppError {
  return new AppError('error.op.stale_revival', 'The manifest does not continue the asset’s chain; fetch the head and re-sign', {
    extensions: chainHead === null ? {} : { chain_head: chainHead },
  })
}

/** An asset in the trash cannot be put there again under another delete, nor replaced (decision 0059). */
export function assetTrashed(): AppError {
  return new AppError('error.asset.trashed', 'The asset is in the trash; restore it first (DELETE …/trash), or delete it for good')
}

/** The chain check (check 7 of the ops operation), as a throw. */
export function ensureChain(envelope: Envelope, asset: ChainFacts | undefined): void {
  const verdict = checkChain(
    {
      action: envelope.action,
      albumId: envelope.album_id ?? '',
      priorProvenanceHash: envelope.prior_provenance_hash,
      originalBlobHash: envelope.original_blob_hash,
      ciphertextHash: envelope.ciphertext_hash,
    },
    asset,
  )
  if (verdict.kind === 'original_required') throw refuseInvalid(`manifest_envelope.original_blob_hash is required on a ${envelope.action}`)
  if (verdict.kind === 'stale') throw staleRevival(verdict.chainHead)
}

export function replayOf(applied: AppliedOp): OpOutcome {
  return { assetId: applied.assetId, syncSeq: applied.syncSeq, action: applied.action, replayed: true }
}

export interface WriteSteps<D extends DecodedWrite, P, R> {
  /** Check 2, shape: runs after check 1, as API.md orders them. */
  decode(): D
  /** The operation's checks after check 5 (each a throw); what they find goes to `apply`. */
  check(request: D, album: Album, now: number): Promise<P>
  /** Writes, in one transaction that starts with lockForWrite. */
  apply(request: D & { readonly manifestHash: string }, found: P, album: Album, now: number): Promise<R>
  /** The answer when this manifest was applied already (check 3): replayOf, for the writes that apply it. */
  replayed(applied: AppliedOp): R
}

/**
 * A lifecycle write: 1. the caller may write the album (and is not suspended); 2. shape;
 * 3. a replay answers the first application, writing nothing; 4. protocol range; 5. no upgrade
 * window; then the operation's own checks, and its writes.
 */
export async function lifecycleWrite<D extends DecodedWrite, P, R>(deps: Deps, caller: Caller, albumId: string, steps: WriteSteps<D, P, R>): Promise<R> {
  // 1. The caller may write the album: its owner, or a contributor (decision 0067).
  const { album } = await writableAlbum(deps.storage, caller, albumId)
  ensureNotSuspended(caller)
  // 2. Shape.
  const request = steps.decode()
  // 3. Replay: the first application's answer, writing nothing.
  const manifestHash = sha256(request.manifest)
  const applied = await deps.storage.findAppliedOp(albumId, manifestHash)
  if (applied !== undefined) return steps.replayed(applied)
  const now = deps.clock.now()
  let found: P
  try {
    // 4. Protocol.
    checkEnvelopeProtocol(deps, request.envelope, album)
    // 5. Upgrade window.
    if (liveCeremony(album.upgrade, now) !== null) throw upgradeInFlight()
    found = await steps.check(request, album, now)
  } catch (error) {
    // An identical request applied since check 3 (its session now closed, its asset now
    // existing or deleted) makes this one a replay, and check 3 answers before the others.
    const appliedMeanwhile = error instanceof AppError ? await deps.storage.findAppliedOp(albumId, manifestHash) : undefined
    if (appliedMeanwhile !== undefined) return steps.replayed(appliedMeanwhile)
    throw error
  }
  return steps.apply({ ...request, manifestHash }, found, album, now)
}

/**
 * First in a write's transaction: takes the album lock (writes to one album queue on it) and
 * makes again the checks a racing write could have invalidated since: the album is there, the
 * manifest not applied (then its replay answer, to return as is), no upgrade window.
 */
export async function lockForWrite(tx: AlbumStore & LifecycleStore, albumId: string, manifestHash: string, now: number): Promise<OpOutcome | undefined> {
  const locked = await tx.lockAlbum(albumId)
  if (locked === undefined) throw new AppError('error.not_found', 'No album of this account has that id')
  const replay = await tx.findAppliedOp(albumId, manifestHash)
  if (replay !== undefined) return replayOf(replay)
  if (liveCeremony(locked.upgrade, now) !== null) throw upgradeInFlight()
  return undefined
}

/**
 * Under the album lock (after lockForWrite): the caller may still write the album (a removal
 * committed before the lock was taken counts: removing a member takes the lock too), and a
 * contributor changes only the assets it created (`asset`: the one a replace or a delete
 * continues; none for a create). The owner changes any asset of its album.
 */
export async function ensureWriter(tx: MemberStore, albumId: string, caller: Caller, asset: Asset | undefined): Promise<void> {
  const access = await tx.albumAccess(albumId, caller.userId)
  if (access === undefined) throw new AppError('error.not_found', 'No album this account may write has that id')
  if (access.role === 'viewer') throw readOnly()
  if (access.role === 'contributor' && asset !== undefined && asset.ownerId !== caller.userId)
    throw new AppError('error.member.not_creator', 'A contributor replaces and deletes only the photos it added; the album’s owner changes any')
}

export interface FeedEntry {
  readonly albumId: string
  readonly syncSeq: number
  readonly manifestHash: string
  readonly envelope: Envelope
  readonly manifest: Buffer
  readonly uploadId: string | null
  readonly now: number
}

/** The write's feed entry, at the `sync_seq` it took. */
export function feedEntry(entry: FeedEntry): AppliedOp {
  const { envelope } = entry
  return {
    albumId: entry.albumId,
    syncSeq: entry.syncSeq,
    manifestHash: entry.manifestHash,
    assetId: envelope.file_id,
    action: envelope.action,
    manifestCbor: entry.manifest,
    metadataBlobHash: envelope.metadata_blob_hash,
    uploadId: entry.uploadId,
    appliedAt: entry.now,
  }
}

/** The answer of a write applied at `syncSeq`. */
export function appliedOutcome(envelope: Envelope, syncSeq: number): OpOutcome {
  return { assetId: envelope.file_id, syncSeq, action: envelope.action, replayed: false }
}

/** The write's feed entry (in its transaction), and its answer. */
export async function appendToFeed(tx: LifecycleStore, entry: FeedEntry): Promise<OpOutcome> {
  await tx.insertAppliedOp(feedEntry(entry))
  return appliedOutcome(entry.envelope, entry.syncSeq)
}
