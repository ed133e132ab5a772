// Content keys (docs/client-format.md, "Content keys"): recomputed here with node:crypto from the
// page's formulas; the same content gives the same keys under one master key only; the salt
// depends on the chunk size; metadata version 2 carries the keyed hash, version 1 cannot.
import { createHash, createHmac, hkdfSync } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { encodeCanonical } from '../../codec/cbor.ts'
import { contentKeys, contentMacOf } from './content.ts'
import { ClientFormatError } from './errors.ts'
import { decodeMetadata, encodeMetadata, type AssetMetadata } from './metadata.ts'

const master = new Uint8Array(32).fill(7)
const sha = createHash('sha256').update('a photo').digest()
const hkdf = (ikm: Uint8Array, salt: Uint8Array, info: Buffer, length: number) => new Uint8Array(hkdfSync('sha256', ikm, salt, info, length))

describe('content keys', () => {
  it('are the formulas of the client format page', async () => {
    const key = hkdf(master, new Uint8Array(0), Buffer.from('coffer/v1/content'), 32)
    const mac = new Uint8Array(createHmac('sha256', key).update(sha).digest())
    const chunk = Buffer.alloc(4)
    chunk.writeUInt32BE(65_536)
    const keys = await contentKeys(master, sha, 65_536)
    expect(keys.contentMac).toEqual(mac)
    expect(await contentMacOf(master, sha)).toEqual(mac)
    expect(keys.fileKey).toEqual(hkdf(key, mac, Buffer.from('coffer/v1/content/file-key'), 32))
    expect(keys.salt).toEqual(hkdf(key, mac, Buffer.concat([Buffer.from('coffer/v1/content/salt'), Buffer.from([0]), chunk]), 16))
  })

  it('follow from the content, the account and the chunk size', async () => {
    const keys = await contentKeys(master, sha, 65_536)
    expect(await contentKeys(master, sha, 65_536)).toEqual(keys)
    const other = await contentKeys(master, createHash('sha256').update('another photo').digest(), 65_536)
    expect(other.fileKey).not.toEqual(keys.fileKey)
    const account = await contentKeys(new Uint8Array(32).fill(8), sha, 65_536)
    expect(account.contentMac).not.toEqual(keys.contentMac)
    expect(account.fileKey).not.toEqual(keys.fileKey)
    const chunked = await contentKeys(master, sha, 1 << 20)
    expect(chunked.fileKey).toEqual(keys.fileKey)
    expect(chunked.salt).not.toEqual(keys.salt) // one (key, salt) never splits a plaintext two ways
    await expect(contentKeys(master, new Uint8Array(31), 65_536)).rejects.toThrow(TypeError)
  })
})

describe('metadata version 2', () => {
  const metadata: AssetMetadata = {
    name: 'IMG_1.jpg',
    size: 7,
    type: 'image/jpeg',
    modified: null,
    captured: null,
    width: null,
    height: null,
    blobs: [{ kind: 'original', hash: new Uint8Array(32).fill(1), size: 7, type: 'image/jpeg' }],
  }
  const mac = new Uint8Array(32).fill(9)

  it('carries the keyed hash; version 1 is written and read without one', () => {
    expect(decodeMetadata(encodeMetadata({ ...metadata, contentMac: mac }))).toEqual({ ...metadata, contentMac: mac })
    expect(decodeMetadata(encodeMetadata(metadata))).toEqual(metadata)
  })

  it('refuses a version 2 without it, a version 1 with it, and one of the wrong length', () => {
    const value = {
      v: 2,
      name: 'IMG_1.jpg',
      size: 7,
      type: 'image/jpeg',
      modified: null,
      captured: null,
      width: null,
      height: null,
      blobs: [{ kind: 'original', hash: new Uint8Array(32).fill(1), size: 7, type: 'image/jpeg' }],
    }
    for (const bad of [value, { ...value, v: 1, content_mac: mac }, { ...value, content_mac: new Uint8Array(31) }, { ...value, v: 3, content_mac: mac }]) {
      expect(() => decodeMetadata(encodeCanonical(bad))).toThrow(ClientFormatError)
    }
  })
})
