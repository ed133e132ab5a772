// The upload of one file into an album: backupFile, and replaceFile's new version (edits.ts),
// on client format v1 and the SDK (docs/client-library.md). Browser-safe: no node: module.
//
// Two passes: the server wants the original's SHA-256 and size before it takes the bytes
// (the upload session declares them, the blob's URL names the hash), and the SDK's uploadAsset
// holds every blob in memory. So backupFile reads the source twice, with one file key and one
// stream salt picked up front: pass 1 encrypts to hash and count the ciphertext (the bytes are
// dropped), pass 2 encrypts again — the same key, salt and plaintext give the same bytes — and
// streams them to the server. Only pass 2's ciphertext leaves the device, so no GCM nonce is
// ever seen with two plaintexts even if the file changed in between; a change is caught by the
// size and hash checks (and by the server, which refuses a blob whose hash is not its URL's).
// A source held in memory (node/files.ts) makes both passes over the same bytes, read once from
// disk, and tells its hash up front (FileSource.digest): its keys then follow from its content
// (format/content.ts), so the same photo in two albums is one encrypted original. A large source
// streamed from disk makes one pass instead (decision 0034): the session declares its original
// under a provisional name, the parts are sent as the file is read, and the last part names the
// blob; unless BackupOptions.hashFirst asks for the two passes.
import { sha256 } from '@noble/hashes/sha2.js'
import { equalBytes, fromHex, toHex } from '../sdk/bytes.ts'
import { CofferProblem, type CofferClient, type UploadSessionView } from '../sdk/client.ts'
import { buildLifecycleWrite } from '../sdk/manifest.ts'
import { randomBytes } from './format/bytes.ts'
import { contentKeys, contentMacOf } from './format/content.ts'
import { assetIdFor } from './format/ids.ts'
import { deriveAlbumKey, GCM_TAG_BYTES, generateFileKey } from './format/keys.ts'
import { sealMetadata, type AssetMetadata } from './format/metadata.ts'
import { openResumePoint, sealResumePoint, type ResumePoint, type SealedDerivative } from './format/resume.ts'
import { ciphertextSize, DEFAULT_CHUNK_SIZE, encryptBytes, encryptStream, HEADER_BYTES, SALT_BYTES } from './format/stream.ts'
import {
  CLIENT_VERSION, CRYPTO_SUITE_V1, FileTransferError, portableSha256, reasonOf, staleRevival, Tap,
  type BackupOptions, type BackupResult, type BackupTarget, type ChainHead, type FileSource, type MediaFacts, type ResumeStore, type Sha256Hasher,
} from './files.ts'
import { knownVersion, pinnedVersion, upgradeInFlight, waitForUpgrade, writeWithProtocol } from './protocol.ts'
import { transientFailure } from './retry.ts'

async function drain(source: AsyncIterable<Uint8Array>): Promise<void> {
  for await (const _ of source);
}

async function albumProtocol(target: BackupTarget): Promise<string> {
  if (target.protocolVersion !== undefined) return target.protocolVersion
  const found = (await target.client.listAlbums()).albums.find((a) => a.album_id === target.albumId)
  if (found === undefined) throw new Error(`album ${target.albumId} is not one of this account's`)
  return found.protocol_version
}

const NO_FACTS: MediaFacts = { captured: null, width: null, height: null, derivatives: [] }

/**
 * Backs up one file as an asset of the album: hashes and encrypts it (pass 1), and unless the
 * album already holds its content, encrypts derivatives, streams the original again (pass 2)
 * and the derivatives to an upload session, and applies a signed `create` manifest (key_mode
 * "wrapped") carrying the metadata blob. A 426 or an upgrade window on the way is carried out
 * (protocol.ts). Throws FileTransferError naming the file.
 */
export function backupFile(target: BackupTarget, source: FileSource, options: BackupOptions = {}): Promise<BackupResult> {
  return storeFile(target, source, options, { action: 'create' })
}

/** How storeFile writes: a new asset (its id from its content), or a new version of an existing one. */
export type Lifecycle =
  | { readonly action: 'create' }
  | {
      readonly action: 'replace'
      readonly assetId: string
      readonly head: ChainHead
      /** The asset's current plaintext SHA-256 (hex) when the caller knows it: the same content again is not sent (answers `present`). */
      readonly currentContentHash?: string
      /** Reads the chain head again, after a 409 stale_revival (someone wrote the asset meanwhile). */
      readonly reread: () => Promise<ChainHead>
    }

