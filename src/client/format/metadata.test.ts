// The metadata's optional location (docs/client-format.md, "Metadata blob"): integers of 1e-7
// degree in the CBOR, degrees in and out, present only when given, refused out of range; version
// 3's capture-time source and offset, and its optional camera facts; the favourite mark.
import { describe, expect, it } from 'vitest'
import { decodeCanonical, encodeCanonical } from '../../codec/cbor.ts'
import { ClientFormatError } from './errors.ts'
import { generateFileKey, deriveAlbumKey } from './keys.ts'
import {
  decodeMetadata,
  DESCRIPTION_MAX,
  descriptionOf,
  encodeMetadata,
  openMetadata,
  sealMetadata,
  SOURCED_CAPTURES,
  type AssetMetadata,
  type CameraFacts,
} from './metadata.ts'
import { cameraFromTags, exposureFraction } from '../media.ts'

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
        /keys: expected blobs, captured, height, modified, name, size, type, v, width and optionally favourite, location/,
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
    favourite: false,
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
      [{ ...stored, v: 4 }, /keys: expected .*duration.*\(v 4\)/],
      [{ ...stored, v: 6 }, /v: expected 1, 2, 3, 4 or 5/],
      [{ ...stored, captured_source: 'takeout' }, /captured_source: one of exif-original, exif-digitized, exif-modified, gps, or null/],
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

describe('metadata version 3: the camera facts', () => {
  const mac = new Uint8Array(32).fill(9)
  const camera: CameraFacts = {
    make: 'FUJIFILM',
    model: 'X-T5',
    lens: 'XF23mmF1.4 R LM WR',
    exposureTime: [1, 4000],
    fNumberTenths: 14,
    iso: 3200,
    focalLengthTenths: 230,
  }
  const v3: AssetMetadata = { ...metadata, contentMac: mac, capturedSource: 'exif-original', capturedOffset: 60, camera }
  const stored = {
    ...metadata,
    v: 3,
    favourite: false,
    content_mac: mac,
    captured_source: 'exif-original',
    captured_offset: 60,
    camera: { make: 'FUJIFILM', model: 'X-T5', lens: 'XF23mmF1.4 R LM WR', exposure_time: [1, 4000], f_number_tenths: 14, iso: 3200, focal_length_tenths: 230 },
    blobs: metadata.blobs.map((blob) => ({ ...blob })),
  }

  it('writes the camera map with the fields known, reads them back, and leaves it out when none is', () => {
    expect(decodeCanonical(encodeMetadata(v3))).toEqual(stored)
    expect(decodeMetadata(encodeMetadata(v3))).toEqual(v3)
    const some = { ...v3, camera: { model: 'iPhone 15', exposureTime: [3, 10] as const } }
    expect((decodeCanonical(encodeMetadata(some)) as { camera: unknown }).camera).toEqual({ model: 'iPhone 15', exposure_time: [3, 10] })
    expect(decodeMetadata(encodeMetadata(some))).toEqual(some)
    const { camera: _camera, ...without } = v3
    expect(decodeCanonical(encodeMetadata(without))).not.toHaveProperty('camera')
    expect(decodeMetadata(encodeMetadata(without))).not.toHaveProperty('camera')
  })

  it('refuses a malformed camera map: empty, unknown keys, text too long or with control characters, numbers not whole, 0 or past 32 bits, a fraction not of two; and any camera before version 3', () => {
    const long = 'x'.repeat(256)
    for (const [camera, problem] of [
      [{}, /camera: at least one field/],
      [[], /camera: a map/],
      ['Canon', /camera: a map/],
      [{ make: 'Canon', shutter: 1 }, /camera: unknown keys shutter/],
      [{ make: '' }, /camera.make: text of 1 to 255/],
      [{ model: long }, /camera.model: text of 1 to 255/],
      [{ lens: 'RF\u000035mm' }, /camera.lens: text .* without control characters/],
      [{ lens: 'RF\n35mm' }, /camera.lens: text .* without control characters/],
      [{ make: 7 }, /camera.make: text/],
      [{ iso: 0 }, /camera.iso: an integer from 1 to 4294967295/],
      [{ iso: -100 }, /camera.iso: an integer/],
      [{ iso: 2 ** 32 }, /camera.iso: an integer/],
      [{ f_number_tenths: 2.8 }, /camera.f_number_tenths: an integer/],
      [{ focal_length_tenths: '350' }, /camera.focal_length_tenths: an integer/],
      [{ exposure_time: 0.004 }, /camera.exposure_time: \[numerator, denominator\]/],
      [{ exposure_time: [1] }, /camera.exposure_time: \[numerator, denominator\]/],
      [{ exposure_time: [1, 250, 1] }, /camera.exposure_time/],
      [{ exposure_time: [1, 0] }, /camera.exposure_time/],
      [{ exposure_time: [0, 1] }, /camera.exposure_time/],
    ] as const) {
      expect(() => decodeMetadata(encodeCanonical({ ...stored, camera })), JSON.stringify(camera)).toThrow(ClientFormatError)
      expect(() => decodeMetadata(encodeCanonical({ ...stored, camera })), JSON.stringify(camera)).toThrow(problem)
    }
    expect(() => decodeMetadata(encodeCanonical({ ...stored, v: 2, captured_source: undefined }))).toThrow(/keys/)
    const { captured_source: _source, captured_offset: _offset, ...v2 } = stored
    expect(() => decodeMetadata(encodeCanonical({ ...v2, v: 2 }))).toThrow(/keys: expected .* and optionally favourite, location \(v 2\); got .*camera/)
    // The writer checks as the reader does: a camera beside a version 2 capture time, or a malformed one, is not written.
    const { capturedSource: _s, capturedOffset: _o, ...asV2 } = v3
    expect(() => encodeMetadata(asV2)).toThrow(/\(v 2\)/)
    expect(() => encodeMetadata({ ...v3, camera: { iso: 0 } })).toThrow(/camera.iso/)
    expect(() => encodeMetadata({ ...v3, camera: {} })).toThrow(/camera: at least one field/)
  })
})

