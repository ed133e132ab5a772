// The SDK's builders refuse, before anything is sent, what the server (or a reader) would
// refuse, naming every field at fault; what they build reads back under the signer's key only.
// (test/http/sdk.builders.test.ts shows the server accepting what they build.)
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { decodeCanonical, encodeCanonical } from '../codec/cbor.ts'
import { DIRECTORY_MAX_BYTES } from '../contract/devices.ts'
import { fromBase64, sha256Hex, toBase64 } from './bytes.ts'
import { readDirectory, signDirectory, type DeviceDirectory } from './directory.ts'
import { IdentityKey } from './identity.ts'
import { CofferInputError } from './input-error.ts'
import { contextSigningBytes } from '../contract/signing.ts'
import {
  buildAssetDeletion,
  buildEnvelope,
  buildLifecycleWrite,
  manifestSigner,
  MANIFEST_CONTEXT,
  readManifest,
  readManifestWith,
  signManifest,
  type EnvelopeInput,
} from './manifest.ts'

const identity = IdentityKey.generate()
const stranger = IdentityKey.generate()
const hash = (c: string) => c.repeat(64)

function fields(overrides: Record<string, unknown> = {}): EnvelopeInput {
  return {
    crypto_suite_id: 1,
    protocol_version: '2026-06-01',
    album_id: randomUUID(),
    file_id: randomUUID(),
    amk_version: 1,
    ciphertext_hash: hash('a'),
    plaintext_size: 1000,
    chunk_size: 65536,
    key_mode: 'derived',
    created_by_user: randomUUID(),
    created_by_device: randomUUID(),
    client_version: 'builders-test/1',
    action: 'create',
    ...overrides,
  } as EnvelopeInput
}

function problems(run: () => unknown): readonly string[] {
  try {
    run()
  } catch (error) {
    if (error instanceof CofferInputError) return error.problems
    throw error
  }
  throw new Error('expected a CofferInputError')
}

async function rejects(run: () => Promise<unknown>): Promise<readonly string[]> {
  try {
    await run()
  } catch (error) {
    if (error instanceof CofferInputError) return error.problems
    throw error
  }
  throw new Error('expected a CofferInputError')
}

describe('buildEnvelope', () => {
  it('makes every nullable field explicit and fills timestamp', () => {
    const envelope = buildEnvelope(fields())
    expect(envelope).toMatchObject({ metadata_blob_hash: null, original_blob_hash: null, prior_provenance_hash: null, retention_until: null })
    expect(Date.parse(envelope.timestamp)).toBeGreaterThan(Date.now() - 60_000)
  })

  it.each([
    ['a file_id that is not a canonical UUID', { file_id: 'ABC' }, 'file_id'],
    ['an uppercase album_id', { album_id: randomUUID().toUpperCase() }, 'album_id'],
    ['a ciphertext_hash in uppercase', { ciphertext_hash: hash('A') }, 'ciphertext_hash'],
    ['a protocol_version not YYYY-MM-DD', { protocol_version: '2026-6-1' }, 'protocol_version'],
    ['a timestamp that is not RFC 3339', { timestamp: 'yesterday' }, 'timestamp'],
    ['a negative plaintext_size', { plaintext_size: -1 }, 'plaintext_size'],
    ['a size past 2^53-1', { chunk_size: 2 ** 53 }, 'chunk_size'],
    ['a fractional amk_version', { amk_version: 1.5 }, 'amk_version'],
    ['an unknown key_mode', { key_mode: 'plain' }, 'key_mode'],
    ['an action the ops operation refuses', { action: 'delete' }, 'action'],
    ['an unknown key (the envelope is strict)', { colour: 'blue' }, 'colour'],
    ['a create that continues a chain', { prior_provenance_hash: hash('b') }, 'prior_provenance_hash'],
    ['a replace without the chain head', { action: 'replace', original_blob_hash: hash('c') }, 'prior_provenance_hash'],
    ['a replace without the current original', { action: 'replace', prior_provenance_hash: hash('b') }, 'original_blob_hash'],
  ])('refuses %s, naming the field', (_name, overrides, field) => {
    const found = problems(() => buildEnvelope(fields(overrides)))
    expect(
      found.some((p) => p.includes(field)),
      found.join('\n'),
    ).toBe(true)
  })

  it('lists every problem at once', () => {
    expect(problems(() => buildEnvelope(fields({ file_id: 'x', chunk_size: -1, key_mode: 'x' }))).length).toBeGreaterThanOrEqual(3)
  })

  it('accepts a replace that names the chain head and the current original', () => {
    expect(buildEnvelope(fields({ action: 'replace', prior_provenance_hash: hash('b'), original_blob_hash: hash('c') })).action).toBe('replace')
  })
})

