// Backing up and restoring files (docs/client-library.md), on client format v1
// (docs/client-format.md) and the SDK: what a backup is given and answers (FileSource,
// BackupTarget, BackupOptions, BackupResult; the upload itself is upload.ts), and restoring one
// file. Browser-safe: no node: module; the file system lives in node/files.ts.
import { sha256 } from '@noble/hashes/sha2.js'
import { concatBytes, equalBytes, fromBase64, toHex } from '../sdk/bytes.ts'
import { CofferProblem, type CofferClient, type Feed } from '../sdk/client.ts'
import type { Signer } from '../sdk/directory.ts'
import type { HybridVerifier } from '../sdk/hybrid.ts'
import type { Membership } from './format/membership.ts'
import type { AlbumHistory } from './history.ts'
import { readManifestBy, readManifestWith, type Envelope, type ReadManifest, type WriterKeys } from '../sdk/manifest.ts'
import { digestSha256 } from './format/bytes.ts'
import { ClientFormatError } from './format/errors.ts'
import { deriveAlbumKey } from './format/keys.ts'
import { openMetadata, type AssetMetadata, type BlobEntry, type CameraFacts, type CapturedSource, type GeoLocation } from './format/metadata.ts'
import { decryptBytes, decryptStream, DEFAULT_CHUNK_SIZE } from './format/stream.ts'

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

export const portableSha256: Sha256Hasher = () => sha256.create()

/** SHA-256 of bytes in memory with `hasher` (the portable one unless given). */
export function sha256Of(bytes: Uint8Array, hasher: Sha256Hasher = portableSha256): Uint8Array {
  const hash = hasher()
  hash.update(bytes)
  return hash.digest()
}

/** A file to back up. `open` may be called twice (upload.ts: two passes) and must give the same bytes each time. */
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
 * is encrypted under keys that follow from its content (private dedup).
 */
