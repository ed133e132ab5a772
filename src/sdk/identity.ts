// The client side of the account identity key: a hybrid key pair (Ed25519 + ML-DSA-65) that
// stays on the user's devices. The server only ever sees its public half and signatures.
import { revokeAllSigningBytes } from '../contract/signing.ts'
import { toBase64 } from './bytes.ts'
import { generateHybridKeyPair, hybridKeyPairFromSeeds, hybridSign, hybridVerify, keyFingerprint, type HybridKeyPair } from './hybrid.ts'

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
    return new IdentityKey(hybridKeyPairFromSeeds(seeds))
  }

  /** 1984 bytes: Ed25519 public key | ML-DSA-65 public key. */
  get publicKey(): Uint8Array {
    return this.#pair.publicKey.slice()
  }

  /** The `X-Service-Identity-Key` header value: standard base64 of the public key. */
  get publicKeyBase64(): string {
    return toBase64(this.#pair.publicKey)
  }

  /** Hex SHA-256 of the public key. */
  get fingerprint(): string {
    return keyFingerprint(this.#pair.publicKey)
  }

  /** The 64 secret seed bytes (Ed25519 seed | ML-DSA-65 seed). */
  exportSeeds(): Uint8Array {
    return this.#pair.seeds.slice()
  }

  /** A 3373-byte hybrid signature (Ed25519 | ML-DSA-65) over `message`. */
  async sign(message: Uint8Array): Promise<Uint8Array> {
    return hybridSign(this.#pair, message)
  }

  async verify(message: Uint8Array, signature: Uint8Array): Promise<boolean> {
    return hybridVerify(this.#pair.publicKey, message, signature)
  }

  /** The revoke-all `proof`: base64 of the signature over the canonical signing bytes. */
  async proveRevokeAll(userId: string, challenge: string): Promise<string> {
    return toBase64(await this.sign(revokeAllSigningBytes(userId, challenge)))
  }
}

/** Verifies a hybrid signature under any public key (e.g. another user's, from their directory). */
export async function verifyHybrid(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<boolean> {
  return hybridVerify(publicKey, message, signature)
}
