// Backing up one file and restoring it (docs/client-library.md), on client format v1
// (docs/client-format.md) and the SDK. Browser-safe: no node: module; the file system lives in
// node/files.ts.
//
// Backup streams: the server wants the original's SHA-256 and size before it takes the bytes
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
import { concatBytes, equalBytes, fromBase64, fromHex, toHex } from '../sdk/bytes.ts'
import { CofferProblem, type CofferClient, type Feed, type UploadSessionView } from '../sdk/client.ts'
import type { Signer } from '../sdk/directory.ts'
import type { HybridVerifier } from '../sdk/hybrid.ts'
import { buildLifecycleWrite, readManifestWith, type Envelope } from '../sdk/manifest.ts'
import { digestSha256, randomBytes } from './format/bytes.ts'
import { ClientFormatError } from './format/errors.ts'
import { contentKeys, contentMacOf } from './format/content.ts'
import { assetIdFor } from './format/ids.ts'
import { openResumePoint, sealResumePoint, type ResumePoint, type SealedDerivative } from './format/resume.ts'
import { transientFailure } from './retry.ts'
import { deriveAlbumKey, GCM_TAG_BYTES, generateFileKey } from './format/keys.ts'
import { openMetadata, sealMetadata, type AssetMetadata, type BlobEntry, type GeoLocation } from './format/metadata.ts'
import { knownVersion, pinnedVersion, upgradeInFlight, waitForUpgrade, writeWithProtocol } from './protocol.ts'
import { ciphertextSize, decryptBytes, decryptStream, DEFAULT_CHUNK_SIZE, encryptBytes, encryptStream, HEADER_BYTES, SALT_BYTES } from './format/stream.ts'

/** client format v1's crypto suite (the envelope's crypto_suite_id). */
export const CRYPTO_SUITE_V1 = 1
export const CLIENT_VERSION = 'coffer-client/1'

type Bytes = AsyncIterable<Uint8Array> | Iterable<Uint8Array>

/**
 * An incremental SHA-256, for the originals' bytes. The library's own is @noble/hashes' (it runs
 * everywhere, at about 90 MiB/s on the event loop here); a platform can give a native one
 * (node/crypto.ts nativeSha256, over 1 GiB/s).
 */
export type Sha256Hasher = () => { update(bytes: Uint8Array): unknown; digest(): Uint8Array }

const portableSha256: Sha256Hasher = () => sha256.create()

/** A file to back up. `open` is called twice (see above) and must give the same bytes each time. */
export interface FileSource {
  /** The file's name: a plain name, or a relative path with "/" between plain names (docs/client-format.md, "Metadata blob"). */
  readonly name: string
  /** Plaintext bytes. */
  readonly size: number
  /** Media type, e.g. "image/jpeg". */
  readonly type: string
  /** Modification time, ms since the Unix epoch, or null. */
  readonly modified: number | null
  /** The plaintext from byte `start` (0 unless given: the whole file); a resumed upload reads only the rest. */
  open(start?: number): Bytes
  /**
   * The plaintext's SHA-256, when the source can tell it before a pass over `open()` (a file held
   * in memory). The original is then encrypted under keys that follow from its content
   * (format/content.ts): the same photo in another album of the account is stored once.
   */
  digest?(): Promise<Uint8Array>
}

/** The largest file a client reads into memory whole to back it up from one read (memorySource); a larger one is streamed (once: one pass, decision 0034). */
export const IN_MEMORY_FILE_MAX = 64 * 1024 * 1024

/**
 * A file held in memory as a FileSource: both passes read the one buffer (chunk-sized views,
 * no copy: the encryption takes each as it is), and its hash is known up front, so its original
 * is encrypted under keys that follow from its content (private dedup). `onPiece` is told each
 * piece handed to a pass (progress).
 */