/**
 * Ciphertext bytes per part of an original sent in parts (about 8 MiB; whole chunks): an
 * original larger than one part goes in parts, so that an interrupted upload continues from the
 * last part the server stored rather than from the start (the server keeps parts of open
 * sessions; PUT with Content-Range, docs/client-library.md, "Resume inside a file").
 */
export const UPLOAD_PART_BYTES = 8 * 1024 * 1024

/** The stream's chunk that begins at ciphertext byte `start` (a part's start); throws when `start` is not where a chunk begins. */
function chunkAt(start: number, chunkSize: number): number {
  if (start === 0) return 0
  const chunk = (start - HEADER_BYTES) / (chunkSize + GCM_TAG_BYTES)
  if (!Number.isInteger(chunk) || chunk < 0) throw new Error(`the server holds ${start} bytes of the original, which is not where a chunk begins`)
  return chunk
}

/** Where the part that starts at ciphertext byte `start` ends (exclusive): whole chunks, about UPLOAD_PART_BYTES on, or the end. */
export function partEnd(start: number, total: number, chunkSize: number): number {
  const sealedChunk = chunkSize + GCM_TAG_BYTES
  return Math.min(total, HEADER_BYTES + (chunkAt(start, chunkSize) + Math.max(1, Math.floor(UPLOAD_PART_BYTES / sealedChunk))) * sealedChunk)
}

/**
 * Cuts a ciphertext stream that starts at byte `start` of `total` into the parts partEnd draws.
 * Every part is a view of one buffer, filled again for the next part: the caller is done with a
 * part (it was sent) before it asks for the next. A buffer per part would be 8 MiB of garbage
 * each time, which V8 frees only in a full collection.
 */
async function* partsOf(ciphertext: AsyncIterable<Uint8Array>, start: number, total: number, chunkSize: number): AsyncGenerator<{ readonly start: number; readonly bytes: Uint8Array }> {
  let at = start
  // Nothing to send when the server holds it all (a one-pass upload that only hashes the file again).
  let end = at < total ? partEnd(at, total, chunkSize) : total
  // The first part of a stream is the longest (it has the header).
  const buffer = new Uint8Array(Math.min(total, partEnd(0, total, chunkSize)))
  let filled = 0
  for await (const piece of ciphertext) {
    for (let rest = piece; rest.length > 0; ) {
      if (at === total) throw new Error(`encrypted to more than the expected ${total} bytes`)
      const used = Math.min(rest.length, end - at - filled)
      buffer.set(rest.subarray(0, used), filled)
      filled += used
      rest = rest.subarray(used)
      if (at + filled === end) {
        yield { start: at, bytes: buffer.subarray(0, filled) }
        at = end
        if (at < total) end = partEnd(at, total, chunkSize)
        filled = 0
      }
    }
  }
  if (at !== total) throw new Error(`encrypted to ${at + filled} bytes, expected ${total}`)
}

/** `stream` without its first `count` bytes (read all the same: a pass that hashes what it does not send). */
async function* dropFirst(stream: AsyncIterable<Uint8Array>, count: number): AsyncGenerator<Uint8Array> {
  let left = count
  for await (const piece of stream) {
    if (left >= piece.length) left -= piece.length
    else {
      yield left === 0 ? piece : piece.subarray(left)
      left = 0
    }
  }
}

/**
 * Sends an original's parts from byte `start` on. A part the server stored though its answer was
 * lost (the request was sent again) is refused as already received: the server is past it, and
 * that is the answer that was lost.
 */
async function sendParts(
  client: CofferClient,
  uploadId: string,
  hash: string,
  parts: AsyncIterable<{ readonly start: number; readonly bytes: Uint8Array }>,
  total: number,
  hasher: Sha256Hasher = portableSha256,
  blobDigest?: () => Uint8Array,
): Promise<void> {
  for await (const part of parts) {
    const end = part.start + part.bytes.length
    const digest = hasher()
    digest.update(part.bytes)
    try {
      await client.putBlobPart(uploadId, hash, part.start, total, part.bytes, { digest: digest.digest(), ...(end === total && blobDigest !== undefined ? { blobDigest: blobDigest() } : {}) })
    } catch (error) {
      if (!(error instanceof CofferProblem && error.code === 'error.upload.offset_mismatch' && Number(error.headers.get('upload-offset')) === end)) throw error
    }
  }
}

