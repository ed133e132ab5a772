// The key hierarchy of client format v1 (docs/client-format.md, "Keys"): an account master key,
// album keys derived from it per album and album-key epoch, a random key per file wrapped under
// its album's key. HKDF-SHA256 and AES-256-GCM through primitives.ts (WebCrypto unless a platform installs its own).
import { concatBytes, utf8 } from '../../sdk/bytes.ts'
import { randomBytes, u32be, uuidBytes } from './bytes.ts'
import { ClientFormatError } from './errors.ts'
import { primitives } from './primitives.ts'

export const KEY_BYTES = 32
export const GCM_NONCE_BYTES = 12
export const GCM_TAG_BYTES = 16

export const ALBUM_KEY_INFO = 'coffer/v1/album-key'
export const FILE_KEY_WRAP_CONTEXT = 'coffer/v1/file-key'
export const WRAP_VERSION = 0x01
/** version (1) || nonce (12) || AES-256-GCM ciphertext of the file key (32) || tag (16). */
export const WRAPPED_FILE_KEY_BYTES = 1 + GCM_NONCE_BYTES + KEY_BYTES + GCM_TAG_BYTES

function checkKey(key: Uint8Array, what: string): void {
  if (!(key instanceof Uint8Array) || key.length !== KEY_BYTES) throw new TypeError(`${what}: expected ${KEY_BYTES} bytes`)
}

/** 256 random bits: made once, on an account's first device. */
export function generateMasterKey(): Uint8Array {
  return randomBytes(KEY_BYTES)
}

/** 256 random bits, one per asset. */
export function generateFileKey(): Uint8Array {
  return randomBytes(KEY_BYTES)
}

/** HKDF-SHA256 (RFC 5869). An empty salt is HashLen zero bytes, as the RFC says. */
export function hkdfSha256(ikm: Uint8Array, salt: Uint8Array, info: Uint8Array, length: number): Promise<Uint8Array> {
  return primitives().hkdfSha256(ikm, salt, info, length)
}

/** The HKDF info naming an album key: UTF-8 "coffer/v1/album-key" || 0x00 || album id (16 bytes) || epoch (u32 BE). */
export function albumKeyInfo(albumId: string, epoch: number): Uint8Array {
  if (!Number.isInteger(epoch) || epoch < 1 || epoch > 0xffff_ffff) throw new TypeError('album-key epoch (amk_version): an integer from 1 to 2^32-1')
  return concatBytes(utf8(ALBUM_KEY_INFO), new Uint8Array([0]), uuidBytes(albumId), u32be(epoch))
}

/** An album's key for one epoch (the envelope's amk_version): HKDF-SHA256(master, salt empty, info). */
export async function deriveAlbumKey(masterKey: Uint8Array, albumId: string, epoch: number): Promise<Uint8Array> {
  checkKey(masterKey, 'master key')
  return hkdfSha256(masterKey, new Uint8Array(0), albumKeyInfo(albumId, epoch), KEY_BYTES)
}

export interface FileKeyIds {
  readonly albumId: string
  /** The asset id (the envelope's file_id). */
  readonly fileId: string
}

/** The associated data of a wrapped file key: UTF-8 "coffer/v1/file-key" || 0x00 || album id (16) || file id (16). */
export function fileKeyWrapAad(ids: FileKeyIds): Uint8Array {
  return concatBytes(utf8(FILE_KEY_WRAP_CONTEXT), new Uint8Array([0]), uuidBytes(ids.albumId), uuidBytes(ids.fileId))
}

/**
 * The file key wrapped under the album key (61 bytes, WRAPPED_FILE_KEY_BYTES). `nonce` is for
 * test vectors only: by default it is random, as it must be.
 */
export async function wrapFileKey(
  albumKey: Uint8Array,
  ids: FileKeyIds,
  fileKey: Uint8Array,
  nonce: Uint8Array = randomBytes(GCM_NONCE_BYTES),
): Promise<Uint8Array> {
  checkKey(albumKey, 'album key')
  checkKey(fileKey, 'file key')
  if (nonce.length !== GCM_NONCE_BYTES) throw new TypeError(`nonce: expected ${GCM_NONCE_BYTES} bytes`)
  const sealed = await (await primitives().aesGcm(albumKey)).seal(nonce, fileKeyWrapAad(ids), fileKey)
  return concatBytes(new Uint8Array([WRAP_VERSION]), nonce, sealed)
}

/** The file key from its wrapping; throws ClientFormatError when it is not one made for this album, asset and album key. */
export async function unwrapFileKey(albumKey: Uint8Array, ids: FileKeyIds, wrapped: Uint8Array): Promise<Uint8Array> {
  checkKey(albumKey, 'album key')
  if (wrapped.length !== WRAPPED_FILE_KEY_BYTES)
    throw new ClientFormatError('malformed', `wrapped file key: expected ${WRAPPED_FILE_KEY_BYTES} bytes, got ${wrapped.length}`)
  if (wrapped[0] !== WRAP_VERSION) throw new ClientFormatError('malformed', `wrapped file key: unknown version ${wrapped[0]}`)
  const nonce = wrapped.subarray(1, 1 + GCM_NONCE_BYTES)
  const key = await (await primitives().aesGcm(albumKey)).open(nonce, fileKeyWrapAad(ids), wrapped.subarray(1 + GCM_NONCE_BYTES))
  if (key === null) throw new ClientFormatError('authentication', 'wrapped file key fails to authenticate: another album key, album or asset, or altered bytes')
  return key
}