export function memorySource(bytes: Uint8Array, facts: Pick<FileSource, 'name' | 'type' | 'modified'>, onPiece?: (bytes: number) => void): FileSource {
  return {
    ...facts,
    size: bytes.length,
    *open(start = 0) {
      for (let at = start; at < bytes.length; at += DEFAULT_CHUNK_SIZE) {
        const piece = bytes.subarray(at, at + DEFAULT_CHUNK_SIZE)
        onPiece?.(piece.length)
        yield piece
      }
    },
    digest: () => digestSha256(bytes),
  }
}

/** A thumbnail or preview made on the device (small: it is encrypted in memory). */
export interface DerivativeSource {
  readonly kind: string
  readonly type: string
  readonly bytes: Uint8Array
}

/** What the device reads from the file itself beyond its bytes (node/media.ts describeMedia). */
export interface MediaFacts {
  readonly captured: number | null
  readonly width: number | null
  readonly height: number | null
  /** Where it was taken, in degrees; only when the person opted in (null or absent otherwise). */
  readonly location?: GeoLocation | null
  readonly derivatives: readonly DerivativeSource[]
}

/** Who backs up, and where. */
export interface BackupTarget {
  readonly client: CofferClient
  /** The account identity key (an IdentityKey): signs the manifest. */
  readonly identity: Signer
  readonly userId: string
  readonly deviceId: string
  readonly masterKey: Uint8Array
  readonly albumId: string
  /** Album-key epoch (the envelope's amk_version); 1 unless given. */
  readonly amkVersion?: number
  /** The album's pinned protocol version; looked up with listAlbums when not given. */
  readonly protocolVersion?: string
  /** Plaintext bytes per chunk of the original; 65536 unless given. */
  readonly chunkSize?: number
  readonly clientVersion?: string
  /** Hashes the original's plaintext and ciphertext; @noble/hashes' SHA-256 unless given. */
  readonly sha256?: Sha256Hasher
}

export interface BackupOptions {
  /**
   * Asked with the asset id the content gets (format/ids.ts) once the first pass has hashed
   * it: true means the album already holds this content, and nothing is sent.
   */
  readonly isStored?: (assetId: string) => boolean
  /** Reads capture time, dimensions and derivatives; only called when the file is sent. */
  readonly describe?: () => Promise<MediaFacts>
  /** Told once the upload session is open and once it has ended, so a store can abort sessions a crash left open. */
  readonly onUploadOpened?: (uploadId: string) => void | Promise<void>
  /** A retention floor (RFC 3339): the server refuses to delete the asset before it. None unless given. */
  readonly retentionUntil?: string
  /**
   * Where this file's resume point is kept: an original sent in parts (larger than
   * UPLOAD_PART_BYTES) then continues, in a later call, from what the server holds of it. None
   * unless given: an interrupted upload starts again.
   */
  readonly resume?: ResumeStore
  /**
   * Asked, for a file streamed from disk that goes in parts, whether to hash it before sending
   * (two reads): true when the album may hold its content already (the sync engine: an asset of
   * this plaintext size), so that nothing is sent for it. Otherwise (and unless given) such a file
   * is read once, encrypted and sent as it is read, and identified at its end: content the album
   * already holds is then found after it was sent, and not stored.
   */
  readonly hashFirst?: (plaintextSize: number) => boolean
}

export interface BackupResult {
  /** `stored` when this call created the asset (or its new version); `present` when the album already held the content (or the asset, this content). */
  readonly status: 'stored' | 'present'
  /** The asset id (the envelope's file_id). */
  readonly assetId: string
  /** Hex SHA-256 of the plaintext. */
  readonly contentHash: string
  /** Hex SHA-256 of the encrypted original as stored; null when present (this call did not store it). */
  readonly ciphertextHash: string | null
  /** The content's keyed hash (format/content.ts), hex: kept in the metadata and the local index. */
  readonly contentMac: string
  /** Ciphertext bytes sent (0 when present). */
  readonly sentBytes: number
  /** Bytes of the original an earlier, interrupted call had sent, which the server held: not sent again (a resumed upload). */
  readonly resumedBytes: number
  /**
   * True when the account already stored this encrypted original (the same content in another
   * album: private dedup, FileSource.digest), so only the derivatives and the metadata were sent.
   */
  readonly reusedOriginal: boolean
}

