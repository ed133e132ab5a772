// The metadata's optional location (docs/client-format.md, "Metadata blob"): integers of 1e-7
// degree in the CBOR, degrees in and out, present only when given, refused out of range.
import { describe, expect, it } from 'vitest'
import { decodeCanonical, encodeCanonical } from '../../codec/cbor.ts'
import { ClientFormatError } from './errors.ts'
import { generateFileKey, deriveAlbumKey } from './keys.ts'
import { decodeMetadata, encodeMetadata, openMetadata, sealMetadata, type AssetMetadata } from './metadata.ts'

const metadata: AssetMetadata = {
  name: 'IMG_0002.jpg',
  size: 1234,
  type: 'image/jpeg',
  modified: 1_767_225_600_000,
  captured: 1_767_222_000_123,
  width: 4032,
  height: 3024,
  blobs: [{ kind: 'original', hash: new Uint8Array(32).fill(1), size: 1234, type: 'image/jpeg' }],
}
const eiffelTower = { latitude: 48.8582333, longitude: 2.2945528 }

describe('metadata location', () => {
  it('is stored as two integers of 1e-7 degree and read back as the same degrees', async () => {
    const cbor = encodeMetadata({ ...metadata, location: eiffelTower })
    expect((decodeCanonical(cbor) as Record<string, unknown>).location).toEqual([488_582_333, 22_945_528])
    expect(decodeMetadata(cbor)).toEqual({ ...metadata, location: eiffelTower })

    const albumKey = await deriveAlbumKey(new Uint8Array(32).fill(2), '0b9e3a62-3f8c-4d8e-9a52-4a1f3c6a7b10', 1)
    const ids = { albumId: '0b9e3a62-3f8c-4d8e-9a52-4a1f3c6a7b10', fileId: '5f1d2c3b-4a59-4e68-8f7a-6b5c4d3e2f10' }
    const southWest = { latitude: -33.8567844, longitude: -151.2152967 }
    const sealed = await sealMetadata(albumKey, ids, generateFileKey(), { ...metadata, location: southWest })
    expect((await openMetadata(albumKey, ids, sealed)).metadata.location).toEqual(southWest)
  })

  it('keeps the extremes and rounds finer degrees to 1e-7', () => {
    for (const corner of [
      { latitude: 90, longitude: 180 },
      { latitude: -90, longitude: -180 },
      { latitude: 0, longitude: 0 },
    ]) {
      expect(decodeMetadata(encodeMetadata({ ...metadata, location: corner })).location).toEqual(corner)
    }
    expect(decodeMetadata(encodeMetadata({ ...metadata, location: { latitude: 1.234567891, longitude: -1.23456785 } })).location).toEqual({
      latitude: 1.2345679,
      longitude: -1.2345678,
    })
  })

  it('is absent unless given', () => {
    const cbor = encodeMetadata(metadata)
    expect(Object.keys(decodeCanonical(cbor) as object)).not.toContain('location')
    expect('location' in decodeMetadata(cbor)).toBe(false)
  })

  it('keeps every other key required and refuses unknown ones', () => {
    const stored = { v: 1, ...metadata, location: [1, 2], blobs: metadata.blobs.map((blob) => ({ ...blob })) }
    expect(decodeMetadata(encodeCanonical(stored)).location).toEqual({ latitude: 1e-7, longitude: 2e-7 })
    const { captured: _captured, ...withoutCaptured } = stored
    for (const value of [{ ...stored, place: 'Paris' }, { ...stored, x: 1 }, withoutCaptured]) {
      expect(() => decodeMetadata(encodeCanonical(value))).toThrow(
        /keys: expected blobs, captured, height, modified, name, size, type, v, width and optionally location/,
      )
    }
  })

  it('refuses a latitude or longitude out of range, or not a number, when encoding', () => {
    for (const location of [
      { latitude: 90.0000001, longitude: 0 },
      { latitude: -91, longitude: 0 },
      { latitude: 0, longitude: 180.0000001 },
      { latitude: 0, longitude: -200 },
      { latitude: Number.NaN, longitude: 0 },
      { latitude: 0, longitude: Number.POSITIVE_INFINITY },
    ]) {
      expect(() => encodeMetadata({ ...metadata, location }), JSON.stringify(location)).toThrow(/location: \[latitude, longitude\]/)
    }
  })

  it('refuses a stored location out of range or of the wrong shape when decoding', () => {
    const stored = { v: 1, ...metadata, blobs: metadata.blobs.map((blob) => ({ ...blob })) }
    for (const location of [[900_000_001, 0], [0, -1_800_000_001], [1], [1, 2, 3], ['1', 2], { latitude: 1, longitude: 2 }, null]) {
      const decode = (): AssetMetadata => decodeMetadata(encodeCanonical({ ...stored, location }))
      expect(decode, JSON.stringify(location)).toThrow(ClientFormatError)
      expect(decode, JSON.stringify(location)).toThrow(/location: \[latitude, longitude\]/)
    }
    expect(decodeMetadata(encodeCanonical({ ...stored, location: [900_000_000, -1_800_000_000] })).location).toEqual({ latitude: 90, longitude: -180 })
  })
})