export function memorySource(bytes: Uint8Array, facts: Pick<FileSource, 'name' | 'type' | 'modified'>): FileSource {
  return {
    ...facts,
    size: bytes.length,
    *open(start = 0) {
      for (let at = start; at < bytes.length; at += DEFAULT_CHUNK_SIZE) yield bytes.subarray(at, at + DEFAULT_CHUNK_SIZE)
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
  /** Capture time from EXIF or GPS (taken.ts capturedFromTags), ms since the epoch, or null. */
  readonly captured: number | null
  /**
   * The tag it came from (the metadata's captured_source, version 3); null when `captured` is.
   * Both describers (node/media.ts, the web app's worker) give it and `capturedOffset`; a capture
   * time given without either is written as metadata version 2 (its source unknown, read as
   * `exif`, floating).
   */
  readonly capturedSource?: CapturedSource | null
  /**
   * Minutes east of UTC of the wall clock where it was taken (the metadata's captured_offset,
   * version 3): null for a time stated without an offset, and when `captured` is null.
   */
  readonly capturedOffset?: number | null
  readonly width: number | null
  readonly height: number | null
  /** A video's length in whole milliseconds (the metadata's duration, version 4); null or absent for a photo and when unknown. */
  readonly duration?: number | null
  /** Make, model, lens and exposure read from EXIF (media.ts cameraFromTags): written as the metadata's `camera` (version 3 only); null or absent when none. */
  readonly camera?: CameraFacts | null
  /** Where it was taken, in degrees; only when the person opted in (null or absent otherwise). */
  readonly location?: GeoLocation | null
  /** A caption an import brought (a Takeout or XMP sidecar's): the metadata's `description`, version 5; null or absent when none. */
  readonly description?: string | null
  /** The photo was a favourite where it came from (a Takeout sidecar's `favorited`): the metadata's `favourite`. */
  readonly favourite?: boolean
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
  /** Album-key epoch (the envelope's amk_version); unless given, the newest the checked history records (history.membership), else 1. */
  readonly amkVersion?: number
  /** The album's pinned protocol version; looked up with listAlbums when not given. */
  readonly protocolVersion?: string
  /** Plaintext bytes per chunk of the original; 65536 unless given. */
  readonly chunkSize?: number
  readonly clientVersion?: string
  /** Hashes the original's plaintext and ciphertext; @noble/hashes' SHA-256 unless given. */
  readonly sha256?: Sha256Hasher
  /** The album's checked history: each manifest commits to its head, each write applied is noted (history.ts). None unless given. */
  readonly history?: AlbumHistory
  /** In an album shared with this account, the album key of an epoch as it received it (sharing.ts); derived from the master key unless given. */
  readonly albumKey?: (albumId: string, epoch: number) => Promise<Uint8Array>
}

export interface BackupOptions {
  /**
   * Asked with the asset id the content gets (format/ids.ts) once the first pass has hashed
   * it: true means the album already holds this content, and nothing is sent.
   */
  readonly isStored?: (assetId: string) => boolean
  /**
   * The asset id a new file of this content (its plaintext SHA-256) gets; its content id
   * (format/ids.ts assetIdFor) unless given. The sync engine gives a copy or a renamed file an id
   * of its own (namedAssetIdFor), so that every path is an asset of the album.
   */
  readonly assetIdOf?: (contentSha256: Uint8Array) => Promise<string>
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
  readonly hashFirst?: (plaintextSize: number) => boolean | Promise<boolean>
  /**
   * The originals this device stored under keys of their own (a large file sent as it is read),
   * by content: a file of the same content, hashed first, names that original (its key and salt
   * wrapped in this album's metadata) and sends nothing of it, in any album (decision 0030 does
   * this for files held in memory). None unless given.
   */
  readonly originals?: StoredOriginals
  /**
   * Told where the upload of this file is, as it goes: each stage as it begins, and the bytes as
   * they are read, encrypted and sent (several times per MiB: draw at most a few times a second).
   */
  readonly onProgress?: (progress: UploadProgress) => void
  /** An album record's cover (albums.ts setAlbumCover): the metadata's `cover`. None unless given. */
  readonly cover?: string
  /** The album's membership, signed into the manifest's content (an album record the owner writes: albums.ts writeMembership). None unless given. */
  readonly membership?: Membership
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

/** The stages of a file's upload (upload.ts), in their order; `done` when it is stored or found present. */
export type UploadStage = 'plan' | 'hash' | 'describe' | 'session' | 'send' | 'commit' | 'done'

/** Bytes of a file's upload: the original's plaintext read, ciphertext made (the original's and the derivatives'), and bytes the server took. */
export interface TransferTotals {
  readonly read: number
  readonly encrypted: number
  readonly sent: number
}

/**
 * Where one file's upload is (BackupOptions.onProgress): its stage and the way its original goes,
 * the bytes so far, and what they will be when it is done given that way (`expected`): a file
 * sent in two passes reads its bytes twice, one sent in one pass once, one whose original the
 * server holds sends only its derivatives, one the album holds reads it once and sends nothing.
 * `expected` is firm once the session is open (the server says what it holds); before, it is the
 * plan's. At `done` the bytes equal `expected`. Each pass counts: a resumed upload reads and sends
 * only the rest, one started again counts anew on top of what it did.
 */
export interface UploadProgress extends TransferTotals {
  /** The file's name and size (FileSource.name and size). */
  readonly name: string
  readonly size: number
  readonly stage: UploadStage
  readonly way: UploadWay
  readonly expected: TransferTotals
}

/**
 * How much of a file's upload is done, from 0 to 1, for a progress bar: the bytes read and sent
 * so far against those expected (reading and sending are the slow parts; encrypting keeps pace
 * with reading).
 */
export function uploadFraction(progress: UploadProgress): number {
  if (progress.stage === 'done') return 1
  const total = progress.expected.read + progress.expected.sent
  return total === 0 ? 0 : Math.min(1, (progress.read + progress.sent) / total)
}

/**
 * How an original goes to the server (upload.ts): `whole` (hashed in a first pass, then sent in
 * one request), `parts` (hashed first, or its hashes in a resume point; sent in parts from what
 * the server holds), `one-pass` (read once, sent in parts as it is read), `held` (the server holds
 * it already: nothing of it is sent), `none` (the album holds the content: nothing is sent).
 */
export type UploadWay = 'whole' | 'parts' | 'one-pass' | 'held' | 'none'

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

/** An error as the reason a FileTransferError gives. */
export const reasonOf = (error: unknown): string =>
  error instanceof ClientFormatError ? `${error.code}: ${error.message}` : ((error as Error)?.message ?? String(error))

/** Counts and hashes what flows through. */
export class Tap {
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

/** Where an asset's chain is: what a `replace` (or a `delete`) continues from. */
export interface ChainHead {
  /** SHA-256 of the last applied manifest_cbor (the feed entry's envelope_hash). */
  readonly manifestHash: string
  /** The asset's current original (the last write's ciphertext_hash). */
  readonly originalHash: string
}

/** A 409 StaleRevivalProblem: the asset exists (a create), or its chain moved on (a replace, a delete). */
export const staleRevival = (error: unknown): boolean => error instanceof CofferProblem && error.code === 'error.op.stale_revival'

/**
 * Where a device keeps the resume point of a file's upload (sync.ts binds one to each file it
 * backs up; node/state.ts stores it): only sealed bytes (format/resume.ts), under the session's id.
 */
export interface ResumeStore {
  load(): Promise<{ readonly uploadId: string; readonly sealed: Uint8Array } | null>
  save(uploadId: string, sealed: Uint8Array): Promise<void>
  clear(): Promise<void>
}

/** An encrypted original the account stores, and what opens it: its file key and stream salt (secret). */
export interface StoredOriginal {
  /** Hex SHA-256 of the encrypted original (its blob's name), and its plaintext's size. */
  readonly ciphertextHash: string
  readonly size: number
  readonly fileKey: Uint8Array
  readonly salt: Uint8Array
}

/** Where a device keeps its StoredOriginal of each content it sent (node/state.ts keeps them sealed). */
export interface StoredOriginals {
  find(contentSha256: Uint8Array, chunkSize: number): Promise<StoredOriginal | null>
  remember(contentSha256: Uint8Array, chunkSize: number, original: StoredOriginal): Promise<void>
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
  /**
   * In an album with several writers (shared: decision 0067), the identity key of each account
   * that may have written an entry (sharing.ts sharedLibrary); `identityPublicKey` alone signs
   * every entry unless given.
   */
  readonly writerKeys?: WriterKeys
  /** In an album shared with this account, the album key of an epoch as it received it (sharing.ts); derived from the master key unless given. */
  readonly albumKey?: (albumId: string, epoch: number) => Promise<Uint8Array>
}

/** A manifest read, its signature checked under its writer's key: the account's own, or in a shared album each writer's (`writerKeys`). */
export function readSignedManifest(
  source: Pick<RestoreSource, 'identityPublicKey' | 'verify' | 'writerKeys'>,
  manifestCbor: Uint8Array,
  verify: HybridVerifier | undefined = source.verify,
): Promise<ReadManifest> {
  return source.writerKeys === undefined
    ? readManifestWith(manifestCbor, source.identityPublicKey, verify)
    : readManifestBy(manifestCbor, source.writerKeys, verify)
}

/** The epoch a write into the album wraps its keys under: the target's amkVersion, else the newest its checked history records, else 1. */
export const writeEpoch = (target: Pick<BackupTarget, 'amkVersion' | 'history'>, albumId: string): number =>
  target.amkVersion ?? target.history?.membership(albumId)?.epoch ?? 1

/** The album key of an epoch: derived from the master key, or in an album shared with this account, the one it received (`albumKey`). */
export function albumKeyOf(source: Pick<AssetKeys, 'masterKey' | 'albumKey'>, albumId: string, epoch: number): Promise<Uint8Array> {
  if (source.albumKey !== undefined) return source.albumKey(albumId, epoch)
  if (source.masterKey === undefined) throw new Error('no album key: neither a master key nor the album’s keys')
  return deriveAlbumKey(source.masterKey, albumId, epoch)
}

/** A feed entry (or its two fields this needs). */
export type AssetEntry = Pick<Feed['entries'][number], 'asset_id' | 'manifest_cbor'>

/**
 * What opening an asset needs: the keys, and the album it must belong to. The master key derives
 * the album's keys unless `albumKey` gives them; a public link's page has no master key
 * (links.ts), only the album's keys its envelope holds.
 */
export type AssetKeys = Pick<RestoreSource, 'albumId' | 'identityPublicKey' | 'verify' | 'writerKeys' | 'albumKey'> & { readonly masterKey?: Uint8Array }

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
  const { envelope } = await readSignedManifest(source, manifestCbor)
  if (envelope.album_id !== source.albumId) throw new Error(`the manifest names album ${envelope.album_id}, not ${source.albumId}`)
  if (envelope.crypto_suite_id !== CRYPTO_SUITE_V1 || envelope.key_mode !== 'wrapped')
    throw new Error(`not client format v1 (crypto_suite_id ${envelope.crypto_suite_id}, key_mode ${envelope.key_mode})`)
  if (envelope.metadata_blob_hash === null || envelope.metadata_blob_hash === undefined) throw new Error('the manifest commits no metadata blob')
  return envelope as Envelope
}

/** Opens the metadata blob a checked manifest commits, and checks that both agree. */
async function openAssetMetadata(source: AssetKeys, assetId: string, envelope: Envelope, metadataBlob: Uint8Array): Promise<OpenedAsset> {
  if (toHex(sha256(metadataBlob)) !== envelope.metadata_blob_hash) throw new Error('the metadata blob is not the one the manifest commits (SHA-256 differs)')
  const albumKey = await albumKeyOf(source, source.albumId, envelope.amk_version)
  const { fileKey, metadata } = await openMetadata(albumKey, { albumId: source.albumId, fileId: envelope.file_id }, metadataBlob)
  const original = metadata.blobs.find((blob) => blob.kind === 'original')!
  if (toHex(original.hash) !== envelope.ciphertext_hash)
    throw new FileTransferError('restore', metadata.name, assetId, 'the metadata and the manifest name different originals')
  if (metadata.size !== envelope.plaintext_size || original.size !== metadata.size)
    throw new FileTransferError('restore', metadata.name, assetId, 'the metadata and the manifest disagree on the size')
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
export const derivativeBlob = (asset: Pick<OpenedAsset, 'metadata'>, kind: string): BlobEntry | undefined =>
  asset.metadata.blobs.find((b) => b.kind === kind && kind !== 'original')

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
export async function* originalPlaintext(asset: OpenedAsset, ciphertext: Bytes, hasher?: Sha256Hasher): AsyncGenerator<Uint8Array> {
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
 * Opens a stored asset: checks the manifest's signature and envelope, downloads and opens the
 * metadata blob (the file key unwrapped under the album key). Throws FileTransferError naming the file.
 * `metadataBlob`: the blob already asked for (albums.ts openPlanned, in batches), checked against
 * the manifest as a downloaded one is; null: download it.
 */
export async function openStoredAsset(source: RestoreSource, entry: AssetEntry, metadataBlob?: Promise<Uint8Array | null>): Promise<OpenedAsset> {
  try {
    const envelope = await readAssetManifest(source, fromBase64(entry.manifest_cbor))
    const blob = (await metadataBlob) ?? (await source.client.downloadBlob(envelope.metadata_blob_hash!))
    return await openAssetMetadata(source, entry.asset_id, envelope, blob)
  } catch (error) {
    throw error instanceof FileTransferError ? error : new FileTransferError('restore', null, entry.asset_id, reasonOf(error), error)
  }
}

/**
 * Opens an asset for restore (openStoredAsset, `metadataBlob` as it takes it), and returns the metadata, the original's
 * plaintext as a stream (downloaded once read) and its derivatives on demand.
 * Throws FileTransferError naming the file.
 */
export async function restoreFile(source: RestoreSource, entry: AssetEntry, metadataBlob?: Promise<Uint8Array | null>): Promise<RestoredFile> {
  const asset = await openStoredAsset(source, entry, metadataBlob)
  const { envelope } = asset
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
}
