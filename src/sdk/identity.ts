// The client side of the account identity key: a hybrid key pair (Ed25519 + ML-DSA-65) that
// stays on the user's devices. The server only ever sees its public half and signatures.
import { revokeAllSigningBytes } from '../contract/signing.ts'
import {
  exportHybridSeeds, generateHybridKeyPair, hybridSign, hybridVerify, importHybridSeeds, keyFingerprint, type HybridKeyPair,
} from '../crypto/hybrid.ts'

export class IdentityKey {
  readonly #pair: HybridKeyPair

  private constructor(pair: HybridKeyPair) {
    this.#pair = pair
  }

  static generate(): IdentityKey {
    return new IdentityKey(generateHybridKeyPair())
  }

  /** From the 64 seed bytes `exportSeeds()` gave (keep them secret, e.g. in the keychain). */
  static fromSeeds(seeds: Uint8Array): IdentityKey {
    return new IdentityKey(importHybridSeeds(seeds))
  }

  /** 1984 bytes: Ed25519 public key | ML-DSA-65 public key. */
  get publicKey(): Buffer {
    return this.#pair.publicKey
  }

  /** The `X-Service-Identity-Key` header value: standard base64 of the public key. */
  get publicKeyBase64(): string {
    return this.#pair.publicKey.toString('base64')
  }

  /** Hex SHA-256 of the public key. */
  get fingerprint(): string {
    return keyFingerprint(this.#pair.publicKey)
  }

  exportSeeds(): Buffer {
    return exportHybridSeeds(this.#pair.privateKey)
  }

  /** A 3373-byte hybrid signature (Ed25519 | ML-DSA-65) over `message`. */
  sign(message: Uint8Array): Promise<Buffer> {
    return hybridSign(this.#pair.privateKey, message)
  }

  verify(message: Uint8Array, signature: Uint8Array): Promise<boolean> {
    return hybridVerify(this.#pair.publicKey, message, signature)
  }

  /** The revoke-all `proof`: base64 of the signature over the canonical signing bytes. */
  async proveRevokeAll(userId: string, challenge: string): Promise<string> {
    return (await this.sign(revokeAllSigningBytes(userId, challenge))).toString('base64')
  }
}

/** Verifies a hybrid signature under any public key (e.g. another user's, from their directory). */
export function verifyHybrid(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<boolean> {
  return hybridVerify(publicKey, message, signature)
}
