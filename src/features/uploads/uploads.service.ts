// Upload sessions and blob bytes (API.md section 6): a session declares the bundle's blobs,
// the client sends only the ones the server does not already hold for it, and a lifecycle
// write then closes the session.
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import type { Static } from 'typebox'
import type { OpenUploadRequest } from '../../contract/albums.ts'
import type { PutOutcome } from '../../blob-store/port.ts'
import type { Deps } from '../../deps.ts'
import { refuseUpload, type UploadRefusal } from '../../domain/quota.ts'
import { liveCeremony } from '../../domain/upgrade.ts'
import { AppError } from '../../errors.ts'
import type { UploadBlob, UploadPart, UploadSession } from '../../storage/port/uploads.ts'
import { writableAlbum } from '../albums/albums.service.ts'
import { ensureWriter } from '../lifecycle/write.ts'
import type { Caller } from '../context.ts'
import { ensureNotSuspended } from '../moderation/moderation.service.ts'
import { checkEnvelopeProtocol, checkEnvelopeShape, readEnvelope } from '../lifecycle/envelope.ts'

export interface SessionView {
  readonly session: UploadSession
  /** Hashes of the declared blobs the caller already stores (bytes on disk). */
  readonly present: ReadonlySet<string>
  /** By hash, the bytes the server holds of each declared blob (see `receivedOf`). */
  readonly received: ReadonlyMap<string, number>
}

/** A part that does not end its blob must be at least this long (decision 0034). */
export const UPLOAD_PART_MIN_BYTES = 1024 * 1024

/** One part of a blob: bytes `start` to `end` (inclusive) of `total` (a request's Content-Range). */
export interface PartRange {
  readonly start: number
  readonly end: number
  readonly total: number
}

/** The parts that follow each other from offset 0 (the ones the blob is assembled from), and where they end. */
export function contiguousParts(parts: readonly UploadPart[]): { readonly chain: UploadPart[]; readonly end: number } {
  const chain: UploadPart[] = []
  let end = 0
  for (const part of parts) {
    if (part.offset !== end) break
    chain.push(part)
    end += part.size
  }
  return { chain, end }
}

/**
 * The bytes the server holds of each declared blob: its size when present, else where its
 * contiguous recorded parts from 0 end, else 0.
 */
async function receivedOf(deps: Deps, session: UploadSession, present: ReadonlySet<string>): Promise<Map<string, number>> {
  const parts = await deps.storage.uploadParts(session.uploadId)
  return new Map(
    session.blobs.map((blob) => [blob.hash, present.has(blob.hash) ? blob.size : contiguousParts(parts.filter((part) => part.hash === blob.hash)).end]),
  )
}

async function sessionView(deps: Deps, session: UploadSession): Promise<SessionView> {
  const present = await presentBlobs(deps, session.ownerId, session.blobs)
  return { session, present, received: await receivedOf(deps, session, present) }
}

const notFound = () => new AppError('error.not_found', 'No open upload session of this account has that id')

/** The declared blobs the caller already stores, with the bytes really on disk. */
export async function presentBlobs(deps: Deps, ownerId: string, blobs: readonly UploadBlob[]): Promise<Set<string>> {
  const owned = await deps.storage.ownedBlobHashes(
    ownerId,
    blobs.map((blob) => blob.hash),
  )
  const onDisk = await Promise.all(
    blobs.filter((blob) => owned.has(blob.hash)).map(async (blob) => ((await deps.blobs.size(blob.hash)) === blob.size ? blob.hash : null)),
  )
  return new Set(onDisk.filter((hash) => hash !== null))
}

function checkDeclaration(deps: Deps, body: Static<typeof OpenUploadRequest>): void {
  const refuse = (detail: string) => new AppError('error.request.invalid', detail)
  if (!deps.config.cryptoSuites.includes(body.crypto_suite_id)) throw refuse(`crypto_suite_id must be one of ${deps.config.cryptoSuites.join(', ')}`)
  const originals = body.blobs.filter((blob) => blob.role === 'original')
  if (originals.length !== 1 || originals[0]?.hash !== body.ciphertext_hash) throw refuse('blobs must hold exactly one original, the one ciphertext_hash names')
  if (new Set(body.blobs.map((blob) => blob.hash)).size !== body.blobs.length) throw refuse('each blob hash may be declared once')
  const tooLarge = body.blobs.find((blob) => blob.size > deps.config.maxBlobBytes)
  if (tooLarge) throw refuse(`a blob may be at most ${deps.config.maxBlobBytes} bytes; ${tooLarge.hash} declares ${tooLarge.size}`)
}