/** A resumed session that would expire sooner than this is not continued: a new one is opened. */
const RESUME_MARGIN_MS = 10 * 60 * 1000

/** A resume point opened, with its session. */
type Resumed = ResumePoint & { readonly uploadId: string }

/**
 * The resume point stored for this file, when it opens and still describes it (the same chunk
 * size and size; a source held in memory, the same content: a point of a one-pass upload, whose
 * content is not known, does not fit one). One that does not is dropped, and
 * its session aborted.
 */
async function resumedUpload(target: BackupTarget, source: FileSource, store: ResumeStore | undefined): Promise<Resumed | null> {
  const stored = await store?.load()
  if (store === undefined || stored === null || stored === undefined) return null
  const chunkSize = target.chunkSize ?? DEFAULT_CHUNK_SIZE
  const point = await openResumePoint(target.masterKey, stored.uploadId, stored.sealed).catch(() => null)
  const content = point === null ? undefined : await source.digest?.()
  if (point !== null && point.chunkSize === chunkSize && point.ciphertextSize === ciphertextSize(source.size, chunkSize) && (content === undefined || (point.contentHash !== null && equalBytes(content, point.contentHash)))) {
    return { ...point, uploadId: stored.uploadId }
  }
  await target.client.abortUploadSession(stored.uploadId).catch(() => {})
  await store.clear()
  return null
}

/** An answer saying the upload cannot go on as it was: its session ended, or the server refused the bytes sent from a resume point. */
function uploadRefused(error: unknown): boolean {
  for (let at: unknown = error, depth = 0; at instanceof Error && depth < 5; at = at.cause, depth++) {
    if (at instanceof StaleResumePoint) return true
    if (at instanceof CofferProblem) return at.code === 'error.not_found' || at.code === 'error.upload.hash_mismatch' || at.code === 'error.upload.offset_mismatch'
  }
  return false
}

/**
 * backupFile's work, for a `create` or a `replace` (replaceFile in edits.ts). With a resume
 * store, an original sent in parts continues from what the server holds of it; a resume point
 * the server then refuses (its session ended, or the bytes are not what it said) is dropped and
 * the file sent again from the start, once.
 */
export async function storeFile(target: BackupTarget, source: FileSource, options: BackupOptions, lifecycle: Lifecycle): Promise<BackupResult> {
  const resumed = await resumedUpload(target, source, options.resume)
  try {
    return await storeFileFrom(target, source, options, lifecycle, resumed)
  } catch (error) {
    if (resumed === null || !uploadRefused(error)) throw error
    return storeFileFrom(target, source, options, lifecycle, null)
  }
}

/** A file's two hashes: of its plaintext (the asset id, the content mac) and of its encrypted original (the blob's name). */
interface Hashes {
  readonly content: Uint8Array
  readonly ciphertextHash: string
}

/** A resume point that no longer holds: the file is not what the interrupted upload sent. storeFile starts it again. */
class StaleResumePoint extends Error {
  override readonly name = 'StaleResumePoint'
}

