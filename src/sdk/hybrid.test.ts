// The SDK's hybrid signatures (noble, for browsers and Node 20) and the server's (node:crypto)
// are one scheme: the same seeds give the same key, and each verifies the other's signatures
// in both directions, so what an app signs is what the server accepts.
import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import * as server from '../crypto/hybrid.ts'
import { HYBRID_PUBLIC_KEY_BYTES, HYBRID_SIGNATURE_BYTES } from '../contract/signing.ts'
import { generateHybridKeyPair, hybridKeyPairFromSeeds, hybridSign, hybridVerify, keyFingerprint, webCryptoHybridVerify } from './hybrid.ts'
import { IdentityKey } from './identity.ts'

const message = new TextEncoder().encode('coffer/cross-verify/v1')

describe('the SDK and the server agree', () => {
  it('on the pinned known-answer key (seeds 00..3f)', () => {
    const seeds = Uint8Array.from({ length: 64 }, (_, i) => i)
    expect(keyFingerprint(hybridKeyPairFromSeeds(seeds).publicKey)).toBe('8cd10c2cc5ca933652c2d40496887e0f5d58901a65b0cdbaf2f73663488f1284')
  })

  it('on the public key the same seeds give, both ways', () => {
    const seeds = randomBytes(64)
    const sdk = hybridKeyPairFromSeeds(seeds)
    const native = server.importHybridSeeds(seeds)
    expect(sdk.publicKey).toHaveLength(HYBRID_PUBLIC_KEY_BYTES)
    expect(Buffer.from(sdk.publicKey).equals(native.publicKey)).toBe(true)
    expect(Buffer.from(server.exportHybridSeeds(native.privateKey)).equals(sdk.seeds)).toBe(true)
    expect(keyFingerprint(sdk.publicKey)).toBe(server.keyFingerprint(native.publicKey))
    const generated = generateHybridKeyPair()
    expect(Buffer.from(server.importHybridSeeds(generated.seeds).publicKey).equals(generated.publicKey)).toBe(true)
  })

  it('the server verifies what the SDK signs', async () => {
    const identity = IdentityKey.generate()
    const signature = await identity.sign(message)
    expect(signature).toHaveLength(HYBRID_SIGNATURE_BYTES)
    expect(await server.hybridVerify(identity.publicKey, message, signature)).toBe(true)
    expect(await server.hybridVerify(identity.publicKey, new TextEncoder().encode('other'), signature)).toBe(false)
  })

  it('the SDK verifies what the server signs, and refuses it altered', async () => {
    const native = server.generateHybridKeyPair()
    const signature = await server.hybridSign(native.privateKey, message)
    expect(hybridVerify(native.publicKey, message, signature)).toBe(true)
    for (const index of [0, 63, 64, HYBRID_SIGNATURE_BYTES - 1]) {
      const altered = Uint8Array.from(signature)
      altered[index]! ^= 1
      expect(hybridVerify(native.publicKey, message, altered), `byte ${index}`).toBe(false)
    }
    expect(hybridVerify(native.publicKey.subarray(1), message, signature)).toBe(false)
    expect(hybridVerify(native.publicKey, message, signature.subarray(1))).toBe(false)
  })

  it('refuses what the server refuses: a small-order Ed25519 half, whatever the signature', async () => {
    const pair = generateHybridKeyPair()
    const signature = hybridSign(pair, message)
    const identityPoint = Uint8Array.from(pair.publicKey)
    identityPoint.fill(0, 0, 32)
    identityPoint[0] = 1
    expect(server.parseHybridPublicKey(identityPoint)).toBeNull()
    expect(hybridVerify(identityPoint, message, signature)).toBe(false)
    expect(await webCryptoHybridVerify(identityPoint, message, signature)).toBe(false)
  })

  it('round-trips an identity key through its seeds', async () => {
    const identity = IdentityKey.generate()
    const again = IdentityKey.fromSeeds(identity.exportSeeds())
    expect(again.publicKeyBase64).toBe(identity.publicKeyBase64)
    expect(again.fingerprint).toBe(identity.fingerprint)
    expect(await again.verify(message, await identity.sign(message))).toBe(true)
    expect(() => IdentityKey.fromSeeds(new Uint8Array(63))).toThrow(/64 bytes/)
  })
})