export async function openUploadSession(deps: Deps, caller: Caller, body: Static<typeof OpenUploadRequest>): Promise<SessionView> {
  const { album } = await writableAlbum(deps.storage, caller, body.album_id)
  ensureNotSuspended(caller)
  if (!(await deps.storage.hasDirectory(caller.userId))) {
    throw new AppError('error.directory.required', 'Publish a device directory before uploading')
  }
  checkDeclaration(deps, body)
  const envelope = body.manifest_envelope === undefined ? null : readEnvelope(body.manifest_envelope)
  if (envelope !== null) {
    checkEnvelopeShape(envelope, body.album_id, caller.userId)
    if (envelope.ciphertext_hash !== body.ciphertext_hash || envelope.crypto_suite_id !== body.crypto_suite_id) {
      throw new AppError('error.request.invalid', 'manifest_envelope must name the same ciphertext_hash and crypto_suite_id as the session')
    }
    checkEnvelopeProtocol(deps, envelope, album)
  }
  const now = deps.clock.now()
  const session: UploadSession = {
    uploadId: randomUUID(),
    ownerId: caller.userId,
    albumId: body.album_id,
    cryptoSuiteId: body.crypto_suite_id,
    ciphertextHash: body.ciphertext_hash,
    createdAt: now,
    expiresAt: now + deps.config.uploadSessionTtlS * 1000,
    closedAt: null,
    blobs: body.blobs,
  }
  await deps.storage.transaction(async (tx) => {
    // The album lock orders this against an upgrade start or commit.
    const locked = await tx.lockAlbum(body.album_id)
    if (locked === undefined || liveCeremony(locked.upgrade, now) !== null) {
      throw new AppError('error.upgrade.in_flight', 'An upgrade ceremony is in flight on this album; uploads resume after it')
    }
    // A contributor removed before the lock was taken uploads nothing more (decision 0067).
    await ensureWriter(tx, body.album_id, caller, undefined)
    // Against the album as locked: a commit just before this may have raised its version.
    if (envelope !== null) checkEnvelopeProtocol(deps, envelope, locked)
    // The account's storage lock orders this against its other opens, on every instance: each
    // measures the usage with every session opened before it. A refusal rolls the insert back.
    await tx.lockStorageUsage(caller.userId)
    await tx.insertUploadSession(session)
    const { usage, addedBytes } = await tx.storageUsageWithUpload(caller.userId, session.uploadId, now)
    const refusal = refuseUpload({ ...usage, addedBytes }, deps.config.storageQuota)
    if (refusal !== null) throw quotaError(refusal)
  })
  return sessionView(deps, session)
}

function quotaError(refusal: UploadRefusal): AppError {
  if (refusal.kind === 'too_many_uploads') {
    return new AppError('error.quota.too_many_uploads', `This account already has ${refusal.maxOpenUploads} open upload sessions; finish or abort one first`)
  }
  return new AppError(
    'error.quota.exceeded',
    `This session would add ${refusal.requestedBytes} bytes to the ${refusal.usedBytes} stored and declared; the quota is ${refusal.quotaBytes}`,
    {
      extensions: { quota_bytes: refusal.quotaBytes, used_bytes: refusal.usedBytes, requested_bytes: refusal.requestedBytes },
    },
  )
}

async function ownSession(deps: Deps, caller: Caller, uploadId: string): Promise<UploadSession> {
  const session = await deps.storage.findUploadSession(uploadId)
  if (session === undefined || session.ownerId !== caller.userId) throw notFound()
  return session
}

export async function uploadSessionStatus(deps: Deps, caller: Caller, uploadId: string): Promise<SessionView> {
  return sessionView(deps, await ownSession(deps, caller, uploadId))
}

/** Idempotent for the caller's own sessions; it stops counting in the album's in_flight. */
export async function abortUploadSession(deps: Deps, caller: Caller, uploadId: string): Promise<void> {
  await ownSession(deps, caller, uploadId)
  await deps.storage.transaction((tx) => tx.abandonUploadSession(uploadId, deps.clock.now()))
}

export type BlobReceipt = 'stored' | 'already_present'