describe('cameraFromTags (media.ts): the camera facts from EXIF tags as exifr reads them', () => {
  it('keeps what fits the metadata and leaves out the rest', () => {
    expect(
      cameraFromTags({
        Make: 'NIKON CORPORATION\0\0',
        Model: ' NIKON Z 6 ',
        LensModel: 'NIKKOR Z 24-70mm f/4 S',
        ExposureTime: 0.008,
        FNumber: 4,
        ISO: [400, 400],
        FocalLength: 24.5,
      }),
    ).toEqual({
      make: 'NIKON CORPORATION',
      model: 'NIKON Z 6',
      lens: 'NIKKOR Z 24-70mm f/4 S',
      exposureTime: [1, 125],
      fNumberTenths: 40,
      iso: 400,
      focalLengthTenths: 245,
    })
    expect(cameraFromTags({})).toBeNull()
    expect(cameraFromTags({ Make: '', Model: 'x'.repeat(300), LensModel: 'a\nb', ExposureTime: 0, FNumber: Number.NaN, ISO: 0, FocalLength: -1 })).toBeNull()
    expect(cameraFromTags({ Make: new Uint8Array(3), ISO: '100' })).toBeNull()
  })

  it('writes an exposure time as a camera states it', () => {
    expect(exposureFraction(1 / 250)).toEqual([1, 250])
    expect(exposureFraction(1 / 3)).toEqual([1, 3])
    expect(exposureFraction(1 / 8000)).toEqual([1, 8000])
    expect(exposureFraction(0.3)).toEqual([3, 10])
    expect(exposureFraction(2.5)).toEqual([5, 2])
    expect(exposureFraction(30)).toEqual([30, 1])
    expect(exposureFraction(1)).toEqual([1, 1])
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, 1e9, '1/250']) expect(exposureFraction(bad), String(bad)).toBeUndefined()
  })
})

describe("metadata cover (an album record's)", () => {
  const record: AssetMetadata = {
    ...metadata,
    name: 'Spain 2019',
    size: 0,
    type: 'application/vnd.coffer.album',
    contentMac: new Uint8Array(32).fill(3),
    captured: null,
    capturedSource: null,
    capturedOffset: null,
  }
  const cover = '5f1d2c3b-4a59-8e68-8f7a-6b5c4d3e2f10'

  it('is an asset id, version 3 only, absent unless given', () => {
    expect(decodeMetadata(encodeMetadata({ ...record, cover }))).toEqual({ ...record, cover })
    expect('cover' in decodeMetadata(encodeMetadata(record))).toBe(false)
    for (const bad of ['5F1D2C3B-4A59-8E68-8F7A-6B5C4D3E2F10', 'cover.jpg', ''])
      expect(() => encodeMetadata({ ...record, cover: bad }), bad).toThrow(/cover: an asset id/)
    const stored = { ...(decodeCanonical(encodeMetadata({ ...record, cover })) as Record<string, unknown>) }
    expect(() => decodeMetadata(encodeCanonical({ ...stored, cover: 7 }))).toThrow(/cover: an asset id/)
    const { captured_source: _s, captured_offset: _o, ...v2 } = stored
    expect(() => decodeMetadata(encodeCanonical({ ...v2, v: 2 }))).toThrow(/keys: expected/)
  })
})