/** What went wrong backing up or restoring a file, naming it (its name, or its asset id before the name is known). */
export class FileTransferError extends Error {
  override readonly name = 'FileTransferError'
  /** The file's name, or null when restore failed before the metadata was read. */
  readonly fileName: string | null
  readonly assetId: string | null
  constructor(action: 'backup' | 'restore', fileName: string | null, assetId: string | null, reason: string, cause?: unknown) {
    const what = fileName !== null ? `"${fileName}"${assetId === null ? '' : ` (asset ${assetId})`}` : `asset ${assetId}`
    super(`${action} of ${what} failed: ${reason}`, cause === undefined ? undefined : { cause })
    this.fileName = fileName
    this.assetId = assetId
  }
}

const reasonOf = (error: unknown): string => (error instanceof ClientFormatError ? `${error.code}: ${error.message}` : (error as Error)?.message ?? String(error))

/** Counts and hashes what flows through. */
class Tap {
  readonly #hash: ReturnType<Sha256Hasher>
  bytes = 0
  constructor(hasher: Sha256Hasher = portableSha256) {
    this.#hash = hasher()
  }

  async *through(source: Bytes): AsyncGenerator<Uint8Array> {
    for await (const piece of source) {
      this.#hash.update(piece)
      this.bytes += piece.length
      yield piece
    }
  }

  digest(): Uint8Array {
    return this.#hash.digest()
  }
}

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

/** Where an asset's chain is: what a `replace` (or a `delete`) continues from. */
export interface ChainHead {
  /** SHA-256 of the last applied manifest_cbor (the feed entry's envelope_hash). */
  readonly manifestHash: string
  /** The asset's current original (the last write's ciphertext_hash). */
  readonly originalHash: string
}

/** How storeFile writes: a new asset (its id from its content), or a new version of an existing one. */
type Lifecycle =
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

/** A 409 StaleRevivalProblem: the asset exists (a create), or its chain moved on (a replace, a delete). */
export const staleRevival = (error: unknown): boolean => error instanceof CofferProblem && error.code === 'error.op.stale_revival'

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

/**
 * Where a device keeps the resume point of a file's upload (sync.ts binds one to each file it
 * backs up; node/state.ts stores it): only sealed bytes (format/resume.ts), under the session's id.
 */