/** The declared blob `hash` of the caller's session, which must be open, and the session. */
async function openDeclaration(
  deps: Deps,
  caller: Caller,
  uploadId: string,
  hash: string,
): Promise<{ readonly session: UploadSession; readonly declared: UploadBlob }> {
  const session = await ownSession(deps, caller, uploadId)
  ensureNotSuspended(caller)
  if (session.closedAt !== null || session.expiresAt <= deps.clock.now()) throw notFound()
  const declared = session.blobs.find((blob) => blob.hash === hash)
  if (declared === undefined) throw new AppError('error.not_found', 'This upload session did not declare that hash')
  return { session, declared }
}

async function recordStored(deps: Deps, caller: Caller, declared: UploadBlob): Promise<void> {
  await deps.storage.transaction((tx) => tx.recordOwnedBlobs(caller.userId, [{ hash: declared.hash, size: declared.size }], deps.clock.now()))
}

/**
 * Streams one declared blob to the store, checking its SHA-256 and size on the way; bytes
 * that differ from the declaration are not kept (422).
 */
export async function putBlob(
  deps: Deps,
  caller: Caller,
  uploadId: string,
  hash: string,
  bytes: AsyncIterable<Uint8Array>,
  announcedLength?: number,
): Promise<BlobReceipt> {
  const { declared } = await openDeclaration(deps, caller, uploadId, hash)
  if ((await presentBlobs(deps, caller.userId, [declared])).has(hash)) return 'already_present'
  if (announcedLength !== undefined && announcedLength !== declared.size) {
    throw new AppError('error.upload.hash_mismatch', `Nothing was kept: Content-Length is ${announcedLength}, ${declared.size} bytes were declared`)
  }
  const outcome = await deps.blobs.put(hash, declared.size, bytes)
  if (outcome.kind === 'mismatch') throw new AppError('error.upload.hash_mismatch', `Nothing was kept: ${outcome.detail}`)
  await recordStored(deps, caller, declared)
  return 'stored'
}

function offsetMismatch(received: number): AppError {
  return new AppError('error.upload.offset_mismatch', `The server holds the first ${received} bytes of this blob; send the part that starts there`, {
    extensions: { received },
  })
}

function partMismatch(detail: string): AppError {
  return new AppError('error.upload.hash_mismatch', `This part was not kept: ${detail}`)
}

/** `bytes`, checked to be `length` long and, when `sha256` is given, to hash to it: a part that is not fails the stream reading it. */
async function* checkedPart(bytes: AsyncIterable<Uint8Array>, length: number, sha256: string | undefined): AsyncGenerator<Uint8Array> {
  const digest = createHash('sha256')
  let received = 0
  for await (const chunk of bytes) {
    received += chunk.length
    if (received > length) throw partMismatch(`more than the ${length} bytes of its range arrived`)
    digest.update(chunk)
    yield chunk
  }
  if (received !== length) throw partMismatch(`${received} bytes arrived, its range has ${length}`)
  if (sha256 !== undefined && digest.digest('hex') !== sha256) throw partMismatch('the SHA-256 of its bytes differs from Content-Digest')
}

/** The recorded parts in order, then the last part: the blob's bytes. */
async function* assembled(
  deps: Deps,
  uploadId: string,
  hash: string,
  chain: readonly UploadPart[],
  last: AsyncIterable<Uint8Array>,
): AsyncGenerator<Uint8Array> {
  for (const part of chain) yield* await deps.blobs.openPart(uploadId, hash, part.name)
  yield* last
}

/** Forgets the blob's parts: their rows, then their files. */
async function dropParts(deps: Deps, uploadId: string, hash: string): Promise<void> {
  await deps.storage.deleteUploadParts(uploadId, hash)
  await deps.blobs.removeParts(uploadId, hash)
}

/**
 * Records the owned blob `named` and, in the same transaction, renames the session's declaration
 * of `provisional` to it (decision 0034, a blob named at its last part): garbage collection never
 * finds the row without the declaration. False when neither the declaration was renamed here nor
 * the session declares `named` already (renamed by a request racing this one): the session is gone.
 */
async function recordRenamed(deps: Deps, caller: Caller, uploadId: string, provisional: string, named: UploadBlob): Promise<boolean> {
  return deps.storage.transaction(async (tx) => {
    const renamed = await tx.renameDeclaredBlob(uploadId, provisional, named.hash)
    await tx.recordOwnedBlobs(caller.userId, [{ hash: named.hash, size: named.size }], deps.clock.now())
    return renamed || ((await tx.findUploadSession(uploadId))?.blobs.some((blob) => blob.hash === named.hash) ?? false)
  })
}

/** What the server holds of a blob after one of its parts: how many bytes, and the hash it is (to be) stored under. */
export interface PartReceipt {
  readonly received: number
  readonly hash: string
}