describe('metadata favourite', () => {
  it('is written as a boolean in every version 3 metadata (the same size either way) and when given; read as true or absent; anything else is refused', () => {
    const v3: AssetMetadata = { ...metadata, contentMac: new Uint8Array(32).fill(3), capturedSource: 'gps', capturedOffset: 0 }
    const marked = encodeMetadata({ ...v3, favourite: true })
    const unmarked = encodeMetadata(v3)
    expect(decodeCanonical(marked)).toMatchObject({ v: 3, favourite: true })
    expect(decodeCanonical(unmarked)).toMatchObject({ v: 3, favourite: false })
    expect(encodeMetadata({ ...v3, favourite: false })).toEqual(unmarked)
    expect(marked.length).toBe(unmarked.length)
    expect(decodeMetadata(marked)).toEqual({ ...v3, favourite: true })
    expect(decodeMetadata(unmarked)).toEqual(v3)
    // Versions 1 and 2: only when given (a photo stored before version 3, marked since).
    expect(decodeCanonical(encodeMetadata(metadata))).not.toHaveProperty('favourite')
    expect(decodeCanonical(encodeMetadata({ ...metadata, favourite: true }))).toMatchObject({ v: 1, favourite: true })
    expect(decodeMetadata(encodeMetadata({ ...metadata, favourite: true }))).toEqual({ ...metadata, favourite: true })
    const stored = { v: 1, ...metadata, blobs: metadata.blobs.map((blob) => ({ ...blob })) }
    for (const value of [1, 'yes', null]) expect(() => decodeMetadata(encodeCanonical({ ...stored, favourite: value }))).toThrow(/favourite: true or false/)
  })
})

describe('metadata version 4: a video', () => {
  const v3: AssetMetadata = {
    ...metadata,
    type: 'video/mp4',
    contentMac: new Uint8Array(32).fill(4),
    capturedSource: null,
    captured: null,
    capturedOffset: null,
  }

  it('is version 3 with a duration: written only when there is one, read back as it was', () => {
    const video = { ...v3, duration: 61_500 }
    expect(decodeCanonical(encodeMetadata(video))).toMatchObject({ v: 4, duration: 61_500, favourite: false })
    expect(decodeMetadata(encodeMetadata(video))).toEqual(video)
    expect(decodeMetadata(encodeMetadata({ ...video, favourite: true }))).toEqual({ ...video, favourite: true })
    // Without one (a photo, a video whose length was not read): version 3, as before.
    expect(decodeCanonical(encodeMetadata(v3))).toMatchObject({ v: 3 })
    expect(decodeCanonical(encodeMetadata(v3))).not.toHaveProperty('duration')
  })

  it('refuses a duration that is not whole milliseconds, one before version 4, and a version 4 without one', () => {
    for (const bad of [-1, 1.5, Number.NaN]) expect(() => encodeMetadata({ ...v3, duration: bad }), String(bad)).toThrow(/duration: an unsigned integer/)
    // A duration needs version 3's fields: beside a version 1 metadata it is an unknown key.
    expect(() => encodeMetadata({ ...metadata, duration: 1000 })).toThrow(/keys: expected .*\(v 1\)/)
    const stored = decodeCanonical(encodeMetadata({ ...v3, duration: 1000 })) as Record<string, unknown>
    const { duration: _duration, ...withoutDuration } = stored
    expect(() => decodeMetadata(encodeCanonical(withoutDuration))).toThrow(/keys: expected .*duration/)
    expect(() => decodeMetadata(encodeCanonical({ ...stored, v: 3 }))).toThrow(/keys: expected/)
    expect(() => decodeMetadata(encodeCanonical({ ...stored, v: 6 }))).toThrow(/v: expected 1, 2, 3, 4 or 5/)
  })
})