export interface ResumeStore {
  load(): Promise<{ readonly uploadId: string; readonly sealed: Uint8Array } | null>
  save(uploadId: string, sealed: Uint8Array): Promise<void>
  clear(): Promise<void>
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

/** Where to restore from. */
export interface RestoreSource {
  readonly client: CofferClient
  readonly masterKey: Uint8Array
  readonly albumId: string
  /** The public key that must have signed the manifest: the account's identity key. */
  readonly identityPublicKey: Uint8Array
  /** Hashes the original's ciphertext; @noble/hashes' SHA-256 unless given. */
  readonly sha256?: Sha256Hasher
  /**
   * Checks the manifest's hybrid signature; the SDK's hybridVerify (noble, on this thread, about
   * 5 ms) unless given. node/crypto.ts nativeVerify is node:crypto's, on the libuv pool.
   */
  readonly verify?: HybridVerifier
}

/** A feed entry (or its two fields this needs). */
export type AssetEntry = Pick<Feed['entries'][number], 'asset_id' | 'manifest_cbor'>

/** What opening an asset needs: the keys, and the album it must belong to. */
export type AssetKeys = Pick<RestoreSource, 'masterKey' | 'albumId' | 'identityPublicKey' | 'verify'>

/**
 * An asset opened from its manifest and metadata blob (openAsset): plain data, so that it can be
 * handed between a page and its workers (structured clone) and opened further there.
 */
export interface OpenedAsset {
  readonly assetId: string
  readonly envelope: Envelope
  readonly metadata: AssetMetadata
  /** The file key, unwrapped: it opens the original and the derivatives. */
  readonly fileKey: Uint8Array
  /** The metadata blob's size as stored. */
  readonly metadataBlobSize: number
}

/** The manifest of a `create` or `replace` entry of the album, its signature and client format checked. */
async function readAssetManifest(source: AssetKeys, manifestCbor: Uint8Array): Promise<Envelope> {
  const { envelope } = await readManifestWith(manifestCbor, source.identityPublicKey, source.verify)
  if (envelope.album_id !== source.albumId) throw new Error(`the manifest names album ${envelope.album_id}, not ${source.albumId}`)
  if (envelope.crypto_suite_id !== CRYPTO_SUITE_V1 || envelope.key_mode !== 'wrapped') throw new Error(`not client format v1 (crypto_suite_id ${envelope.crypto_suite_id}, key_mode ${envelope.key_mode})`)
  if (envelope.metadata_blob_hash === null || envelope.metadata_blob_hash === undefined) throw new Error('the manifest commits no metadata blob')
  return envelope as Envelope
}

/** Opens the metadata blob a checked manifest commits, and checks that both agree. */
async function openAssetMetadata(source: AssetKeys, assetId: string, envelope: Envelope, metadataBlob: Uint8Array): Promise<OpenedAsset> {
  if (toHex(sha256(metadataBlob)) !== envelope.metadata_blob_hash) throw new Error('the metadata blob is not the one the manifest commits (SHA-256 differs)')
  const albumKey = await deriveAlbumKey(source.masterKey, source.albumId, envelope.amk_version)
  const { fileKey, metadata } = await openMetadata(albumKey, { albumId: source.albumId, fileId: envelope.file_id }, metadataBlob)
  const original = metadata.blobs.find((blob) => blob.kind === 'original')!
  if (toHex(original.hash) !== envelope.ciphertext_hash) throw new FileTransferError('restore', metadata.name, assetId, 'the metadata and the manifest name different originals')
  if (metadata.size !== envelope.plaintext_size || original.size !== metadata.size) throw new FileTransferError('restore', metadata.name, assetId, 'the metadata and the manifest disagree on the size')
  return { assetId, envelope, metadata, fileKey, metadataBlobSize: metadataBlob.length }
}

/**
 * Opens an asset from bytes the caller fetched (a browser fetches on its page and opens in a
 * worker): the feed entry's manifest, its signature checked, and the metadata blob it commits
 * (the feed entry's metadata_blob_hash names it; it is checked here). Throws FileTransferError
 * naming the file.
 */
export async function openAsset(source: AssetKeys, entry: AssetEntry, metadataBlob: Uint8Array): Promise<OpenedAsset> {
  try {
    return await openAssetMetadata(source, entry.asset_id, await readAssetManifest(source, fromBase64(entry.manifest_cbor)), metadataBlob)
  } catch (error) {
    throw error instanceof FileTransferError ? error : new FileTransferError('restore', null, entry.asset_id, reasonOf(error), error)
  }
}

/** The blob entry of a derivative ("thumbnail", "preview") of an opened asset, or undefined when it has none of that kind. */
export const derivativeBlob = (asset: Pick<OpenedAsset, 'metadata'>, kind: string): BlobEntry | undefined => asset.metadata.blobs.find((b) => b.kind === kind && kind !== 'original')

/** A derivative's plaintext from its stored (sealed) bytes, their hash checked against the metadata. */
export async function openDerivative(asset: OpenedAsset, kind: string, sealed: Uint8Array): Promise<Uint8Array> {
  try {
    const blob = derivativeBlob(asset, kind)
    if (blob === undefined) throw new Error('the asset has none')
    if (!equalBytes(await digestSha256(sealed), blob.hash)) throw new Error(`the ${kind} is not the one the metadata names (SHA-256 differs)`)
    return await decryptBytes(asset.fileKey, sealed, { role: 'derivative' })
  } catch (error) {
    throw new FileTransferError('restore', asset.metadata.name, asset.assetId, `${kind}: ${reasonOf(error)}`, error)
  }
}

/**
 * The original's plaintext from its stored bytes, whole (for what fits in memory: a photo to
 * show or save from a browser), checked as RestoredFile.bytes checks it.
 */
export async function openOriginal(asset: OpenedAsset, ciphertext: Uint8Array, hasher?: Sha256Hasher): Promise<Uint8Array> {
  const parts: Uint8Array[] = []
  for await (const chunk of originalPlaintext(asset, [ciphertext], hasher)) parts.push(chunk)
  return concatBytes(...parts)
}

/** The original's plaintext chunk by chunk, each authenticated, then the ciphertext's hash and the size checked. */
async function* originalPlaintext(asset: OpenedAsset, ciphertext: Bytes, hasher?: Sha256Hasher): AsyncGenerator<Uint8Array> {
  const { envelope, metadata } = asset
  const tap = new Tap(hasher)
  let plaintext = 0
  try {
    for await (const chunk of decryptStream(asset.fileKey, tap.through(ciphertext), { role: 'original', chunkSize: envelope.chunk_size })) {
      plaintext += chunk.length
      yield chunk
    }
    const received = toHex(tap.digest())
    if (received !== envelope.ciphertext_hash) throw new Error(`the original's SHA-256 is ${received}, the manifest says ${envelope.ciphertext_hash}`)
    if (plaintext !== metadata.size) throw new Error(`decrypted ${plaintext} bytes, the metadata says ${metadata.size}`)
  } catch (error) {
    throw new FileTransferError('restore', metadata.name, asset.assetId, reasonOf(error), error)
  }
}

export interface RestoredFile {
  readonly assetId: string
  readonly envelope: Envelope
  readonly metadata: AssetMetadata
  /**
   * The original's plaintext, chunk by chunk, each authenticated before it is yielded; it
   * throws FileTransferError if a chunk fails, and at the end if the ciphertext's SHA-256 or
   * the size is not what the manifest and metadata say. Keep nothing under its final name
   * until it has ended without throwing (node/files.ts writeRestored does that). Read once.
   */
  readonly bytes: AsyncIterable<Uint8Array>
  /** The metadata blob's size as stored (its hash is the envelope's metadata_blob_hash). */
  readonly metadataBlobSize: number
  /** A derivative's plaintext ("thumbnail", "preview"), its hash checked and decrypted; null when the asset has none of that kind. */
  derivative(kind: string): Promise<Uint8Array | null>
}

/**
 * Opens an asset for restore: checks the manifest's signature and envelope, downloads and opens
 * the metadata blob (the file key unwrapped under the album key), and returns the metadata, the
 * original's plaintext as a stream (downloaded once read) and its derivatives on demand.
 * Throws FileTransferError naming the file.
 */
export async function restoreFile(source: RestoreSource, entry: AssetEntry): Promise<RestoredFile> {
  try {
    const envelope = await readAssetManifest(source, fromBase64(entry.manifest_cbor))
    const asset = await openAssetMetadata(source, entry.asset_id, envelope, await source.client.downloadBlob(envelope.metadata_blob_hash!))
    async function* bytes(): AsyncGenerator<Uint8Array> {
      let ciphertext: AsyncIterable<Uint8Array>
      try {
        ciphertext = await source.client.downloadBlobStream(envelope.ciphertext_hash)
      } catch (error) {
        throw new FileTransferError('restore', asset.metadata.name, entry.asset_id, reasonOf(error), error)
      }
      yield* originalPlaintext(asset, ciphertext, source.sha256)
    }
    const derivative = async (kind: string): Promise<Uint8Array | null> => {
      const blob = derivativeBlob(asset, kind)
      if (blob === undefined) return null
      let sealed: Uint8Array
      try {
        sealed = await source.client.downloadBlob(toHex(blob.hash))
      } catch (error) {
        throw new FileTransferError('restore', asset.metadata.name, entry.asset_id, `${kind}: ${reasonOf(error)}`, error)
      }
      return openDerivative(asset, kind, sealed)
    }
    return { assetId: entry.asset_id, envelope, metadata: asset.metadata, bytes: bytes(), metadataBlobSize: asset.metadataBlobSize, derivative }
  } catch (error) {
    throw error instanceof FileTransferError ? error : new FileTransferError('restore', null, entry.asset_id, reasonOf(error), error)
  }
}
