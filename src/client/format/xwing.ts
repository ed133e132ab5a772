// Device encryption keys: X-Wing (draft-connolly-cfrg-xwing-kem: ML-KEM-768 + X25519, SHA3-256
// combiner), @noble/post-quantum's `ml_kem768_x25519`. A device publishes its public key (1216
// bytes) beside its signing key in the device directory; another device encapsulates to it to
// hand over the master key (docs/client-format.md, "Device encryption keys").
import { ml_kem768_x25519 as xwing } from '@noble/post-quantum/hybrid.js'
import { randomBytes } from './bytes.ts'

export const XWING_SEED_BYTES = 32
export const XWING_PUBLIC_KEY_BYTES = 1216
export const XWING_CIPHERTEXT_BYTES = 1120
export const XWING_SHARED_SECRET_BYTES = 32
/** Encapsulation randomness: 32 bytes for ML-KEM, 32 for the X25519 ephemeral key. */
export const XWING_ENCAPSULATION_RANDOMNESS_BYTES = 64

export interface XWingKeyPair {
  /** The decapsulation key as X-Wing defines it: the 32-byte seed everything else expands from. */
  readonly secretKey: Uint8Array
  readonly publicKey: Uint8Array
}

/** A key pair from 32 random bytes (`seed` is for test vectors only). */
export function generateXWingKeyPair(seed: Uint8Array = randomBytes(XWING_SEED_BYTES)): XWingKeyPair {
  if (seed.length !== XWING_SEED_BYTES) throw new TypeError(`X-Wing seed: expected ${XWING_SEED_BYTES} bytes`)
  const { publicKey, secretKey } = xwing.keygen(seed)
  return { publicKey, secretKey }
}

/** A 32-byte shared secret and its 1120-byte ciphertext for the holder of `publicKey` (`randomness` for test vectors only). */
export function xwingEncapsulate(
  publicKey: Uint8Array,
  randomness: Uint8Array = randomBytes(XWING_ENCAPSULATION_RANDOMNESS_BYTES),
): { cipherText: Uint8Array; sharedSecret: Uint8Array } {
  if (publicKey.length !== XWING_PUBLIC_KEY_BYTES) throw new TypeError(`X-Wing public key: expected ${XWING_PUBLIC_KEY_BYTES} bytes`)
  const { cipherText, sharedSecret } = xwing.encapsulate(publicKey, randomness)
  return { cipherText, sharedSecret }
}

/** The shared secret of a ciphertext (X-Wing decapsulation never fails: a wrong ciphertext gives an unrelated secret). */
export function xwingDecapsulate(cipherText: Uint8Array, secretKey: Uint8Array): Uint8Array {
  if (cipherText.length !== XWING_CIPHERTEXT_BYTES) throw new TypeError(`X-Wing ciphertext: expected ${XWING_CIPHERTEXT_BYTES} bytes`)
  if (secretKey.length !== XWING_SEED_BYTES) throw new TypeError(`X-Wing secret key: expected ${XWING_SEED_BYTES} bytes`)
  return xwing.decapsulate(cipherText, secretKey)
}