describe('metadata version 3', () => {
  const mac = new Uint8Array(32).fill(9)
  const v3: AssetMetadata = { ...metadata, contentMac: mac, capturedSource: 'exif-digitized', capturedOffset: -420 }
  const stored = {
    ...metadata,
    v: 3,
    content_mac: mac,
    captured_source: 'exif-digitized',
    captured_offset: -420,
    blobs: metadata.blobs.map((blob) => ({ ...blob })),
  }

  it('carries where the capture time came from and its offset, null without one; versions 1 and 2 are still written and read', () => {
    expect(decodeCanonical(encodeMetadata(v3))).toEqual(stored)
    expect(decodeMetadata(encodeMetadata(v3))).toEqual(v3)
    const undated = { ...v3, captured: null, capturedSource: null, capturedOffset: null }
    expect(decodeMetadata(encodeMetadata(undated))).toEqual(undated)
    // A floating time: a wall clock without an offset, stored as if UTC.
    const floating = { ...v3, capturedOffset: null }
    expect(decodeMetadata(encodeMetadata(floating))).toEqual(floating)
    for (const offset of [-1080, 0, 1080, 345]) expect(decodeMetadata(encodeMetadata({ ...v3, capturedOffset: offset })).capturedOffset).toBe(offset)
    // -0 is written as the integer 0, not a float.
    expect(encodeMetadata({ ...v3, capturedOffset: -0 })).toEqual(encodeMetadata({ ...v3, capturedOffset: 0 }))
    const { capturedSource: _source, capturedOffset: _offset, ...v2 } = v3
    expect((decodeCanonical(encodeMetadata(v2)) as { v: number }).v).toBe(2)
    expect(decodeMetadata(encodeMetadata(v2))).toEqual(v2)
  })

  it('refuses an unknown source, a source without a capture time or none with one, an offset out of range or without a capture time, and any of these keys in the wrong version', () => {
    for (const [bad, problem] of [
      [{ ...stored, captured_source: 'exif' }, /captured_source: one of exif-original, exif-digitized, exif-modified, gps, or null/],
      [{ ...stored, captured_source: 'file-name' }, /captured_source: one of/],
      [{ ...stored, captured_source: null }, /captured_source: null exactly when captured is null/],
      [{ ...stored, captured: null }, /captured_source: null exactly when captured is null/],
      [{ ...stored, captured: null, captured_source: null }, /captured_offset: null when captured is null/],
      [{ ...stored, captured_offset: 1081 }, /captured_offset: an integer of minutes from -1080 to 1080, or null/],
      [{ ...stored, captured_offset: -1081 }, /captured_offset: an integer of minutes/],
      [{ ...stored, captured_offset: 'Z' }, /captured_offset: an integer of minutes/],
      [{ ...stored, captured_offset: '+02:00' }, /captured_offset: an integer of minutes/],
      [{ ...stored, v: 2 }, /keys: expected .*content_mac/],
      [{ ...stored, v: 4 }, /v: expected 1, 2 or 3/],
      [(({ captured_source: _source, ...rest }) => rest)(stored), /keys: expected blobs, captured, captured_offset, captured_source, content_mac/],
      [(({ captured_offset: _offset, ...rest }) => rest)(stored), /keys: expected blobs, captured, captured_offset, captured_source, content_mac/],
      [(({ captured_source: _source, captured_offset: _offset, ...rest }) => ({ ...rest, v: 2, captured_offset: 0 }))(stored), /keys: expected .*\(v 2\)/],
    ] as const) {
      expect(
        () => decodeMetadata(encodeCanonical(bad)),
        JSON.stringify(bad, (_key, value) => (value instanceof Uint8Array ? '…' : value)),
      ).toThrow(problem)
    }
    // A float that is not a whole minute: CBOR keeps it a float.
    expect(() => decodeMetadata(encodeCanonical({ ...stored, captured_offset: 90.5 }))).toThrow(/captured_offset: an integer of minutes/)
    expect(() => encodeMetadata({ ...metadata, capturedSource: 'gps', capturedOffset: 0 })).toThrow(/keys: expected .*\(v 1\)/) // a source needs version 3, which has content_mac
    expect(() => encodeMetadata({ ...v3, captured: null })).toThrow(/captured_source: null exactly when captured is null/)
    const { capturedOffset: _offset, ...sourceOnly } = v3
    expect(() => encodeMetadata(sourceOnly)).toThrow(/keys: expected .*captured_offset/) // version 3 needs both
    expect(() => encodeMetadata({ ...v3, capturedOffset: 1440 })).toThrow(/captured_offset: an integer of minutes/)
  })
})
