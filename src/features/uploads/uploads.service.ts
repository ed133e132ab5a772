// Upload sessions and blob bytes (API.md section 6): a session declares the bundle's blobs,
// the client sends only the ones the server does not already hold for it, and a lifecycle
// write then closes the session.
import { randomUUID } from 'node:crypto'
import type { Static } from 'typebox'
import type { OpenUploadRequest } from '../../contract/albums.ts'
import type { Deps } from '../../deps.ts'
import { refuseUpload, type UploadRefusal } from '../../domain/quota.ts'
import { liveCeremony } from '../../domain/upgrade.ts'
import { AppError } from '../../errors.ts'
import type { UploadBlob, UploadSession } from '../../storage/port.ts'
import { ownAlbum } from '../albums/albums.service.ts'
import type { Caller } from '../context.ts'
import { ensureNotSuspended } from '../moderation/moderation.service.ts'
import { checkEnvelopeProtocol, checkEnvelopeShape, readEnvelope } from '../lifecycle/envelope.ts'

export interface SessionView {
  readonly session: UploadSession
  /** Hashes of the declared blobs the caller already stores (bytes on disk). */
  readonly present: ReadonlySet<string>
}

const notFound = () => new AppError('error.not_found', 'No open upload session of this account has that id')

/** The declared blobs the caller already stores, with the bytes really on disk. */
export async function presentBlobs(deps: Deps, ownerId: string, blobs: readonly UploadBlob[]): Promise<Set<string>> {
  const owned = await deps.storage.ownedBlobHashes(ownerId, blobs.map((blob) => blob.hash))
  const onDisk = await Promise.all(blobs.filter((blob) => owned.has(blob.hash)).map(async (blob) => ((await deps.blobs.size(blob.hash)) === blob.size ? blob.hash : null)))
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
  const album = await ownAlbum(deps.storage, caller, body.album_id)
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
  return { session, present: await presentBlobs(deps, caller.userId, session.blobs) }
}

function quotaError(refusal: UploadRefusal): AppError {
  if (refusal.kind === 'too_many_uploads') {
    return new AppError('error.quota.too_many_uploads', `This account already has ${refusal.maxOpenUploads} open upload sessions; finish or abort one first`)
  }
  return new AppError('error.quota.exceeded', `This session would add ${refusal.requestedBytes} bytes to the ${refusal.usedBytes} stored and declared; the quota is ${refusal.quotaBytes}`, {
    extensions: { quota_bytes: refusal.quotaBytes, used_bytes: refusal.usedBytes, requested_bytes: refusal.requestedBytes },
  })
}

async function ownSession(deps: Deps, caller: Caller, uploadId: string): Promise<UploadSession> {
  const session = await deps.storage.findUploadSession(uploadId)
  if (session === undefined || session.ownerId !== caller.userId) throw notFound()
  return session
}

export async function uploadSessionStatus(deps: Deps, caller: Caller, uploadId: string): Promise<SessionView> {
  const session = await ownSession(deps, caller, uploadId)
  return { session, present: await presentBlobs(deps, caller.userId, session.blobs) }
}

/** Idempotent for the caller's own sessions; it stops counting in the album's in_flight. */
export async function abortUploadSession(deps: Deps, caller: Caller, uploadId: string): Promise<void> {
  await ownSession(deps, caller, uploadId)
  await deps.storage.transaction((tx) => tx.abandonUploadSession(uploadId, deps.clock.now()))
}

export type BlobReceipt = 'stored' | 'already_present'

/**
 * Streams one declared blob to the store, checking its SHA-256 and size on the way; bytes
 * that differ from the declaration are not kept (422).
 */
export async function putBlob(deps: Deps, caller: Caller, uploadId: string, hash: string, bytes: AsyncIterable<Uint8Array>, announcedLength?: number): Promise<BlobReceipt> {
  const now = deps.clock.now()
  const session = await ownSession(deps, caller, uploadId)
  ensureNotSuspended(caller)
  if (session.closedAt !== null || session.expiresAt <= now) throw notFound()
  const declared = session.blobs.find((blob) => blob.hash === hash)
  if (declared === undefined) throw new AppError('error.not_found', 'This upload session did not declare that hash')
  if ((await presentBlobs(deps, caller.userId, [declared])).has(hash)) return 'already_present'
  if (announcedLength !== undefined && announcedLength !== declared.size) {
    throw new AppError('error.upload.hash_mismatch', `Nothing was kept: Content-Length is ${announcedLength}, ${declared.size} bytes were declared`)
  }
  const outcome = await deps.blobs.put(hash, declared.size, bytes)
  if (outcome.kind === 'mismatch') throw new AppError('error.upload.hash_mismatch', `Nothing was kept: ${outcome.detail}`)
  await deps.storage.transaction((tx) => tx.recordOwnedBlobs(caller.userId, [{ hash, size: declared.size }], deps.clock.now()))
  return 'stored'
}
