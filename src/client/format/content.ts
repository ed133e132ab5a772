// Private dedup (docs/client-format.md, "Content keys"): a keyed hash of a file's plaintext, and
// the file key and stream salt of its original derived from it, so that the same content backed
// up into two albums of one account encrypts to the same original, which the server then holds
// once (an upload session answers `present` for bytes the account already stores). The key
// comes from the master key: the server, holding neither, learns only that the account stored
// the same bytes twice, which identical ciphertext tells it anyway; nobody else can confirm a
// guess about a file's content.
//
// Safe for AES-GCM: the key and salt follow from the whole plaintext and the chunk size, so one
// (key, salt) pair never encrypts two different plaintexts. Derivatives keep random salts: a
// thumbnail made by another version of the decoder is different bytes from the same original.
import { concatBytes, utf8 } from '../../sdk/bytes.ts'
import { u32be } from './bytes.ts'
import { hkdfSha256, KEY_BYTES } from './keys.ts'
import { primitives } from './primitives.ts'
import { SALT_BYTES } from './stream.ts'

export const CONTENT_KEY_INFO = 'coffer/v1/content'
const FILE_KEY_LABEL = 'coffer/v1/content/file-key'
const SALT_LABEL = 'coffer/v1/content/salt'

/** What follows from one content: the keyed hash kept in the metadata and the local index, and the original's encryption. */
export interface ContentKeys {
  /** HMAC-SHA256(content key, SHA-256 of the plaintext): the content's private name. */
  readonly contentMac: Uint8Array
  readonly fileKey: Uint8Array
  readonly salt: Uint8Array
}

/** The account's content key: HKDF-SHA256(master key, salt empty, "coffer/v1/content"). */
export function contentKey(masterKey: Uint8Array): Promise<Uint8Array> {
  if (masterKey.length !== KEY_BYTES) throw new TypeError(`master key: expected ${KEY_BYTES} bytes`)
  return hkdfSha256(masterKey, new Uint8Array(0), utf8(CONTENT_KEY_INFO), KEY_BYTES)
}

async function macUnder(key: Uint8Array, contentSha256: Uint8Array): Promise<Uint8Array> {
  if (contentSha256.length !== 32) throw new TypeError('content hash: expected 32 bytes (SHA-256 of the plaintext)')
  return primitives().hmacSha256(key, contentSha256)
}

/** The keyed hash of a plaintext whose SHA-256 is `contentSha256`. */
export async function contentMacOf(masterKey: Uint8Array, contentSha256: Uint8Array): Promise<Uint8Array> {
  return macUnder(await contentKey(masterKey), contentSha256)
}

/**
 * The content's keyed hash, and the original's file key and stream salt:
 * file key = HKDF-SHA256(content key, salt = mac, "coffer/v1/content/file-key"),
 * salt = HKDF-SHA256(content key, salt = mac, "coffer/v1/content/salt" || 0x00 || chunk size (u32 BE)), 16 bytes.
 */
export async function contentKeys(masterKey: Uint8Array, contentSha256: Uint8Array, chunkSize: number): Promise<ContentKeys> {
  const key = await contentKey(masterKey)
  const contentMac = await macUnder(key, contentSha256)
  const fileKey = await hkdfSha256(key, contentMac, utf8(FILE_KEY_LABEL), KEY_BYTES)
  const salt = await hkdfSha256(key, contentMac, concatBytes(utf8(SALT_LABEL), new Uint8Array([0]), u32be(chunkSize)), SALT_BYTES)
  return { contentMac, fileKey, salt }
}
