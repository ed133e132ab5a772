// Album and asset ids a device can compute again (docs/client-format.md, "Ids"): HMAC-SHA256
// under a key derived from the master key, cut into a UUIDv8. So every device of an account
// names the album "Holidays" the same way without telling the server its name, and backing up
// the same file into the same album twice names the same asset, which the server then refuses
// as existing (409 error.op.stale_revival): a crash between the server's commit and the
// device's own record can never store a file twice. The server learns only what it would
// anyway: that one account sent the same bytes to the same album again.
import { concatBytes, toHex, utf8 } from '../../sdk/bytes.ts'
import { digestSha256, uuidBytes } from './bytes.ts'
import { hkdfSha256, KEY_BYTES } from './keys.ts'
import { primitives } from './primitives.ts'

export const ID_KEY_INFO = 'coffer/v1/ids'
const ALBUM_LABEL = 'coffer/v1/album-id'
const ALBUM_AGAIN_LABEL = 'coffer/v1/album-id/again'
const ASSET_LABEL = 'coffer/v1/asset-id'
const NAMED_LABEL = 'coffer/v1/asset-id/named'

const hmacSha256 = (key: Uint8Array, message: Uint8Array): Promise<Uint8Array> => primitives().hmacSha256(key, message)

/** The first 16 bytes of a digest as a UUIDv8 (RFC 9562 section 5.8): version 8, variant 10. */
function uuidV8(digest: Uint8Array): string {
  const bytes = digest.slice(0, 16)
  bytes[6] = (bytes[6]! & 0x0f) | 0x80
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  const hex = toHex(bytes)
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

async function idKey(masterKey: Uint8Array): Promise<Uint8Array> {
  if (masterKey.length !== KEY_BYTES) throw new TypeError(`master key: expected ${KEY_BYTES} bytes`)
  return hkdfSha256(masterKey, new Uint8Array(0), utf8(ID_KEY_INFO), KEY_BYTES)
}

/** An album name as compared: Unicode NFC, surrounding white space removed; letter case kept. */
export function albumName(name: string): string {
  const normalized = name.normalize('NFC').trim()
  if (normalized.length === 0 || normalized.length > 1024) throw new TypeError('an album name has 1 to 1024 characters')
  return normalized
}

/** The most album ids one name is given (albumIdFor's `attempt`): a name reused this often is refused. */
export const ALBUM_ID_ATTEMPTS = 1000

/**
 * The album id of an album name: UUIDv8 of HMAC(id key, "coffer/v1/album-id" 0x00 UTF-8 name).
 * When that id is taken (an album made under the name was renamed since), attempt n (1 to
 * ALBUM_ID_ATTEMPTS - 1) is UUIDv8 of HMAC(id key, "coffer/v1/album-id/again" 0x00 n (u32
 * big-endian) UTF-8 name): every device tries the same ids in the same order, so two that make
 * the name again at once still make one album (docs/client-format.md, "Albums").
 */
export async function albumIdFor(masterKey: Uint8Array, name: string, attempt = 0): Promise<string> {
  if (!Number.isSafeInteger(attempt) || attempt < 0 || attempt >= ALBUM_ID_ATTEMPTS)
    throw new TypeError(`an album id attempt is from 0 to ${ALBUM_ID_ATTEMPTS - 1}`)
  const key = await idKey(masterKey)
  if (attempt === 0) return uuidV8(await hmacSha256(key, concatBytes(utf8(ALBUM_LABEL), new Uint8Array([0]), utf8(albumName(name)))))
  const counter = new Uint8Array(4)
  new DataView(counter.buffer).setUint32(0, attempt)
  return uuidV8(await hmacSha256(key, concatBytes(utf8(ALBUM_AGAIN_LABEL), new Uint8Array([0]), counter, utf8(albumName(name)))))
}

/** The asset id of a file's content in an album: UUIDv8 of HMAC(id key, "coffer/v1/asset-id" 0x00 album id (16) plaintext SHA-256 (32)). */
export async function assetIdFor(masterKey: Uint8Array, albumId: string, contentSha256: Uint8Array): Promise<string> {
  if (contentSha256.length !== 32) throw new TypeError('content hash: expected 32 bytes (SHA-256 of the plaintext)')
  return uuidV8(await hmacSha256(await idKey(masterKey), concatBytes(utf8(ASSET_LABEL), new Uint8Array([0]), uuidBytes(albumId), contentSha256)))
}

/**
 * The asset id of a file's content under one name, for a file whose content id (assetIdFor)
 * names another file of the album (a copy, a renamed file) or the album's record (empty
 * content): assetIdFor of SHA-256("coffer/v1/asset-id/named" 0x00 plaintext SHA-256 (32) UTF-8
 * name). The same content under the same name again names the same asset.
 */
export async function namedAssetIdFor(masterKey: Uint8Array, albumId: string, contentSha256: Uint8Array, name: string): Promise<string> {
  if (contentSha256.length !== 32) throw new TypeError('content hash: expected 32 bytes (SHA-256 of the plaintext)')
  const named = await digestSha256(concatBytes(utf8(NAMED_LABEL), new Uint8Array([0]), contentSha256, utf8(name)))
  return assetIdFor(masterKey, albumId, named)
}