/**
 * One part of a declared blob (decision 0034): a part that does not end the blob is kept, durable,
 * in the store's parts namespace and recorded; the part that ends it is streamed, after the
 * recorded parts in order, into the blob's ordinary put. `checks.named`, on the part that ends
 * the blob, is the whole blob's SHA-256 (Repr-Digest): other than `hash`, `hash` was a
 * provisional name, and the blob is stored and declared under `named` instead. Answers how many
 * bytes of the blob the server now holds (the answer's Upload-Offset) and its hash.
 */
export async function putBlobPart(
  deps: Deps,
  caller: Caller,
  uploadId: string,
  hash: string,
  range: PartRange,
  bytes: AsyncIterable<Uint8Array>,
  checks: { readonly announcedLength: number | undefined; readonly sha256: string | undefined; readonly named: string | undefined },
): Promise<PartReceipt> {
  const { session, declared } = await openDeclaration(deps, caller, uploadId, hash)
  const receipt = (received: number, stored = hash): PartReceipt => ({ received, hash: stored })
  if (range.total !== declared.size) {
    throw new AppError('error.upload.hash_mismatch', `Nothing was kept: Content-Range names a blob of ${range.total} bytes, ${declared.size} were declared`)
  }
  const isPresent = async () => (await presentBlobs(deps, caller.userId, [declared])).has(hash)
  if (await isPresent()) return receipt(declared.size)
  const { chain, end: received } = contiguousParts(await deps.storage.uploadParts(uploadId, hash))
  if (range.start !== received) throw offsetMismatch(received)
  const length = range.end - range.start + 1
  const last = range.end === range.total - 1
  if (!last && length < UPLOAD_PART_MIN_BYTES) {
    throw new AppError('error.request.invalid', `A part that does not end the blob must be at least ${UPLOAD_PART_MIN_BYTES} bytes; this one has ${length}`)
  }
  if (checks.announcedLength !== undefined && checks.announcedLength !== length) {
    throw partMismatch(`Content-Length is ${checks.announcedLength}, its range has ${length} bytes`)
  }
  if (!last) {
    // Never shared by two writers: a loser of the race for this offset removes only its own file.
    const name = `${range.start}-${randomBytes(8).toString('hex')}`
    const outcome = await deps.blobs.putPart(uploadId, hash, name, length, bytes, checks.sha256)
    if (outcome.kind === 'mismatch') throw partMismatch(outcome.detail)
    if (!(await deps.storage.insertUploadPart({ uploadId, hash, offset: range.start, size: length, name, createdAt: deps.clock.now() }))) {
      await deps.blobs.removePart(uploadId, hash, name)
      // Lost to another writer of this offset, or the session went meanwhile (404).
      await openDeclaration(deps, caller, uploadId, hash)
      throw offsetMismatch(contiguousParts(await deps.storage.uploadParts(uploadId, hash)).end)
    }
    return receipt(range.end + 1)
  }
  const named: UploadBlob = { ...declared, hash: checks.named ?? hash }
  if (named.hash !== hash && session.blobs.some((blob) => blob.hash === named.hash)) {
    throw new AppError('error.request.invalid', 'Repr-Digest names a blob this session declares already; nothing was read, the parts received so far stay')
  }
  // Stored and declared under `named` (by this request, or by another one ending the same blob).
  const storedAsNamed = async () =>
    (await presentBlobs(deps, caller.userId, [named])).has(named.hash) &&
    ((await deps.storage.findUploadSession(uploadId))?.blobs.some((blob) => blob.hash === named.hash) ?? false)
  let outcome: PutOutcome
  try {
    outcome = await deps.blobs.put(named.hash, declared.size, assembled(deps, uploadId, hash, chain, checkedPart(bytes, length, checks.sha256)))
  } catch (error) {
    // Another request ending the same blob stored it first (and dropped the parts this one read).
    if (!(error instanceof AppError) && (await storedAsNamed())) return receipt(declared.size, named.hash)
    throw error
  }
  if (outcome.kind === 'mismatch') {
    await dropParts(deps, uploadId, hash)
    throw new AppError(
      'error.upload.hash_mismatch',
      `Nothing was kept, and the parts received so far are dropped: send the blob again from its start (${outcome.detail})`,
    )
  }
  if (named.hash === hash) await recordStored(deps, caller, declared)
  else if (!(await recordRenamed(deps, caller, uploadId, hash, named))) throw notFound()
  await dropParts(deps, uploadId, hash)
  return receipt(declared.size, named.hash)
}