describe('signed manifests', () => {
  it('read back under the signer’s key, with their hash as the chain position', async () => {
    const envelope = buildEnvelope(fields())
    const signed = await signManifest(identity, envelope, { wrapped_key: new Uint8Array([1, 2, 3]) })
    expect(signed.manifestHash).toBe(sha256Hex(signed.manifestCbor))
    const read = readManifest(signed.manifestCbor, identity.publicKey)
    expect(read.envelope).toEqual(envelope)
    expect(read.content).toEqual({ wrapped_key: new Uint8Array([1, 2, 3]) })
    expect(() => readManifest(signed.manifestCbor, stranger.publicKey)).toThrow(/does not verify/)
  })

  it('read back by readManifestWith under the verifier given, asked once with the signing bytes', async () => {
    const signed = await signManifest(identity, buildEnvelope(fields()))
    const outer = decodeCanonical(signed.manifestCbor) as { body: Uint8Array; sig: Uint8Array }
    const asked: Uint8Array[][] = []
    const yes = async (...args: Uint8Array[]) => {
      asked.push(args)
      return true
    }
    expect((await readManifestWith(signed.manifestCbor, stranger.publicKey, yes)).manifestHash).toBe(signed.manifestHash)
    expect(asked).toEqual([[stranger.publicKey, contextSigningBytes(MANIFEST_CONTEXT, outer.body), outer.sig]])
    await expect(readManifestWith(signed.manifestCbor, identity.publicKey, async () => false)).rejects.toThrow(/does not verify/)
    expect((await readManifestWith(signed.manifestCbor, identity.publicKey)).envelope).toEqual(readManifest(signed.manifestCbor, identity.publicKey).envelope)
    await expect(readManifestWith(signed.manifestCbor, stranger.publicKey)).rejects.toThrow(/does not verify/)
    await expect(readManifestWith(new Uint8Array([0xff]), identity.publicKey, yes)).rejects.toThrow(CofferInputError)
  })

  it('are refused by readManifest when altered or not in the layout', async () => {
    const signed = await signManifest(identity, buildEnvelope(fields()))
    const outer = decodeCanonical(signed.manifestCbor) as { body: Uint8Array; sig: Uint8Array }
    const body = decodeCanonical(outer.body) as { envelope: Record<string, unknown> }
    const altered = encodeCanonical({ body: encodeCanonical({ envelope: { ...body.envelope, plaintext_size: 1 } }), sig: outer.sig })
    expect(() => readManifest(altered, identity.publicKey)).toThrow(/does not verify/)
    expect(() => readManifest(new Uint8Array([0xa0]), identity.publicKey)).toThrow(CofferInputError)
    expect(() => readManifest(new Uint8Array([0xff]), identity.publicKey)).toThrow(CofferInputError)
  })

  it('commit the metadata blob: its hash fills metadata_blob_hash, and a different one is refused', async () => {
    const metadata = new Uint8Array([9, 8, 7])
    const write = await buildLifecycleWrite(identity, { envelope: fields(), metadata })
    expect(write.envelope.metadata_blob_hash).toBe(sha256Hex(metadata))
    expect(write.request.metadata_blob).toBe(toBase64(metadata))
    expect(fromBase64(write.request.manifest_cbor)).toEqual(write.manifestCbor)
    expect(await rejects(() => buildLifecycleWrite(identity, { envelope: fields({ metadata_blob_hash: hash('d') }), metadata }))).toEqual([
      expect.stringContaining('metadata_blob_hash'),
    ])
    expect(await rejects(() => buildLifecycleWrite(identity, { envelope: fields({ metadata_blob_hash: hash('d') }) }))).toEqual([
      expect.stringContaining('metadata'),
    ])
    expect((await buildLifecycleWrite(identity, { envelope: fields() })).request.metadata_blob).toBeNull()
  })

  it('manifestSigner fills the hashes uploadAsset computed', async () => {
    const { ciphertext_hash: _ignored, ...withoutHash } = fields()
    const signed = await manifestSigner(identity, withoutHash)({ ciphertextHash: hash('e'), derivativeHashes: [], metadataBlobHash: hash('f') })
    expect(signed.envelope).toMatchObject({ ciphertext_hash: hash('e'), metadata_blob_hash: hash('f') })
  })
})

