// Hybrid signatures (API.md section 4): Ed25519 followed by ML-DSA-65 (FIPS 204, empty
// context), both over the same message; valid only when both halves verify. Keys travel as
// raw bytes: public key = Ed25519 (32) | ML-DSA-65 (1952); private key = the two 32-byte
// seeds. Signing and verifying run on the libuv pool (node:crypto's callback forms), never on
// the event loop; the receipt signer's worker thread signs on its own thread. The server's
// implementation (native ML-DSA on Node 24); the SDK has its own on the noble libraries
// (src/sdk/hybrid.ts, for browsers and Node 20), and the two are tested against each other in
// both directions. The layout constants live in contract/signing.ts.
import { ed25519 } from '@noble/curves/ed25519.js'
import { LRUCache } from 'lru-cache'
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto'
import { ED25519_PUBLIC_KEY_BYTES, HYBRID_PUBLIC_KEY_BYTES, HYBRID_SEED_BYTES, HYBRID_SIGNATURE_BYTES, ED25519_SIGNATURE_BYTES } from '../contract/signing.ts'

export {
  ED25519_PUBLIC_KEY_BYTES,
  ED25519_SIGNATURE_BYTES,
  HYBRID_ALGORITHM,
  HYBRID_PUBLIC_KEY_BYTES,
  HYBRID_SEED_BYTES,
  HYBRID_SIGNATURE_BYTES,
  ML_DSA_65_PUBLIC_KEY_BYTES,
  ML_DSA_65_SIGNATURE_BYTES,
} from '../contract/signing.ts'

export interface HybridPrivateKey {
  readonly ed25519: KeyObject
  readonly mlDsa65: KeyObject
}

export interface HybridKeyPair {
  /** 1984 bytes: Ed25519 public key | ML-DSA-65 public key. */
  readonly publicKey: Buffer
  readonly privateKey: HybridPrivateKey
}

function rawPublic(key: KeyObject): Buffer {
  return key.export({ format: 'raw-public' })
}

function pairOf(privateKey: HybridPrivateKey): HybridKeyPair {
  const publicKey = Buffer.concat([rawPublic(createPublicKey(privateKey.ed25519)), rawPublic(createPublicKey(privateKey.mlDsa65))])
  return { publicKey, privateKey }
}

export function generateHybridKeyPair(): HybridKeyPair {
  return pairOf({ ed25519: generateKeyPairSync('ed25519').privateKey, mlDsa65: generateKeyPairSync('ml-dsa-65').privateKey })
}

/** The private key as 64 bytes: the Ed25519 seed | the ML-DSA-65 seed. */
export function exportHybridSeeds(privateKey: HybridPrivateKey): Buffer {
  return Buffer.concat([privateKey.ed25519.export({ format: 'raw-private' }), privateKey.mlDsa65.export({ format: 'raw-seed' })])
}

export function importHybridSeeds(seeds: Uint8Array): HybridKeyPair {
  if (seeds.length !== HYBRID_SEED_BYTES) throw new Error(`a hybrid private key is ${HYBRID_SEED_BYTES} bytes of seeds`)
  const bytes = Buffer.from(seeds)
  return pairOf({
    ed25519: createPrivateKey({ key: bytes.subarray(0, 32), format: 'raw-private', asymmetricKeyType: 'ed25519' }),
    mlDsa65: createPrivateKey({ key: bytes.subarray(32), format: 'raw-seed', asymmetricKeyType: 'ml-dsa-65' }),
  })
}

/** Hex SHA-256 of the public key bytes: `server_key_id` and identity key ids. */
export function keyFingerprint(publicKey: Uint8Array): string {
  return createHash('sha256').update(publicKey).digest('hex')
}

function signAsync(key: KeyObject, message: Uint8Array): Promise<Buffer> {
  return new Promise((resolve, reject) => sign(null, message, key, (error, signature) => (error ? reject(error) : resolve(signature))))
}

function verifyAsync(key: KeyObject, message: Uint8Array, signature: Uint8Array): Promise<boolean> {
  return new Promise((resolve) => verify(null, message, key, signature, (error, valid) => resolve(!error && valid)))
}

export async function hybridSign(privateKey: HybridPrivateKey, message: Uint8Array): Promise<Buffer> {
  const [classical, postQuantum] = await Promise.all([signAsync(privateKey.ed25519, message), signAsync(privateKey.mlDsa65, message)])
  return Buffer.concat([classical, postQuantum])
}

