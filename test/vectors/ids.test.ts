// Client format v1 ids (docs/client-format.md, "Ids"), recomputed here with node:crypto's HKDF
// and HMAC, independently of format/ids.ts (which uses WebCrypto).
import { createHash, createHmac, hkdfSync } from 'node:crypto'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { albumIdFor, albumName, assetIdFor, namedAssetIdFor } from '../../src/client/format/ids.ts'

const master = Uint8Array.from({ length: 32 }, (_, i) => i)

function independentId(label: string, message: Buffer): string {
  const idKey = Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), 'coffer/v1/ids', 32))
  const digest = createHmac('sha256', idKey)
    .update(Buffer.concat([Buffer.from(label), Buffer.from([0]), message]))
    .digest()
    .subarray(0, 16)
  digest[6] = (digest[6]! & 0x0f) | 0x80
  digest[8] = (digest[8]! & 0x3f) | 0x80
  const hex = digest.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

describe('client format v1 ids', () => {
  it('names an album by HMAC of its NFC name, as a UUIDv8', async () => {
    const id = await albumIdFor(master, '  Cafe\u0301 2024 ')
    expect(id).toBe(independentId('coffer/v1/album-id', Buffer.from('Café 2024'.normalize('NFC'))))
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(await albumIdFor(master, 'café 2024')).not.toBe(id)
  })

  it("names an album again, when a renamed album holds its name's id, by HMAC of a u32 counter and the name under its own label", async () => {
    const counter = Buffer.alloc(4)
    counter.writeUInt32BE(1)
    const again = await albumIdFor(master, ' Holiday', 1)
    expect(again).toBe(independentId('coffer/v1/album-id/again', Buffer.concat([counter, Buffer.from('Holiday')])))
    expect(await albumIdFor(master, 'Holiday', 0)).toBe(await albumIdFor(master, 'Holiday'))
    expect(new Set([await albumIdFor(master, 'Holiday'), again, await albumIdFor(master, 'Holiday', 2)]).size).toBe(3)
    await expect(albumIdFor(master, 'Holiday', 1000)).rejects.toThrow(/0 to 999/)
    await expect(albumIdFor(master, 'Holiday', -1)).rejects.toThrow(/0 to 999/)
    // The vectors' master key is this one (client-format-v1.json "album_ids").
    const vectors = JSON.parse(readFileSync(path.join(import.meta.dirname, 'client-format-v1.json'), 'utf8')) as {
      album_ids: { name: string; attempt: number; album_id: string }[]
    }
    for (const { name, attempt, album_id: albumId } of vectors.album_ids) {
      counter.writeUInt32BE(attempt)
      const message = attempt === 0 ? Buffer.from(name) : Buffer.concat([counter, Buffer.from(name)])
      expect(albumId).toBe(independentId(attempt === 0 ? 'coffer/v1/album-id' : 'coffer/v1/album-id/again', message))
    }
  })

  it('names an asset by HMAC of the album id and the plaintext SHA-256', async () => {
    const albumId = '0b6e1a2c-3d4e-4f50-8a6b-7c8d9e0f1a2b'
    const content = Uint8Array.from({ length: 32 }, (_, i) => 255 - i)
    const id = await assetIdFor(master, albumId, content)
    expect(id).toBe(independentId('coffer/v1/asset-id', Buffer.concat([Buffer.from(albumId.replaceAll('-', ''), 'hex'), Buffer.from(content)])))
    expect(await assetIdFor(master, '0b6e1a2c-3d4e-4f50-8a6b-7c8d9e0f1a2c', content)).not.toBe(id)
    expect(
      await assetIdFor(
        Uint8Array.from({ length: 32 }, () => 7),
        albumId,
        content,
      ),
    ).not.toBe(id)
  })

  it('names the asset of a content under one name by the asset id of SHA-256 of the label, the content hash and the name', async () => {
    const albumId = '0b6e1a2c-3d4e-4f50-8a6b-7c8d9e0f1a2b'
    const content = Uint8Array.from({ length: 32 }, (_, i) => 255 - i)
    const id = await namedAssetIdFor(master, albumId, content, 'trip/IMG_0001 copy.jpg')
    const named = createHash('sha256')
      .update(Buffer.concat([Buffer.from('coffer/v1/asset-id/named'), Buffer.from([0]), Buffer.from(content), Buffer.from('trip/IMG_0001 copy.jpg')]))
      .digest()
    expect(id).toBe(independentId('coffer/v1/asset-id', Buffer.concat([Buffer.from(albumId.replaceAll('-', ''), 'hex'), named])))
    expect(await namedAssetIdFor(master, albumId, content, 'trip/IMG_0001.jpg')).not.toBe(id)
    expect(await assetIdFor(master, albumId, content)).not.toBe(id)
  })

  it('refuses an empty album name and a content hash that is not 32 bytes', async () => {
    expect(() => albumName('   ')).toThrow(/1 to 1024/)
    await expect(assetIdFor(master, '0b6e1a2c-3d4e-4f50-8a6b-7c8d9e0f1a2b', new Uint8Array(31))).rejects.toThrow(/32 bytes/)
  })
})
