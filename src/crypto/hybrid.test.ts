// Hybrid signatures interoperate with an independent implementation (@noble/curves and
// @noble/post-quantum, used only here) in both directions, and fail when either half is wrong.
import { ed25519 } from '@noble/curves/ed25519.js'
import { ml_dsa65 } from '@noble/post-quantum/ml-dsa.js'
import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import {
  ED25519_SIGNATURE_BYTES,
  HYBRID_PUBLIC_KEY_BYTES,
  HYBRID_SIGNATURE_BYTES,
  cachingHybridVerifier,
  exportHybridSeeds,
  generateHybridKeyPair,
  hybridSign,
  hybridVerify,
  importHybridSeeds,
  keyFingerprint,
  parseHybridPublicKey,
} from './hybrid.ts'

const message = new TextEncoder().encode('coffer/known-answer/v1')

function nobleKeyPair(seeds: Uint8Array) {
  const classical = ed25519.keygen(seeds.subarray(0, 32))
  const postQuantum = ml_dsa65.keygen(seeds.subarray(32))
  return {
    publicKey: Buffer.concat([classical.publicKey, postQuantum.publicKey]),
    sign: (bytes: Uint8Array) => Buffer.concat([ed25519.sign(bytes, classical.secretKey), ml_dsa65.sign(bytes, postQuantum.secretKey)]),
    verify: (signature: Uint8Array, bytes: Uint8Array, publicKey: Uint8Array) =>
      ed25519.verify(signature.subarray(0, 64), bytes, publicKey.subarray(0, 32)) && ml_dsa65.verify(signature.subarray(64), bytes, publicKey.subarray(32)),
  }
}

function flipped(bytes: Uint8Array, index: number): Buffer {
  const copy = Buffer.from(bytes)
  copy[index] = (copy[index] ?? 0) ^ 0x01
  return copy
}

describe('a fixed key (known answer)', () => {
  // Seeds 00 01 02 ... 3f: the key both implementations derive from them, pinned, so that a
  // change in either one's derivation (or in the byte layout) is caught even if both moved.
  const seeds = Buffer.from(Array.from({ length: 64 }, (_, i) => i))
  const FINGERPRINT = '8cd10c2cc5ca933652c2d40496887e0f5d58901a65b0cdbaf2f73663488f1284'

  it('has the pinned fingerprint in both implementations, and their signatures cross-verify', async () => {
    const ours = importHybridSeeds(seeds)
    const noble = nobleKeyPair(seeds)
    expect(keyFingerprint(ours.publicKey)).toBe(FINGERPRINT)
    expect(keyFingerprint(noble.publicKey)).toBe(FINGERPRINT)
    expect(await hybridVerify(ours.publicKey, message, noble.sign(message))).toBe(true)
    expect(noble.verify(await hybridSign(ours.privateKey, message), message, noble.publicKey)).toBe(true)
  })
})

