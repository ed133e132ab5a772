// Hybrid signatures for the client (API.md section 4) on the noble libraries, so that the SDK
// runs in browsers and on Node 20 (node:crypto has ML-DSA only from Node 24). The server keeps
// its native implementation (src/crypto/hybrid.ts); src/sdk/hybrid.test.ts checks that each
// verifies the other's signatures and that both derive the same keys from the same seeds.
// Ed25519 (RFC 8032) then ML-DSA-65 (FIPS 204, empty context) over the same message; a
// signature is valid only when both halves verify.
import { ed25519 } from '@noble/curves/ed25519.js'
import { randomBytes } from '@noble/hashes/utils.js'
import { ml_dsa65 } from '@noble/post-quantum/ml-dsa.js'
import { ED25519_PUBLIC_KEY_BYTES, ED25519_SIGNATURE_BYTES, HYBRID_PUBLIC_KEY_BYTES, HYBRID_SEED_BYTES, HYBRID_SIGNATURE_BYTES } from '../contract/signing.ts'
import { concatBytes, sha256Hex, toHex } from './bytes.ts'

export interface HybridKeyPair {
  /** 1984 bytes: Ed25519 public key | ML-DSA-65 public key. */
  readonly publicKey: Uint8Array
  /** 64 bytes: the Ed25519 seed | the ML-DSA-65 seed. Keep them secret. */
  readonly seeds: Uint8Array
  readonly ed25519SecretKey: Uint8Array
  readonly mlDsa65SecretKey: Uint8Array
}

export function hybridKeyPairFromSeeds(seeds: Uint8Array): HybridKeyPair {
  if (!(seeds instanceof Uint8Array) || seeds.length !== HYBRID_SEED_BYTES) throw new TypeError(`a hybrid private key is ${HYBRID_SEED_BYTES} bytes of seeds`)
  const copy = seeds.slice()
  const ed25519SecretKey = copy.slice(0, 32)
  const postQuantum = ml_dsa65.keygen(copy.slice(32))
  return {
    publicKey: concatBytes(ed25519.getPublicKey(ed25519SecretKey), postQuantum.publicKey),
    seeds: copy,
    ed25519SecretKey,
    mlDsa65SecretKey: postQuantum.secretKey,
  }
}

/** A fresh key pair from the platform's CSPRNG (crypto.getRandomValues). */
export function generateHybridKeyPair(): HybridKeyPair {
  return hybridKeyPairFromSeeds(randomBytes(HYBRID_SEED_BYTES))
}

/** A 3373-byte hybrid signature: Ed25519 | ML-DSA-65 (hedged). */
export function hybridSign(pair: HybridKeyPair, message: Uint8Array): Uint8Array {
  return concatBytes(ed25519.sign(message, pair.ed25519SecretKey), ml_dsa65.sign(message, pair.mlDsa65SecretKey))
}

/**
 * Checks one hybrid signature: true only when both halves verify. `hybridVerify` below is the
 * SDK's (noble, synchronous, on the calling thread); a platform may give a faster one with the
 * same answers, e.g. node:crypto's on the libuv pool (the server's `src/crypto/hybrid.ts`,
 * `src/client/node/crypto.ts` nativeVerify). `readManifestWith` and `verifyReceipts` take one.
 */
export type HybridVerifier = (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array) => boolean | Promise<boolean>

/**
 * True only when both halves verify. Like the server, it refuses an Ed25519 public key that
 * is not a canonical encoding of a point outside the small-order subgroup, and verifies
 * Ed25519 by RFC 8032 (not ZIP 215), as OpenSSL does on the server.
 */
export function hybridVerify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (publicKey.length !== HYBRID_PUBLIC_KEY_BYTES || signature.length !== HYBRID_SIGNATURE_BYTES) return false
  const classicalKey = publicKey.subarray(0, ED25519_PUBLIC_KEY_BYTES)
  try {
    if (ed25519.Point.fromBytes(classicalKey).isSmallOrder()) return false
    return (
      ed25519.verify(signature.subarray(0, ED25519_SIGNATURE_BYTES), message, classicalKey, { zip215: false }) &&
      ml_dsa65.verify(signature.subarray(ED25519_SIGNATURE_BYTES), message, publicKey.subarray(ED25519_PUBLIC_KEY_BYTES))
    )
  } catch {
    return false
  }
}

type WebCryptoKey = Awaited<ReturnType<typeof globalThis.crypto.subtle.importKey>>

/** Ed25519 public keys imported into WebCrypto, the last few (a gallery checks many manifests under one identity key). */
const webCryptoKeys: { readonly hex: string; readonly key: Promise<WebCryptoKey | null> }[] = []
const WEBCRYPTO_KEYS_KEPT = 4

/** The key imported for WebCrypto's Ed25519, or null where WebCrypto has no Ed25519 (an older browser). */
function webCryptoEd25519(classicalKey: Uint8Array): Promise<WebCryptoKey | null> {
  const hex = toHex(classicalKey)
  let found = webCryptoKeys.find((entry) => entry.hex === hex)
  if (found === undefined) {
    found = { hex, key: crypto.subtle.importKey('raw', classicalKey.slice(), { name: 'Ed25519' }, false, ['verify']).catch(() => null) }
    webCryptoKeys.unshift(found)
    webCryptoKeys.length = Math.min(webCryptoKeys.length, WEBCRYPTO_KEYS_KEPT)
  }
  return found.key
}

/**
 * hybridVerify's answers with the Ed25519 half done by the platform's WebCrypto (a browser's,
 * Node's): about a tenth of noble's time for that half (0.3 ms against 3.4 ms here), which is
 * most of a manifest check in a browser. WebCrypto verifies by RFC 8032 as OpenSSL does on the
 * server; the small-order check of the public key stays here, as in hybridVerify. Where
 * WebCrypto has no Ed25519 it falls back to noble's.
 */
export async function webCryptoHybridVerify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<boolean> {
  if (publicKey.length !== HYBRID_PUBLIC_KEY_BYTES || signature.length !== HYBRID_SIGNATURE_BYTES) return false
  const classicalKey = publicKey.subarray(0, ED25519_PUBLIC_KEY_BYTES)
  try {
    if (ed25519.Point.fromBytes(classicalKey).isSmallOrder()) return false
    const key = await webCryptoEd25519(classicalKey)
    const classicalSignature = signature.subarray(0, ED25519_SIGNATURE_BYTES)
    const classical =
      key === null
        ? ed25519.verify(classicalSignature, message, classicalKey, { zip215: false })
        : await crypto.subtle.verify({ name: 'Ed25519' }, key, classicalSignature.slice(), message.slice())
    return classical && ml_dsa65.verify(signature.subarray(ED25519_SIGNATURE_BYTES), message, publicKey.subarray(ED25519_PUBLIC_KEY_BYTES))
  } catch {
    return false
  }
}

/** Hex SHA-256 of the public key bytes: identity key ids and `server_key_id`. */
export function keyFingerprint(publicKey: Uint8Array): string {
  return sha256Hex(publicKey)
}
