// The client's native crypto gives the answers of the portable one: nativeVerify (node:crypto, on
// the libuv pool), the SDK's hybridVerify (noble) and webCryptoHybridVerify (WebCrypto's Ed25519,
// as the web app checks) accept and refuse the same manifests,
// whichever of the two signed them, under the identity key of the format's vectors
// (test/vectors/client-format-v1.json, recovery.identity_seeds): valid, tampered body, a flipped
// signature byte in either half, the wrong key, and a key array the caller changes afterwards;
// and nativeArgon2id gives exactly the bytes of @noble/hashes'.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { decodeCanonical, encodeCanonical } from '../../codec/cbor.ts'
import { fromHex } from '../../sdk/bytes.ts'
import { hybridVerify, webCryptoHybridVerify, type HybridVerifier } from '../../sdk/hybrid.ts'
import { IdentityKey } from '../../sdk/identity.ts'
import { buildEnvelope, readManifest, readManifestWith, signManifest } from '../../sdk/manifest.ts'
import { ESCROW_KDF_DEFAULTS, portableArgon2id, type EscrowKdfParams } from '../format/recovery.ts'
import { nativeArgon2id, nativeIdentity, nativeVerify } from './crypto.ts'

const vectors = JSON.parse(readFileSync(path.join(import.meta.dirname, '../../../test/vectors/client-format-v1.json'), 'utf8')) as {
  keys: { album_id: string; file_id: string; amk_version: number }
  recovery: { identity_seeds: string; user_id: string }
}
const seeds = fromHex(vectors.recovery.identity_seeds)
const portable = IdentityKey.fromSeeds(seeds)
const native = nativeIdentity(seeds)
const stranger = IdentityKey.generate()

const envelope = buildEnvelope({
  crypto_suite_id: 1,
  protocol_version: '2026-06-01',
  album_id: vectors.keys.album_id,
  file_id: vectors.keys.file_id,
  amk_version: vectors.keys.amk_version,
  ciphertext_hash: 'c0'.repeat(32),
  plaintext_size: 40,
  chunk_size: 65536,
  key_mode: 'wrapped',
  created_by_user: vectors.recovery.user_id,
  created_by_device: '22222222-3333-4444-8555-666666666666',
  client_version: 'coffer-client/1',
  action: 'create',
  metadata_blob_hash: 'd0'.repeat(32),
  timestamp: '2026-01-01T00:00:00.000Z',
})

const verifiers: Record<string, HybridVerifier> = {
  'the SDK (noble)': hybridVerify,
  'node:crypto (nativeVerify)': nativeVerify,
  'WebCrypto (webCryptoHybridVerify)': webCryptoHybridVerify,
}

/** What each way of reading answers: the envelope read, or the error's message. */
async function readings(manifest: Uint8Array, publicKey: Uint8Array): Promise<Record<string, unknown>> {
  const answer = (run: () => unknown) =>
    Promise.resolve()
      .then(run)
      .then(
        (read) => (read as { envelope: unknown }).envelope,
        (error: unknown) => (error as Error).message,
      )
  return {
    readManifest: await answer(() => readManifest(manifest, publicKey)),
    ...Object.fromEntries(
      await Promise.all(
        Object.entries(verifiers).map(async ([name, verify]) => [
          `readManifestWith, ${name}`,
          await answer(() => readManifestWith(manifest, publicKey, verify)),
        ]),
      ),
    ),
  }
}

describe('nativeVerify and the SDK agree on manifests', () => {
  it('on the vectors’ identity key: node:crypto and noble derive the same public key', () => {
    expect(Buffer.from(native.publicKey).equals(Buffer.from(portable.publicKey))).toBe(true)
  })

  for (const [signer, identity] of [
    ['the SDK', portable],
    ['node:crypto', native],
  ] as const) {
    describe(`signed by ${signer}`, () => {
      it('accept it under the signer’s key, every way, with the same envelope', async () => {
        const { manifestCbor } = await signManifest(identity, envelope)
        const read = await readings(manifestCbor, portable.publicKey)
        expect(Object.values(read)).toEqual(Object.keys(read).map(() => envelope))
      })

      it('refuse it with a tampered body, a flipped signature byte in either half, or under another key', async () => {
        const { manifestCbor } = await signManifest(identity, envelope)
        const outer = decodeCanonical(manifestCbor) as { body: Uint8Array; sig: Uint8Array }
        const tampered = encodeCanonical({ body: encodeCanonical({ envelope: { ...envelope, plaintext_size: 41 } }), sig: outer.sig })
        const flipped = (index: number) => {
          const sig = Uint8Array.from(outer.sig)
          sig[index]! ^= 1
          return encodeCanonical({ body: outer.body, sig })
        }
        const cases: [string, Uint8Array, Uint8Array][] = [
          ['tampered body', tampered, portable.publicKey],
          ['Ed25519 half flipped', flipped(5), portable.publicKey],
          ['ML-DSA-65 half flipped', flipped(outer.sig.length - 5), portable.publicKey],
          ['wrong key', manifestCbor, stranger.publicKey],
          ['truncated key', manifestCbor, portable.publicKey.subarray(1)],
        ]
        for (const [name, manifest, key] of cases) {
          const read = await readings(manifest, key)
          expect(read, name).toEqual(
            Object.fromEntries(Object.keys(read).map((way) => [way, 'manifest: the signature does not verify under this identity key'])),
          )
        }
      })
    })
  }

  it('nativeVerify and webCryptoHybridVerify answer for the key’s bytes at the call, not for an array it saw before', async () => {
    const message = new TextEncoder().encode('coffer/cache/v1')
    const signature = await portable.sign(message)
    const key = portable.publicKey
    expect(await nativeVerify(key, message, signature)).toBe(true)
    expect(await webCryptoHybridVerify(key, message, signature)).toBe(true)
    key.set(stranger.publicKey) // the caller reuses its array
    expect(await nativeVerify(key, message, signature)).toBe(false)
    expect(await webCryptoHybridVerify(key, message, signature)).toBe(false)
    expect(hybridVerify(key, message, signature)).toBe(false)
    for (let i = 0; i < 6; i++) expect(await nativeVerify(IdentityKey.generate().publicKey, message, signature)).toBe(false) // more keys than it keeps
    expect(await nativeVerify(portable.publicKey, message, signature)).toBe(true)
    expect(await nativeVerify(portable.publicKey, message, signature.subarray(1))).toBe(false)
  })
})

describe('nativeArgon2id', () => {
  const password = Uint8Array.from({ length: 32 }, (_, i) => (i * 29 + 3) & 0xff)
  const salt = Uint8Array.from({ length: 16 }, (_, i) => 0xa0 + i)

  it.each<[string, EscrowKdfParams]>([
    ['the escrow defaults', ESCROW_KDF_DEFAULTS],
    ['the smallest memory', { memoryKiB: 8, passes: 1, lanes: 1 }],
    ['two lanes', { memoryKiB: 1024, passes: 2, lanes: 2 }],
    ['four lanes, memory not a multiple of 4 p', { memoryKiB: 1030, passes: 3, lanes: 4 }],
  ])(
    'gives the same 32 bytes as @noble/hashes (%s)',
    async (_name, params) => {
      const native = await nativeArgon2id(password, salt, params)
      expect(native).toHaveLength(32)
      expect(native).toEqual(await portableArgon2id(password, salt, params))
    },
    60_000,
  )
})
