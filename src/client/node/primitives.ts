// node:crypto's symmetric primitives for the client library (format/primitives.ts), apart from
// node/crypto.ts so that the CLI installs them at start without loading the signature code.
import { createCipheriv, createDecipheriv, createHmac, createSecretKey, hkdfSync } from 'node:crypto'
import { GCM_TAG_BYTES, KEY_BYTES } from '../format/keys.ts'
import { installPrimitives, type SymmetricPrimitives } from '../format/primitives.ts'

/**
 * node:crypto's HKDF, HMAC and AES-256-GCM (format/primitives.ts): the same bytes as WebCrypto's,
 * in plain Uint8Arrays of their own, computed where they are asked for. A 64 KiB chunk seals in
 * about 45 µs with AES-NI (1.5 GB/s here), less than WebCrypto spends handing it to the thread
 * pool and copying it there and back.
 */
export const nativePrimitives: SymmetricPrimitives = {
  hkdfSha256: async (ikm, salt, info, length) => new Uint8Array(hkdfSync('sha256', ikm, salt, info, length)),
  hmacSha256: async (key, message) => new Uint8Array(createHmac('sha256', key).update(message).digest()),
  async aesGcm(raw) {
    if (raw.length !== KEY_BYTES) throw new TypeError(`AES-256-GCM key: expected ${KEY_BYTES} bytes`)
    // One key object for every chunk: made from raw bytes, it would be made again per chunk.
    const key = createSecretKey(raw)
    return {
      async seal(nonce, aad, plaintext) {
        const cipher = createCipheriv('aes-256-gcm', key, nonce).setAAD(aad)
        const body = cipher.update(plaintext)
        cipher.final() // GCM has no block padding: final() adds no bytes
        const sealed = new Uint8Array(body.length + GCM_TAG_BYTES)
        sealed.set(body)
        sealed.set(cipher.getAuthTag(), body.length)
        return sealed
      },
      async open(nonce, aad, sealed) {
        if (sealed.length < GCM_TAG_BYTES) return null
        const body = sealed.length - GCM_TAG_BYTES
        const decipher = createDecipheriv('aes-256-gcm', key, nonce, { authTagLength: GCM_TAG_BYTES }).setAAD(aad).setAuthTag(sealed.subarray(body))
        const plaintext = decipher.update(sealed.subarray(0, body))
        try {
          decipher.final()
        } catch {
          return null // the tag does not match: nothing of the plaintext leaves
        }
        // A Uint8Array of its own, as WebCrypto gives: a small Buffer can be a view of Node's
        // shared pool, and is copied out of it; a stream chunk has an ArrayBuffer of its own.
        const ownBuffer = plaintext.byteOffset === 0 && plaintext.buffer.byteLength === plaintext.length
        return ownBuffer ? new Uint8Array(plaintext.buffer, 0, plaintext.length) : new Uint8Array(plaintext)
      },
    }
  },
}

/** Has every format/ operation of this process use nativePrimitives (the CLI's main.ts calls it once). */
export function installNativePrimitives(): void {
  installPrimitives(nativePrimitives)
}