describe('hybrid signatures', () => {
  const seeds = randomBytes(64)
  const noble = nobleKeyPair(seeds)

  it('derives the same public key from the same seeds as the independent implementation', () => {
    const ours = importHybridSeeds(seeds)
    expect(ours.publicKey).toHaveLength(HYBRID_PUBLIC_KEY_BYTES)
    expect(ours.publicKey.equals(noble.publicKey)).toBe(true)
    expect(exportHybridSeeds(ours.privateKey).equals(seeds)).toBe(true)
  })

  it('verifies a signature made by the independent implementation', async () => {
    const signature = noble.sign(message)
    expect(signature).toHaveLength(HYBRID_SIGNATURE_BYTES)
    expect(await hybridVerify(noble.publicKey, message, signature)).toBe(true)
  })

  it('makes signatures the independent implementation verifies', async () => {
    const ours = importHybridSeeds(seeds)
    const signature = await hybridSign(ours.privateKey, message)
    expect(noble.verify(signature, message, noble.publicKey)).toBe(true)
  })

  it.each([
    ['the Ed25519 half', 10],
    ['the ML-DSA-65 half', ED25519_SIGNATURE_BYTES + 100],
    ['the last byte', HYBRID_SIGNATURE_BYTES - 1],
  ])('refuses a signature with one byte flipped in %s', async (_half, index) => {
    const signature = noble.sign(message)
    expect(await hybridVerify(noble.publicKey, message, flipped(signature, index))).toBe(false)
  })

  it('refuses when either public key half is another key', async () => {
    const other = generateHybridKeyPair().publicKey
    const signature = noble.sign(message)
    const mixedClassical = Buffer.concat([other.subarray(0, 32), noble.publicKey.subarray(32)])
    const mixedPostQuantum = Buffer.concat([noble.publicKey.subarray(0, 32), other.subarray(32)])
    expect(await hybridVerify(mixedClassical, message, signature)).toBe(false)
    expect(await hybridVerify(mixedPostQuantum, message, signature)).toBe(false)
  })

  it('refuses another message, and malformed lengths without throwing', async () => {
    const signature = noble.sign(message)
    expect(await hybridVerify(noble.publicKey, new TextEncoder().encode('other'), signature)).toBe(false)
    expect(await hybridVerify(noble.publicKey, message, signature.subarray(1))).toBe(false)
    expect(await hybridVerify(noble.publicKey.subarray(1), message, signature)).toBe(false)
    expect(parseHybridPublicKey(Buffer.alloc(HYBRID_PUBLIC_KEY_BYTES + 1))).toBeNull()
  })

  it('fingerprints a key as the hex SHA-256 of its bytes', () => {
    expect(keyFingerprint(Buffer.from('abc'))).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
    expect(keyFingerprint(noble.publicKey)).toMatch(/^[0-9a-f]{64}$/)
  })
})

describe('a verifier that keeps parsed keys', () => {
  it('gives the answers hybridVerify gives, whatever it verified before', async () => {
    const verify = cachingHybridVerifier(2)
    const alice = generateHybridKeyPair()
    const bob = generateHybridKeyPair()
    const signature = await hybridSign(alice.privateKey, message)
    expect(await verify(alice.publicKey, message, signature)).toBe(true)
    // Another key (an account's replaced key, another account's) is another entry: refused.
    expect(await verify(bob.publicKey, message, signature)).toBe(false)
    // One bit of the kept key changed is another key too.
    expect(await verify(flipped(alice.publicKey, 100), message, signature)).toBe(false)
    expect(await verify(flipped(alice.publicKey, 2), message, signature)).toBe(false)
    expect(await verify(alice.publicKey, message, flipped(signature, 3000))).toBe(false)
    expect(await verify(alice.publicKey, new TextEncoder().encode('another message'), signature)).toBe(false)
    expect(await verify(alice.publicKey, message, signature)).toBe(true)
  })

  it('keys its entries by the bytes, not by the array: an array changed after a call is another key', async () => {
    const verify = cachingHybridVerifier(2)
    const alice = generateHybridKeyPair()
    const bob = generateHybridKeyPair()
    const signature = await hybridSign(alice.privateKey, message)
    const reused = Buffer.from(alice.publicKey)
    expect(await verify(reused, message, signature)).toBe(true)
    bob.publicKey.copy(reused)
    expect(await verify(reused, message, signature)).toBe(false)
    // A view into a larger buffer is read at its own offset.
    const padded = Buffer.concat([Buffer.alloc(7), alice.publicKey, Buffer.alloc(5)])
    expect(await verify(padded.subarray(7, 7 + HYBRID_PUBLIC_KEY_BYTES), message, signature)).toBe(true)
  })

  it('keeps refusing a key that can never verify, and stays right past its size', async () => {
    const verify = cachingHybridVerifier(2)
    const pairs = [generateHybridKeyPair(), generateHybridKeyPair(), generateHybridKeyPair()]
    const signatures = await Promise.all(pairs.map((pair) => hybridSign(pair.privateKey, message)))
    const smallOrder = Buffer.concat([Buffer.from([1, ...Array<number>(31).fill(0)]), pairs[0]!.publicKey.subarray(32)])
    for (let turn = 0; turn < 2; turn++) {
      expect(await verify(smallOrder, message, signatures[0]!)).toBe(false)
      for (const [i, pair] of pairs.entries()) {
        expect(await verify(pair.publicKey, message, signatures[i]!)).toBe(true)
        expect(await verify(pair.publicKey, message, signatures[(i + 1) % pairs.length]!)).toBe(false)
      }
    }
  })
})
