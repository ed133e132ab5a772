// AES-256-GCM for secrets kept at rest (TOTP secrets, later the attestation private key).
// Layout: version 0x01 | 12-byte nonce | ciphertext | 16-byte tag. The associated data binds a
// box to its owner, so a box copied onto another row does not open.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

const VERSION = 0x01
const NONCE_BYTES = 12
const TAG_BYTES = 16

export interface SecretBox {
  seal(plaintext: Uint8Array, associatedData: string): Buffer
  open(box: Uint8Array, associatedData: string): Buffer
}

export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new Error('secret box key must be 32 bytes')
  return {
    seal(plaintext, associatedData) {
      const nonce = randomBytes(NONCE_BYTES)
      const cipher = createCipheriv('aes-256-gcm', key, nonce)
      cipher.setAAD(Buffer.from(associatedData, 'utf8'))
      const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()])
      return Buffer.concat([Buffer.of(VERSION), nonce, ciphertext, cipher.getAuthTag()])
    },
    open(box, associatedData) {
      const bytes = Buffer.from(box.buffer, box.byteOffset, box.byteLength)
      if (bytes.length < 1 + NONCE_BYTES + TAG_BYTES || bytes[0] !== VERSION) throw new Error('secret box: unknown layout')
      const nonce = bytes.subarray(1, 1 + NONCE_BYTES)
      const tag = bytes.subarray(bytes.length - TAG_BYTES)
      const decipher = createDecipheriv('aes-256-gcm', key, nonce)
      decipher.setAAD(Buffer.from(associatedData, 'utf8'))
      decipher.setAuthTag(tag)
      return Buffer.concat([decipher.update(bytes.subarray(1 + NONCE_BYTES, bytes.length - TAG_BYTES)), decipher.final()])
    },
  }
}