describe('metadata version 5: a date from a sidecar or a container, a description', () => {
  const v3: AssetMetadata = {
    ...metadata,
    contentMac: new Uint8Array(32).fill(7),
    captured: 1_562_236_496_000,
    capturedSource: 'exif-original',
    capturedOffset: 120,
  }

  it('is written for a capture source that is not EXIF, and for a description; read back as it was', () => {
    for (const source of SOURCED_CAPTURES) {
      const sourced = { ...v3, capturedSource: source }
      expect(decodeCanonical(encodeMetadata(sourced)), source).toMatchObject({ v: 5, captured_source: source })
      expect(decodeMetadata(encodeMetadata(sourced))).toEqual(sourced)
    }
    const described = { ...v3, description: "Grandma's 80th\n\tin the garden ☀️" }
    expect(decodeCanonical(encodeMetadata(described))).toMatchObject({ v: 5, description: described.description })
    expect(decodeMetadata(encodeMetadata(described))).toEqual(described)
    // A video's length comes along, optional in 5; without any of these a photo stays 3 and a video 4.
    const video = { ...v3, capturedSource: 'container' as const, duration: 5000 }
    expect(decodeMetadata(encodeMetadata(video))).toEqual(video)
    expect(decodeCanonical(encodeMetadata({ ...v3, duration: 5000 }))).toMatchObject({ v: 4 })
    expect(decodeCanonical(encodeMetadata(v3))).toMatchObject({ v: 3 })
    expect(decodeCanonical(encodeMetadata(v3))).not.toHaveProperty('description')
  })

  it('takes a caption as a description can hold it: controls made spaces, trimmed, clipped whole', () => {
    expect(descriptionOf('  Line one\r\nline two\rthree\u0007four\u0085 ')).toBe('Line one\nline two\nthree four')
    expect(descriptionOf(' \t\n ')).toBeNull()
    expect(descriptionOf('x'.repeat(DESCRIPTION_MAX + 10))).toHaveLength(DESCRIPTION_MAX)
    // A surrogate pair the limit would split is left out whole.
    const clipped = descriptionOf(`${'x'.repeat(DESCRIPTION_MAX - 1)}😀tail`)!
    expect(clipped).toBe('x'.repeat(DESCRIPTION_MAX - 1))
    for (const text of ['Grandma\tat 80', 'x'.repeat(DESCRIPTION_MAX + 1), 'a\u0000b'])
      expect(encodeMetadata({ ...v3, description: descriptionOf(text)! }), JSON.stringify(text)).toBeInstanceOf(Uint8Array)
  })

  it('refuses a description empty, too long or with control characters, one before version 5, and a sourced date in an older version', () => {
    expect(encodeMetadata({ ...v3, description: 'x'.repeat(DESCRIPTION_MAX) })).toBeInstanceOf(Uint8Array)
    for (const bad of ['', 'x'.repeat(DESCRIPTION_MAX + 1), 'a\u0000b', 'bell\u0007', 'c1\u0085'])
      expect(() => encodeMetadata({ ...v3, description: bad }), JSON.stringify(bad)).toThrow(/description: text of 1 to 4096 characters/)
    // Without version 3's fields it cannot be written at all (a version 2 or 1 has no such key).
    expect(() => encodeMetadata({ ...metadata, contentMac: new Uint8Array(32), description: 'x' })).toThrow(/keys: expected .*\(v 2\)/)
    const stored = decodeCanonical(encodeMetadata({ ...v3, capturedSource: 'takeout', description: 'x' })) as Record<string, unknown>
    expect(() => decodeMetadata(encodeCanonical({ ...stored, v: 4 }))).toThrow(/keys: expected/)
    const { description: _description, ...sourcedOnly } = stored
    for (const older of [3, 4])
      expect(() => decodeMetadata(encodeCanonical({ ...sourcedOnly, v: older, ...(older === 4 ? { duration: 1 } : {}) })), String(older)).toThrow(
        /captured_source: one of exif-original, exif-digitized, exif-modified, gps, or null/,
      )
    expect(() => decodeMetadata(encodeCanonical({ ...sourcedOnly, captured_source: 'file-name' }))).toThrow(/captured_source: one of .*takeout, xmp, container/)
    expect(() => decodeMetadata(encodeCanonical({ ...sourcedOnly, description: 7 }))).toThrow(/description: text/)
  })
})