describe('buildAssetDeletion', () => {
  async function lastWrite() {
    const signed = await signManifest(
      identity,
      buildEnvelope(
        fields({
          action: 'replace',
          prior_provenance_hash: hash('b'),
          original_blob_hash: hash('c'),
          metadata_blob_hash: hash('d'),
          retention_until: '2020-01-01T00:00:00Z',
        }),
      ),
    )
    return { envelope: signed.envelope, manifestHash: signed.manifestHash }
  }

  it('continues from the last write, names its original twice, commits no metadata, and reads back as a delete', async () => {
    const last = await lastWrite()
    const device = randomUUID()
    const deletion = await buildAssetDeletion(identity, { last, created_by_device: device, client_version: 'builders-test/2' })
    expect(deletion.envelope).toEqual({
      ...last.envelope,
      action: 'delete',
      ciphertext_hash: last.envelope.ciphertext_hash,
      original_blob_hash: last.envelope.ciphertext_hash,
      prior_provenance_hash: last.manifestHash,
      metadata_blob_hash: null,
      retention_until: null,
      created_by_device: device,
      client_version: 'builders-test/2',
      timestamp: expect.any(String),
    })
    expect(Date.parse(deletion.envelope.timestamp)).toBeGreaterThan(Date.now() - 60_000)
    expect([deletion.albumId, deletion.fileId]).toEqual([last.envelope.album_id, last.envelope.file_id])
    expect(deletion.request).toEqual({ manifest_envelope: deletion.envelope, manifest_cbor: toBase64(deletion.manifestCbor) })
    expect(deletion.manifestHash).toBe(sha256Hex(deletion.manifestCbor))
    const read = readManifest(deletion.manifestCbor, identity.publicKey)
    expect(read.envelope).toEqual(deletion.envelope)
    expect(read.envelope.action).toBe('delete')
    expect(() => readManifest(deletion.manifestCbor, stranger.publicKey)).toThrow(/does not verify/)
  })

  it('takes the protocol version, the timestamp and content it is given', async () => {
    const deletion = await buildAssetDeletion(identity, {
      last: await lastWrite(),
      created_by_device: randomUUID(),
      client_version: 'x',
      protocol_version: '2026-09-01',
      timestamp: '2026-07-01T00:00:00.000Z',
      content: { reason: 'duplicate' },
    })
    expect(deletion.envelope).toMatchObject({ protocol_version: '2026-09-01', timestamp: '2026-07-01T00:00:00.000Z' })
    expect(readManifest(deletion.manifestCbor, identity.publicKey).content).toEqual({ reason: 'duplicate' })
  })

  it('refuses what the server would, naming every field at fault', async () => {
    const last = await lastWrite()
    const found = await rejects(() =>
      buildAssetDeletion(identity, {
        last: { envelope: { ...last.envelope, album_id: null }, manifestHash: 'nope' },
        created_by_device: 'pixel',
        client_version: 'x',
        protocol_version: '2026-9-1',
      }),
    )
    for (const field of ['album_id', 'manifestHash', 'created_by_device', 'protocol_version'])
      expect(
        found.some((p) => p.includes(field)),
        `${field}: ${found.join('\n')}`,
      ).toBe(true)
  })

  it('is refused by readManifest when a delete envelope breaks its schema (metadata committed)', async () => {
    const { envelope } = await buildAssetDeletion(identity, { last: await lastWrite(), created_by_device: randomUUID(), client_version: 'x' })
    const signed = await signManifest(identity, { ...envelope, metadata_blob_hash: hash('d') } as unknown as typeof envelope)
    expect(() => readManifest(signed.manifestCbor, identity.publicKey)).toThrow(/metadata_blob_hash/)
  })
})

