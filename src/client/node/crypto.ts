// Node's native crypto for the client library, where the portable code (browser-safe: WebCrypto
// and the noble libraries) is slow and runs on the event loop (docs/benchmarks.md, "backup and
// restore: why 0.5 is out of reach"). Same keys, same bytes, same format: only faster.
import { argon2, createHash } from 'node:crypto'
import { cachingHybridVerifier, hybridSign, importHybridSeeds } from '../../crypto/hybrid.ts'
import type { Signer } from '../../sdk/directory.ts'
import type { HybridVerifier } from '../../sdk/hybrid.ts'
import type { Sha256Hasher } from '../files.ts'
import { KEY_BYTES } from '../format/keys.ts'
import type { Argon2id } from '../format/recovery.ts'

export interface NativeIdentity extends Signer {
  /** 1984 bytes: Ed25519 public key | ML-DSA-65 public key. */
  readonly publicKey: Uint8Array
}

/**
 * The account identity key whose 64 seed bytes are `seeds` (IdentityKey.exportSeeds()), on
 * node:crypto's Ed25519 and ML-DSA-65 (src/crypto/hybrid.ts): the same key and signatures as
 * the SDK's IdentityKey, in about 2 ms on the libuv pool instead of about 18 ms on the event loop.
 */
export function nativeIdentity(seeds: Uint8Array): NativeIdentity {
  const { publicKey, privateKey } = importHybridSeeds(seeds)
  return {
    publicKey: new Uint8Array(publicKey),
    async sign(message) {
      return new Uint8Array(await hybridSign(privateKey, message))
    },
  }
}

/** node:crypto's SHA-256 (over 1 GiB/s here, against about 90 MiB/s for the portable one). */
export const nativeSha256: Sha256Hasher = () => createHash('sha256')

/**
 * node:crypto's hybrid verification (src/crypto/hybrid.ts, the server's): the same answers as
 * the SDK's hybridVerify, in about 1.2 ms on the libuv pool instead of about 5 ms on the event
 * loop. Parsing a public key costs about 1 ms on the calling thread, so the last few are kept:
 * a restore checks every manifest under the account's one identity key, a verify also the
 * receipts under the server's attestation keys.
 */
export const nativeVerify: HybridVerifier = cachingHybridVerifier(4)

/**
 * node:crypto's argon2id (OpenSSL's, on the libuv pool): the same 32 bytes as the portable
 * @noble/hashes one, about 8 times as fast (0.35 s against 2.6 s at the escrow's 64 MiB, 3 passes).
 */
export const nativeArgon2id: Argon2id = (password, salt, params) =>
  new Promise((resolve, reject) => {
    argon2(
      'argon2id',
      { message: password, nonce: salt, memory: params.memoryKiB, passes: params.passes, parallelism: params.lanes, tagLength: KEY_BYTES },
      (error, key) => {
        if (error) reject(error)
        else resolve(new Uint8Array(key))
      },
    )
  })
