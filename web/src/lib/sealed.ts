// How the web app seals what it keeps in IndexedDB (docs/decisions/0031-browser-storage-encrypted.md):
// AES-256-GCM under a WebCrypto key, a random 12-byte nonce per record, the record's name as
// associated data (a sealed record moved under another name does not open). A value is sealed as
// JSON, its byte fields as {"bytes": base64}. The keys are non-extractable CryptoKeys: the
// sign-in's storage key (random) and the password key (argon2id of the password). Pure: no
// IndexedDB here, so Node (the tests) seals and opens with the same code.
import type { Argon2id, EscrowKdfParams } from '#photos/format/recovery.ts'
import { own, randomBytes } from '#photos/format/bytes.ts'
import { fromBase64, toBase64, utf8 } from '#sdk/bytes.ts'

export interface Sealed {
  readonly iv: Uint8Array
  readonly data: Uint8Array
}

/**
 * argon2id's costs for the password key: OWASP's argon2id setting (19 MiB, 2 passes, 1 lane),
 * under a second of the page's worker, where the escrow's 64 MiB and 3 passes take several on a
 * slow machine, at every sign-in.
 */
export const PASSWORD_KDF: EscrowKdfParams = { memoryKiB: 19_456, passes: 2, lanes: 1 }
const SALT_BYTES = 16
const NONCE_BYTES = 12

const AES_GCM = { name: 'AES-GCM', length: 256 } as const

/** WebCrypto's key, named through the API so that the DOM's and Node's typings both take it. */
export type AesKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>

/** A new random storage key, usable but never readable by script. */
export const newStorageKey = (): Promise<AesKey> => crypto.subtle.generateKey(AES_GCM, false, ['encrypt', 'decrypt'])

/** A key of the given 32 bytes, non-extractable; the bytes are wiped. */
export async function importedKey(bytes: Uint8Array): Promise<AesKey> {
  try {
    return await crypto.subtle.importKey('raw', own(bytes), AES_GCM, false, ['encrypt', 'decrypt'])
  } finally {
    bytes.fill(0)
  }
}

/** The password key: argon2id(password, salt) at `params`, imported non-extractable. */
export async function passwordKey(password: string, salt: Uint8Array, params: EscrowKdfParams, argon2id: Argon2id): Promise<AesKey> {
  return importedKey(await argon2id(utf8(password), salt, params))
}

export const newSalt = (): Uint8Array => randomBytes(SALT_BYTES)

export async function sealBytes(key: AesKey, name: string, plaintext: Uint8Array): Promise<Sealed> {
  const iv = randomBytes(NONCE_BYTES)
  const data = await crypto.subtle.encrypt({ name: 'AES-GCM', iv: own(iv), additionalData: own(utf8(name)) }, key, own(plaintext))
  return { iv, data: new Uint8Array(data) }
}

/** The plaintext; throws when the key or the name is not the one it was sealed with, or it was altered. */
export async function openBytes(key: AesKey, name: string, sealed: Sealed): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.decrypt({ name: 'AES-GCM', iv: own(sealed.iv), additionalData: own(utf8(name)) }, key, own(sealed.data)))
}

const bytesToJson = (_key: string, value: unknown): unknown => (value instanceof Uint8Array ? { bytes: toBase64(value) } : value)
const jsonToBytes = (_key: string, value: unknown): unknown =>
  typeof value === 'object' && value !== null && Object.keys(value).length === 1 && typeof (value as { bytes?: unknown }).bytes === 'string'
    ? fromBase64((value as { bytes: string }).bytes)
    : value

/** The value as JSON bytes (its Uint8Array fields as {"bytes": base64}). */
export const encodedValue = (value: unknown): Uint8Array => utf8(JSON.stringify(value, bytesToJson))
export const decodedValue = <T>(bytes: Uint8Array): T => JSON.parse(new TextDecoder().decode(bytes), jsonToBytes) as T

export const sealValue = (key: AesKey, name: string, value: unknown): Promise<Sealed> => sealBytes(key, name, encodedValue(value))
export const openValue = async <T>(key: AesKey, name: string, sealed: Sealed): Promise<T> => decodedValue<T>(await openBytes(key, name, sealed))

/** Whether a stored value has the sealed shape (else it was written by a version before sealing). */
export function isSealed(value: unknown): value is Sealed {
  return typeof value === 'object' && value !== null && (value as Sealed).iv instanceof Uint8Array && (value as Sealed).data instanceof Uint8Array
}