describe('device directories', () => {
  const device = () => ({ device_id: randomUUID(), public_key: new Uint8Array(32).fill(5), name: 'Laptop' })

  it('read back under the signer’s key only', async () => {
    const directory: DeviceDirectory = { version: 3, devices: [device(), { device_id: randomUUID(), public_key: new Uint8Array([1]) }] }
    const bytes = await signDirectory(identity, directory)
    expect((decodeCanonical(bytes) as { directory_version: number }).directory_version).toBe(3)
    expect(readDirectory(bytes, identity.publicKey)).toEqual(directory)
    expect(() => readDirectory(bytes, stranger.publicKey)).toThrow(/does not verify/)
    expect(() => readDirectory(encodeCanonical({ directory_version: 3 }), identity.publicKey)).toThrow(CofferInputError)
  })

  it('carries each device’s encryption key when given, signed, and reads it back', async () => {
    const directory: DeviceDirectory = { version: 1, devices: [{ ...device(), encryption_key: new Uint8Array(1216).fill(7) }, device()] }
    const bytes = await signDirectory(identity, directory)
    const read = readDirectory(bytes, identity.publicKey)
    expect(read).toEqual(directory)
    expect(read.devices[0]?.encryption_key).toEqual(new Uint8Array(1216).fill(7))
    expect('encryption_key' in read.devices[1]!).toBe(false)
    // The key is inside the signed body: a directory whose key was swapped does not read.
    const outer = decodeCanonical(bytes) as { directory_version: number; body: Uint8Array; sig: Uint8Array }
    const body = decodeCanonical(outer.body) as { devices: Record<string, unknown>[] }
    body.devices[0]!.encryption_key = new Uint8Array(1216).fill(8)
    expect(() => readDirectory(encodeCanonical({ ...outer, body: encodeCanonical(body) }), identity.publicKey)).toThrow(/does not verify/)
  })

  it('carries when a device was added, signed, and reads it back', async () => {
    const directory: DeviceDirectory = { version: 2, devices: [{ ...device(), added_at: '2026-03-01T14:02:11.000Z' }, device()] }
    const bytes = await signDirectory(identity, directory)
    const read = readDirectory(bytes, identity.publicKey)
    expect(read).toEqual(directory)
    expect('added_at' in read.devices[1]!).toBe(false)
    const outer = decodeCanonical(bytes) as { directory_version: number; body: Uint8Array; sig: Uint8Array }
    const body = decodeCanonical(outer.body) as { devices: Record<string, unknown>[] }
    body.devices[0]!.added_at = '2020-01-01T00:00:00Z'
    expect(() => readDirectory(encodeCanonical({ ...outer, body: encodeCanonical(body) }), identity.publicKey)).toThrow(/does not verify/)
  })

  it('refuses a version past the outer one in the signed body', async () => {
    const bytes = await signDirectory(identity, { version: 3, devices: [] })
    const outer = decodeCanonical(bytes) as Record<string, unknown>
    expect(() => readDirectory(encodeCanonical({ ...outer, directory_version: 4 }), identity.publicKey)).toThrow(/directory_version/)
  })

  it.each([
    ['a negative version', { version: -1, devices: [] }, 'version'],
    ['a fractional version', { version: 1.5, devices: [] }, 'version'],
    ['a version past 2^53-1', { version: 2 ** 53, devices: [] }, 'version'],
    ['a device id that is not a canonical UUID', { version: 1, devices: [{ device_id: 'laptop', public_key: new Uint8Array(1) }] }, 'devices/0/device_id'],
    ['an empty device key', { version: 1, devices: [{ device_id: randomUUID(), public_key: new Uint8Array() }] }, 'devices/0/public_key'],
    [
      'an empty encryption key',
      { version: 1, devices: [{ device_id: randomUUID(), public_key: new Uint8Array(1), encryption_key: new Uint8Array() }] },
      'devices/0/encryption_key',
    ],
    [
      'an encryption key past 4096 bytes',
      { version: 1, devices: [{ device_id: randomUUID(), public_key: new Uint8Array(1), encryption_key: new Uint8Array(4097) }] },
      'devices/0/encryption_key',
    ],
    [
      'an encryption key that is not bytes',
      { version: 1, devices: [{ device_id: randomUUID(), public_key: new Uint8Array(1), encryption_key: 'AAAA' }] },
      'devices/0/encryption_key',
    ],
    ['a blank device name', { version: 1, devices: [{ device_id: randomUUID(), public_key: new Uint8Array(1), name: ' ' }] }, 'devices/0/name'],
    [
      'an added time that is not RFC 3339',
      { version: 1, devices: [{ device_id: randomUUID(), public_key: new Uint8Array(1), added_at: '1 March 2026' }] },
      'devices/0/added_at',
    ],
    [
      'an added time that is no date',
      { version: 1, devices: [{ device_id: randomUUID(), public_key: new Uint8Array(1), added_at: '2026-13-45T99:00:00Z' }] },
      'devices/0/added_at',
    ],
    [
      'an added time that is not a string',
      { version: 1, devices: [{ device_id: randomUUID(), public_key: new Uint8Array(1), added_at: 1772373731 }] },
      'devices/0/added_at',
    ],
    ['an unknown device field', { version: 1, devices: [{ device_id: randomUUID(), public_key: new Uint8Array(1), colour: 'red' }] }, 'colour'],
    ['too many devices', { version: 1, devices: Array.from({ length: 65 }, () => ({ device_id: randomUUID(), public_key: new Uint8Array(1) })) }, 'at most 64'],
  ])('refuses %s', async (_name, directory, expected) => {
    const found = await rejects(() => signDirectory(identity, directory as DeviceDirectory))
    expect(
      found.some((p) => p.includes(expected)),
      found.join('\n'),
    ).toBe(true)
  })

  it('refuses a device listed twice', async () => {
    const one = device()
    expect(await rejects(() => signDirectory(identity, { version: 1, devices: [one, { ...one }] }))).toEqual([expect.stringContaining('listed twice')])
  })

  it(`refuses a directory past ${DIRECTORY_MAX_BYTES} bytes`, async () => {
    const devices = Array.from({ length: 64 }, () => ({ device_id: randomUUID(), public_key: new Uint8Array(4096) }))
    expect(await rejects(() => signDirectory(identity, { version: 1, devices }))).toEqual([expect.stringContaining(`at most ${DIRECTORY_MAX_BYTES}`)])
  })
})

describe('canonical CBOR', () => {
  it('decodeCanonical refuses bytes that are not the canonical encoding', () => {
    expect(decodeCanonical(encodeCanonical({ b: 1, a: [1, 'x'] }))).toEqual({ a: [1, 'x'], b: 1 })
    expect(() => decodeCanonical(new Uint8Array([0xa2, 0x61, 0x62, 0x01, 0x61, 0x61, 0x02]))).toThrow(/canonical/) // keys out of order
    expect(() => decodeCanonical(new Uint8Array([0x18, 0x01]))).toThrow() // 1 in a longer form than needed
    expect(() => decodeCanonical(new Uint8Array([0xa2, 0x61, 0x61, 0x01, 0x61, 0x61, 0x02]))).toThrow() // duplicate key
  })
})