/**
 * hybridSign on the calling thread, both halves one after the other: for a worker thread that
 * does nothing else (the receipt signer), where a signature must not queue behind the pool's
 * other work (file writes and their fsyncs, argon2).
 */
export function hybridSignOnThisThread(privateKey: HybridPrivateKey, message: Uint8Array): Buffer {
  return Buffer.concat([sign(null, message, privateKey.ed25519), sign(null, message, privateKey.mlDsa65)])
}

/**
 * Whether 32 bytes are a usable Ed25519 public key: a canonical encoding (RFC 8032 section
 * 5.1.3) of a point outside the small-order subgroup. Node imports any 32 bytes, and OpenSSL
 * then verifies nothing under a bad one; @noble/curves decodes the point.
 */
function usableEd25519(bytes: Uint8Array): boolean {
  try {
    return !ed25519.Point.fromBytes(bytes).isSmallOrder()
  } catch {
    return false
  }
}

/** A hybrid public key parsed into node:crypto's key objects (parseHybridPublicKey). */
export interface HybridPublicKey {
  readonly ed25519: KeyObject
  readonly mlDsa65: KeyObject
}

/** Parses a 1984-byte hybrid public key; null when it is not one that can ever verify. */
export function parseHybridPublicKey(publicKey: Uint8Array): HybridPublicKey | null {
  if (publicKey.length !== HYBRID_PUBLIC_KEY_BYTES) return null
  const bytes = Buffer.from(publicKey)
  if (!usableEd25519(bytes.subarray(0, ED25519_PUBLIC_KEY_BYTES))) return null
  try {
    return {
      ed25519: createPublicKey({ key: bytes.subarray(0, ED25519_PUBLIC_KEY_BYTES), format: 'raw-public', asymmetricKeyType: 'ed25519' }),
      mlDsa65: createPublicKey({ key: bytes.subarray(ED25519_PUBLIC_KEY_BYTES), format: 'raw-public', asymmetricKeyType: 'ml-dsa-65' }),
    }
  } catch {
    return null
  }
}

/** True only when both halves verify; false for any malformed key or signature. */
export async function hybridVerify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<boolean> {
  if (signature.length !== HYBRID_SIGNATURE_BYTES) return false
  const keys = parseHybridPublicKey(publicKey)
  return keys !== null && hybridVerifyParsed(keys, message, signature)
}

/**
 * hybridVerify under a key parsed before (parseHybridPublicKey costs about 1 ms on the calling
 * thread: the Ed25519 point check and the ML-DSA-65 key import), for many signatures under one key.
 */
export async function hybridVerifyParsed(keys: HybridPublicKey, message: Uint8Array, signature: Uint8Array): Promise<boolean> {
  if (signature.length !== HYBRID_SIGNATURE_BYTES) return false
  const [classical, postQuantum] = await Promise.all([
    verifyAsync(keys.ed25519, message, signature.subarray(0, ED25519_SIGNATURE_BYTES)),
    verifyAsync(keys.mlDsa65, message, signature.subarray(ED25519_SIGNATURE_BYTES)),
  ])
  return classical && postQuantum
}

/** What a cached parse gave: the key objects, or null for bytes that can never verify. */
interface ParsedKey {
  readonly keys: HybridPublicKey | null
}

/**
 * hybridVerify that keeps the last `keysKept` parsed public keys, keyed by all of the key's own
 * bytes: parsing (about 0.2-1 ms on the calling thread) is then paid once per key, not once per
 * signature. An entry can never change an answer: the same bytes always parse to the same key
 * objects, and different bytes (a replaced or another account's key) are another entry.
 */
export function cachingHybridVerifier(keysKept: number): (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array) => Promise<boolean> {
  const parsed = new LRUCache<string, ParsedKey>({ max: keysKept })
  return async (publicKey, message, signature) => {
    if (signature.length !== HYBRID_SIGNATURE_BYTES) return false
    const bytes = Buffer.from(publicKey.buffer, publicKey.byteOffset, publicKey.byteLength).toString('latin1')
    let entry = parsed.get(bytes)
    if (entry === undefined) {
      entry = { keys: parseHybridPublicKey(publicKey) }
      parsed.set(bytes, entry)
    }
    return entry.keys !== null && hybridVerifyParsed(entry.keys, message, signature)
  }
}