async function storeFileFrom(target: BackupTarget, source: FileSource, options: BackupOptions, lifecycle: Lifecycle, resumed: Resumed | null): Promise<BackupResult> {
  const chunkSize = target.chunkSize ?? DEFAULT_CHUNK_SIZE
  const amkVersion = target.amkVersion ?? 1
  const knownContent = resumed === null ? await source.digest?.() : undefined
  const derived = knownContent === undefined ? null : await contentKeys(target.masterKey, knownContent, chunkSize)
  const fileKey = resumed?.fileKey ?? derived?.fileKey ?? generateFileKey()
  const salt = resumed?.salt ?? derived?.salt ?? randomBytes(SALT_BYTES)
  // The original's ciphertext from chunk `firstChunk` on, the plaintext read from where that chunk begins.
  const encrypt = (plain: Tap, firstChunk = 0): AsyncGenerator<Uint8Array> =>
    encryptStream(fileKey, plain.through(source.open(firstChunk * chunkSize)), { role: 'original', chunkSize, salt, firstChunk })
  let assetId: string | null = lifecycle.action === 'replace' ? lifecycle.assetId : null
  let uploadId: string | null = null
  // The session a resume point kept, until it is tried.
  let resumable = resumed
  // True once this call's resume point is the one stored: a transient failure then keeps the session for the next try.
  let pointStored = resumed !== null
  const endWith = async (result: BackupResult): Promise<BackupResult> => {
    if (pointStored) await options.resume?.clear()
    return result
  }
  try {
    const expectedSize = ciphertextSize(source.size, chunkSize)
    const inParts = expectedSize > partEnd(0, expectedSize, chunkSize)
    // The hashes come from the resume point, from a first pass over the file, or, for a large file
    // streamed from disk (one pass), from the pass that sends it: it is read once, and the
    // session declares its original under a provisional name until the last part names it.
    let hashes: Hashes | null = resumed !== null && resumed.contentHash !== null ? { content: resumed.contentHash, ciphertextHash: resumed.ciphertextHash } : null
    const onePass = resumed !== null ? resumed.contentHash === null : knownContent === undefined && inParts && options.hashFirst?.(source.size) !== true
    if (hashes === null && !onePass) {
      // Pass 1: hash the plaintext (the asset id) and the ciphertext (the session declares it).
      const plain1 = new Tap(target.sha256)
      const cipher1 = new Tap(target.sha256)
      await drain(cipher1.through(encrypt(plain1)))
      if (plain1.bytes !== source.size) throw new Error(`read ${plain1.bytes} bytes, the source says ${source.size}: it changed while being read`)
      if (cipher1.bytes !== expectedSize) throw new Error(`encrypted to ${cipher1.bytes} bytes, expected ${expectedSize}`)
      // Keys that follow from a content must never encrypt another: a source whose bytes are not
      // the content it announced sends nothing.
      if (knownContent !== undefined && !equalBytes(plain1.digest(), knownContent)) throw new Error('the source changed while being read (its bytes are not the ones it hashed)')
      hashes = { content: knownContent ?? plain1.digest(), ciphertextHash: toHex(cipher1.digest()) }
    }
    const identify = async (found: Hashes) => {
      const id = lifecycle.action === 'replace' ? lifecycle.assetId : await assetIdFor(target.masterKey, target.albumId, found.content)
      assetId = id
      return { id, contentHash: toHex(found.content), contentMac: derived?.contentMac ?? (await contentMacOf(target.masterKey, found.content)) }
    }
    type Identified = Awaited<ReturnType<typeof identify>>
    const presentAs = (known: Identified): BackupResult => ({ status: 'present', assetId: known.id, contentHash: known.contentHash, contentMac: toHex(known.contentMac), ciphertextHash: null, sentBytes: 0, resumedBytes: 0, reusedOriginal: false })
    const nothingToSend = (known: Identified): boolean =>
      (lifecycle.action === 'create' && options.isStored?.(known.id) === true) || (lifecycle.action === 'replace' && lifecycle.currentContentHash === known.contentHash)
    const known = hashes === null ? null : await identify(hashes)
    // Nothing to send: a session a resume point kept is not needed either.
    if (known !== null && nothingToSend(known)) {
      if (resumed !== null) await target.client.abortUploadSession(resumed.uploadId).catch(() => {})
      return await endWith(presentAs(known))
    }
    const media = resumed === null ? ((await options.describe?.()) ?? NO_FACTS) : null
    const facts = resumed?.facts ?? { captured: media!.captured, width: media!.width, height: media!.height, location: media!.location ?? null }
    const derivatives: readonly SealedDerivative[] =
      resumed?.derivatives ??
      (await Promise.all(
        media!.derivatives.map(async (d) => {
          const sealed = await encryptBytes(fileKey, d.bytes, { role: 'derivative' })
          return { kind: d.kind, type: d.type, size: d.bytes.length, hash: toHex(sha256(sealed)), sealed }
        }),
      ))
    const provisionalName = hashes === null ? (resumed?.ciphertextHash ?? toHex(randomBytes(32))) : null
    let head = lifecycle.action === 'replace' ? lifecycle.head : null
    // The signed write, once the hashes are known: the metadata blob (sealed once) and the envelope.
    const writeOf = async (found: Hashes, ids: Identified) => {
      const metadata: AssetMetadata = {
        name: source.name,
        size: source.size,
        type: source.type,
        modified: source.modified,
        captured: facts.captured,
        width: facts.width,
        height: facts.height,
        ...(facts.location === null ? {} : { location: facts.location }),
        contentMac: ids.contentMac,
        blobs: [
          { kind: 'original', hash: fromHex(found.ciphertextHash), size: source.size, type: source.type },
          ...derivatives.map((d) => ({ kind: d.kind, hash: fromHex(d.hash), size: d.size, type: d.type })),
        ],
      }
      const albumKey = await deriveAlbumKey(target.masterKey, target.albumId, amkVersion)
      const metadataBlob = await sealMetadata(albumKey, { albumId: target.albumId, fileId: ids.id }, fileKey, metadata)
      return (protocolVersion: string) =>
        buildLifecycleWrite(target.identity, {
          envelope: {
            crypto_suite_id: CRYPTO_SUITE_V1,
            protocol_version: protocolVersion,
            album_id: target.albumId,
            file_id: ids.id,
            amk_version: amkVersion,
            ciphertext_hash: found.ciphertextHash,
            plaintext_size: source.size,
            chunk_size: chunkSize,
            key_mode: 'wrapped',
            created_by_user: target.userId,
            created_by_device: target.deviceId,
            client_version: target.clientVersion ?? CLIENT_VERSION,
            action: lifecycle.action,
            ...(head === null ? {} : { prior_provenance_hash: head.manifestHash, original_blob_hash: head.originalHash }),
            ...(options.retentionUntil === undefined ? {} : { retention_until: options.retentionUntil }),
          },
          metadata: metadataBlob,
        })
    }
    // The resumed session, when it is still open with time to finish; else a new one.
    const resumedSession = async (): Promise<UploadSessionView | null> => {
      const kept = resumable
      resumable = null
      if (kept === null) return null
      const session = await target.client.uploadSessionStatus(kept.uploadId).catch((error: unknown) => {
        if (error instanceof CofferProblem && error.status === 404) return null
        throw error
      })
      return session !== null && Date.parse(session.expires_at) > Date.now() + RESUME_MARGIN_MS ? session : null
    }
    // One upload session and its write; an upgrade window met on the way ends the session (the
    // ceremony waits for every open one), waits for the window to close and starts again.
    const send = async (protocolVersion: string): Promise<BackupResult> => {
      const declared = hashes?.ciphertextHash ?? provisionalName!
      const session =
        (await resumedSession()) ??
        (await target.client.openUploadSession({
          album_id: target.albumId,
          crypto_suite_id: CRYPTO_SUITE_V1,
          ciphertext_hash: declared,
          blobs: [{ role: 'original', hash: declared, size: expectedSize }, ...derivatives.map((d) => ({ role: 'derivative' as const, hash: d.hash, size: d.sealed.length }))],
        }))
      uploadId = session.upload_id
      await options.onUploadOpened?.(uploadId)
      const original = session.blobs.find((blob) => blob.role === 'original')!
      const missing = new Set(session.blobs.filter((blob) => !blob.present).map((blob) => blob.hash))
      if (inParts && !original.present && options.resume !== undefined && resumed?.uploadId !== uploadId) {
        const point = { contentHash: hashes?.content ?? null, ciphertextHash: declared, ciphertextSize: expectedSize, chunkSize, fileKey, salt, facts, derivatives }
        await options.resume.save(uploadId, await sealResumePoint(target.masterKey, uploadId, point))
        pointStored = true
      }
      let sentBytes = 0
      let resumedBytes = 0
      let reusedOriginal = false
      if (hashes === null) {
        // One pass: the file is read once, from its start, hashed, encrypted and sent as it is
        // read, from the first byte the server does not hold (all of it when an earlier run's last
        // part already named the blob); the last part tells the server the blob's hash.
        resumedBytes = original.present ? expectedSize : original.received
        const plain = new Tap(target.sha256)
        const cipher = new Tap(target.sha256)
        let cipherDigest: Uint8Array | undefined
        const blobDigest = (): Uint8Array => (cipherDigest ??= cipher.digest())
        const parts = partsOf(dropFirst(cipher.through(encrypt(plain)), resumedBytes), resumedBytes, expectedSize, chunkSize)
        await sendParts(target.client, uploadId, declared, parts, expectedSize, target.sha256, blobDigest)
        if (plain.bytes !== source.size) throw new Error(`read ${plain.bytes} bytes, the source says ${source.size}: it changed while being read`)
        hashes = { content: plain.digest(), ciphertextHash: toHex(blobDigest()) }
        if (original.present && original.hash !== hashes.ciphertextHash) throw new StaleResumePoint('the file is not the one the interrupted upload sent')
        sentBytes += expectedSize - resumedBytes
      } else if (missing.has(hashes.ciphertextHash) && !inParts) {
        // Pass 2: the same bytes again, streamed.
        const plain2 = new Tap(target.sha256)
        const cipher2 = new Tap(target.sha256)
        await target.client.putBlob(session.upload_id, hashes.ciphertextHash, cipher2.through(encrypt(plain2)))
        if (toHex(cipher2.digest()) !== hashes.ciphertextHash || plain2.bytes !== source.size) throw new Error('the source changed between the two passes (its bytes differ)')
        sentBytes += expectedSize
      } else if (missing.has(hashes.ciphertextHash)) {
        // Pass 2 from the first chunk the server does not hold: the file is read from there on.
        // The server checks the whole original against its hash when the last part arrives.
        resumedBytes = original.received
        const firstChunk = chunkAt(resumedBytes, chunkSize)
        const plain2 = new Tap(target.sha256)
        await sendParts(target.client, uploadId, hashes.ciphertextHash, partsOf(encrypt(plain2, firstChunk), resumedBytes, expectedSize, chunkSize), expectedSize, target.sha256)
        if (plain2.bytes !== source.size - firstChunk * chunkSize) throw new Error('the source changed while being sent (its size differs)')
        sentBytes += expectedSize - resumedBytes
      } else reusedOriginal = true
      const found = hashes
      const ids = known ?? (await identify(found))
      // A file sent in one pass is identified only now: content the album already holds is not stored again.
      if (known === null && nothingToSend(ids)) {
        await target.client.abortUploadSession(session.upload_id).catch(() => {})
        uploadId = null
        return endWith(presentAs(ids))
      }
      for (const d of derivatives) {
        if (!missing.has(d.hash)) continue
        await target.client.putBlob(session.upload_id, d.hash, d.sealed)
        sentBytes += d.sealed.length
      }
      const sign = await writeOf(found, ids)
      const apply = async (version: string): Promise<void> => {
        try {
          await target.client.applyManifest(target.albumId, (await sign(version)).request)
        } catch (error) {
          // A replace whose asset someone wrote meanwhile: continue from the new head, once.
          if (!(lifecycle.action === 'replace' && staleRevival(error) && head === lifecycle.head)) throw error
          head = await lifecycle.reread()
          await target.client.applyManifest(target.albumId, (await sign(version)).request)
        }
      }
      try {
        await writeWithProtocol(target.client, target.albumId, protocolVersion, apply, { waitWhileUpgrading: false })
      } catch (error) {
        // The asset exists: an earlier run created it and stopped before recording it.
        if (lifecycle.action === 'create' && staleRevival(error)) {
          await target.client.abortUploadSession(session.upload_id).catch(() => {})
          uploadId = null
          return endWith(presentAs(ids))
        }
        throw error
      }
      uploadId = null
      return endWith({ status: 'stored', assetId: ids.id, contentHash: ids.contentHash, contentMac: toHex(ids.contentMac), ciphertextHash: found.ciphertextHash, sentBytes, resumedBytes, reusedOriginal })
    }
    let protocolVersion = knownVersion(target.client, target.albumId, await albumProtocol(target))
    for (let round = 0; ; round++) {
      try {
        return await send(protocolVersion)
      } catch (error) {
        if (!upgradeInFlight(error) || round >= 3) throw error
        if (uploadId !== null) await target.client.abortUploadSession(uploadId).catch(() => {})
        if (pointStored) await options.resume?.clear()
        pointStored = false
        uploadId = null
        await waitForUpgrade(target.client, target.albumId)
        protocolVersion = await pinnedVersion(target.client, target.albumId, protocolVersion)
      }
    }
  } catch (error) {
    // A network or server failure while a resume point is stored keeps the session: the next
    // try continues from what the server holds. Anything else ends it.
    const keep = pointStored && transientFailure(error)
    if (!keep) {
      const open = uploadId ?? resumed?.uploadId ?? null
      if (open !== null) await target.client.abortUploadSession(open).catch(() => {})
      if (pointStored) await options.resume?.clear()
    }
    throw new FileTransferError('backup', source.name, assetId, reasonOf(error), error)
  }
}
