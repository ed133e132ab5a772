// The symmetric primitives of client format v1 (HKDF-SHA256, HMAC-SHA256, AES-256-GCM) behind one
// interface: WebCrypto by default, which every browser and Node have; a Node client installs
// node:crypto's (node/primitives.ts nativePrimitives), which gives the same bytes without WebCrypto's
// cost per call (a promise, a job on the thread pool and copies of every input: a backup makes
// about 25 such calls per photo, most of them 64 KiB stream chunks). Everything in format/ that
// derives, hashes under a key or seals goes through `primitives()`.
import { own } from './bytes.ts'

/** AES-256-GCM under one key; the 16-byte tag follows the ciphertext. */
export interface AesGcm {
  seal(nonce: Uint8Array, aad: Uint8Array, plaintext: Uint8Array): Promise<Uint8Array>
  /** The plaintext, or null when the ciphertext does not authenticate under this key, nonce and associated data. */
  open(nonce: Uint8Array, aad: Uint8Array, sealed: Uint8Array): Promise<Uint8Array | null>
}

export interface SymmetricPrimitives {
  /** HKDF-SHA256 (RFC 5869); an empty salt is HashLen zero bytes, as the RFC says. */
  hkdfSha256(ikm: Uint8Array, salt: Uint8Array, info: Uint8Array, length: number): Promise<Uint8Array>
  hmacSha256(key: Uint8Array, message: Uint8Array): Promise<Uint8Array>
  /** AES-256-GCM under a 32-byte key, for as many seals and opens as the caller makes. */
  aesGcm(key: Uint8Array): Promise<AesGcm>
}

const subtle = (): typeof globalThis.crypto.subtle => globalThis.crypto.subtle

export const webCryptoPrimitives: SymmetricPrimitives = {
  async hkdfSha256(ikm, salt, info, length) {
    const base = await subtle().importKey('raw', own(ikm), 'HKDF', false, ['deriveBits'])
    return new Uint8Array(await subtle().deriveBits({ name: 'HKDF', hash: 'SHA-256', salt: own(salt), info: own(info) }, base, length * 8))
  },
  async hmacSha256(key, message) {
    const imported = await subtle().importKey('raw', own(key), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
    return new Uint8Array(await subtle().sign('HMAC', imported, own(message)))
  },
  async aesGcm(raw) {
    const key = await subtle().importKey('raw', own(raw), 'AES-GCM', false, ['encrypt', 'decrypt'])
    return {
      async seal(nonce, aad, plaintext) {
        // A view of a whole ArrayBuffer is sealed where it is: a stream chunk is not copied first.
        const input = plaintext.buffer instanceof ArrayBuffer ? (plaintext as Uint8Array<ArrayBuffer>) : own(plaintext)
        return new Uint8Array(await subtle().encrypt({ name: 'AES-GCM', iv: own(nonce), additionalData: own(aad) }, key, input))
      },
      async open(nonce, aad, sealed) {
        try {
          return new Uint8Array(await subtle().decrypt({ name: 'AES-GCM', iv: own(nonce), additionalData: own(aad) }, key, own(sealed)))
        } catch {
          return null
        }
      },
    }
  },
}

let installed: SymmetricPrimitives = webCryptoPrimitives

/** The primitives in use: WebCrypto's unless a platform adapter installed its own. */
export const primitives = (): SymmetricPrimitives => installed

/**
 * Installs a platform's primitives for the whole process (node/primitives.ts installNativePrimitives).
 * They must give the same bytes as WebCrypto's: the format's vectors and the stream tests run on
 * both (test/support/primitives.ts onEachPrimitives).
 */
export function installPrimitives(chosen: SymmetricPrimitives): void {
  installed = chosen
}
