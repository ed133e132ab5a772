// describeMedia on photos generated here (test/support/photos.ts): dimensions as displayed,
// capture time from EXIF and its offset (or the GPS clock) and which tag gave it, the GPS
// position only when asked for, the camera facts (make, model, lens, exposure), WebP derivatives of the
// documented sizes with orientation applied and no metadata, and files that are not images
// that decode (a video, a RAW, a corrupt JPEG) giving no derivatives rather than an error.
// Videos made here with ffmpeg (test/support/videos.ts; without ffmpeg those tests fail): their
// length, dimensions as shown (rotation applied), capture time from the container (Apple's
// creationdate, else creation_time) and a poster frame's derivatives, read with
// ffprobe and ffmpeg; without them ({ ffmpeg: false }, what coffer-photos passes with COFFER_FFMPEG=off), or from a broken file, nulls and none.
import exifr from 'exifr'
import { createHash } from 'node:crypto'
import { mkdtemp, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises'
import { availableParallelism, tmpdir } from 'node:os'
import path from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { exifTime, localZone, zoneOffset } from '../../src/client/taken.ts'
import { containerCaptured, describeMedia, probedVideo, type MediaDescription, type MediaOptions } from '../../src/client/node/media.ts'
import { candidateOf, walkedFile } from '../../src/client/node/walk.ts'
import { generateLibrary, writeOpaque, writePhoto } from '../support/photos.ts'
import { writeVideo, type MadeVideo } from '../support/videos.ts'

let folder: string
let rotated: MadeVideo
const at = (name: string): string => path.join(folder, name)
const captured = new Date(Date.UTC(2021, 6, 4, 10, 34, 56))
const eiffelTower = { latitude: 48.8582602, longitude: 2.2944991 }
const sydney = { latitude: -33.8567844, longitude: -151.2152967 } // the longitude made western, to test both signs

beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'coffer-media-'))
  await writePhoto(at('large.jpg'), { format: 'jpeg', width: 3000, height: 2000, seed: 1, captured, utcOffsetMinutes: 120, gps: eiffelTower })
  await writePhoto(at('turned.jpg'), { format: 'jpeg', width: 2400, height: 1800, seed: 2, captured, orientation: 6, gps: sydney })
  await writePhoto(at('medium.webp'), { format: 'webp', width: 1600, height: 1200, seed: 3, captured, utcOffsetMinutes: -330 })
  await writePhoto(at('small.png'), { format: 'png', width: 300, height: 200, seed: 4, captured, utcOffsetMinutes: null })
  await writePhoto(at('undated.jpg'), { format: 'jpeg', width: 640, height: 480, seed: 5 })
  await writePhoto(at('tiny.jpg'), { format: 'jpeg', width: 64, height: 48, seed: 9, captured, gps: eiffelTower })
  await writePhoto(at('still.gif'), { format: 'gif', width: 200, height: 150, seed: 6 })
  // The other sources of a capture time (src/client/taken.ts), one each.
  const small = { format: 'jpeg', width: 64, height: 48 } as const
  await writePhoto(at('digitized.jpg'), { ...small, seed: 10, moreExif: { IFD2: { DateTimeDigitized: '2019:07:04 12:34:56', OffsetTimeDigitized: '+02:00' } } })
  await writePhoto(at('saved.jpg'), { ...small, seed: 11, moreExif: { IFD0: { DateTime: '2018:03:02 01:02:03' } } })
  await writePhoto(at('gps-dated.jpg'), {
    ...small,
    seed: 12,
    gps: sydney,
    moreExif: { IFD3: { GPSDateStamp: '2017:12:31', GPSTimeStamp: '23/1 59/1 305/10' } },
  })
  await writePhoto(at('every-date.jpg'), {
    ...small,
    seed: 13,
    captured,
    moreExif: {
      IFD0: { DateTime: '2023:01:01 00:00:00' },
      IFD2: { DateTimeDigitized: '2022:01:01 00:00:00' },
      IFD3: { GPSDateStamp: '2021:01:01', GPSTimeStamp: '0/1 0/1 0/1' },
    },
  })
  await writePhoto(at('exposed.jpg'), {
    ...small,
    seed: 14,
    camera: { make: 'Canon', model: 'Canon EOS R6' },
    moreExif: { IFD2: { LensModel: 'RF35mm F1.8 MACRO IS STM', ExposureTime: '1/250', FNumber: '28/10', ISOSpeedRatings: '100', FocalLength: '35/1' } },
  })
  await writePhoto(at('long-exposure.jpg'), { ...small, seed: 15, moreExif: { IFD2: { ExposureTime: '25/10', FNumber: '0/0', ISOSpeedRatings: '0' } } })
  await sharp({ create: { width: 800, height: 600, channels: 3, background: '#3a6' } })
    .tiff()
    .toFile(at('scan.tif'))
  await sharp({ create: { width: 640, height: 480, channels: 3, background: '#a63' } })
    .avif({ effort: 0 })
    .toFile(at('photo.avif'))
  await writeOpaque(at('clip.mp4'), 300_000, 7)
  const large = await readFile(at('large.jpg'))
  await writeFile(at('truncated.jpg'), large.subarray(0, large.length >> 1))
  // A huge QuickTime file, sparse: nothing but its head is ever on disk, or should ever be read.
  await writeOpaque(at('huge.mov'), 64, 8)
  await truncate(at('huge.mov'), 4 * 2 ** 30)
})

afterAll(async () => {
  await rm(folder, { recursive: true, force: true })
})

const sizes = (description: MediaDescription): string[] => description.derivatives.map((d) => `${d.kind} ${d.width}x${d.height}`)

describe('describeMedia', () => {
  it('reads the dimensions and the capture time at its EXIF offset', async () => {
    const large = await describeMedia(at('large.jpg'), 'image/jpeg')
    expect([large.width, large.height]).toEqual([3000, 2000])
    expect(large.captured).toBe(captured.getTime())
    expect((await describeMedia(at('medium.webp'), 'image/webp')).captured).toBe(captured.getTime())
  })

  it('says which tag the capture time came from (DateTimeOriginal first, then CreateDate, ModifyDate, the GPS date and time) and its offset', async () => {
    const source = async (name: string, options: { location?: boolean } = {}) => {
      const { captured, capturedSource, capturedOffset } = await describeMedia(at(name), 'image/jpeg', options)
      return { captured, capturedSource, capturedOffset }
    }
    expect(await source('large.jpg')).toEqual({ captured: captured.getTime(), capturedSource: 'exif-original', capturedOffset: 120 })
    expect(await source('every-date.jpg')).toEqual({ captured: captured.getTime(), capturedSource: 'exif-original', capturedOffset: 0 })
    expect(await source('digitized.jpg')).toEqual({ captured: Date.UTC(2019, 6, 4, 10, 34, 56), capturedSource: 'exif-digitized', capturedOffset: 120 })
    // No OffsetTime: a floating wall clock.
    expect(await source('saved.jpg')).toEqual({ captured: Date.UTC(2018, 2, 2, 1, 2, 3), capturedSource: 'exif-modified', capturedOffset: null })
    expect(await source('undated.jpg')).toEqual({ captured: null, capturedSource: null, capturedOffset: null })
    expect((await describeMedia(at('medium.webp'), 'image/webp')).capturedOffset).toBe(-330)
  })

  it('reads the GPS date and time without the location opt-in, and never the location without it', async () => {
    const gpsDated = await describeMedia(at('gps-dated.jpg'), 'image/jpeg')
    // The GPS clock is UTC: offset 0 (no EXIF offset tag names the camera's zone).
    expect([gpsDated.captured, gpsDated.capturedSource, gpsDated.capturedOffset, gpsDated.location]).toEqual([
      Date.UTC(2017, 11, 31, 23, 59, 30, 500),
      'gps',
      0,
      null,
    ])
    const optedIn = await describeMedia(at('gps-dated.jpg'), 'image/jpeg', { location: true })
    expect([optedIn.captured, optedIn.capturedSource]).toEqual([Date.UTC(2017, 11, 31, 23, 59, 30, 500), 'gps'])
    expect(optedIn.location?.latitude).toBeCloseTo(sydney.latitude, 6)
  })

  it('reads a capture time without an offset as UTC, and gives null without one', async () => {
    // writePhoto wrote the UTC wall clock and no OffsetTimeOriginal.
    const floating = await describeMedia(at('small.png'), 'image/png')
    expect([floating.captured, floating.capturedOffset]).toEqual([captured.getTime(), null])
    expect((await describeMedia(at('undated.jpg'), 'image/jpeg')).captured).toBeNull()
    expect((await describeMedia(at('still.gif'), 'image/gif')).captured).toBeNull()
  })

  it('reads the camera facts: make, model, lens, exposure time as a fraction, f-number and focal length in tenths, ISO; none that the file lacks or states as 0', async () => {
    expect((await describeMedia(at('exposed.jpg'), 'image/jpeg')).camera).toEqual({
      make: 'Canon',
      model: 'Canon EOS R6',
      lens: 'RF35mm F1.8 MACRO IS STM',
      exposureTime: [1, 250],
      fNumberTenths: 28,
      iso: 100,
      focalLengthTenths: 350,
    })
    // writePhoto's default make and model; 2.5 s as 5/2; f/0 and ISO 0 (EXIF's "unknown") left out.
    expect((await describeMedia(at('long-exposure.jpg'), 'image/jpeg')).camera).toEqual({ make: 'Coffer', model: 'Test photo', exposureTime: [5, 2] })
    expect((await describeMedia(at('still.gif'), 'image/gif')).camera).toBeNull()
  })

  it('makes a 512 px thumbnail (WebP) and a 2048 px preview (JPEG, as the original) of a large photo, each decoding to the sizes it states', async () => {
    const large = await describeMedia(at('large.jpg'), 'image/jpeg')
    expect(sizes(large)).toEqual(['thumbnail 512x341', 'preview 2048x1365'])
    expect(large.derivatives.map((d) => d.type)).toEqual(['image/webp', 'image/jpeg'])
    for (const derivative of large.derivatives) {
      const decoded = await sharp(derivative.bytes).metadata()
      expect([`image/${decoded.format}`, decoded.width, decoded.height]).toEqual([derivative.type, derivative.width, derivative.height])
      expect(derivative.bytes.length).toBeLessThan(1 << 20)
    }
  })

  it('never upscales, and makes no preview of an original no larger than one, unless browsers cannot show it (TIFF)', async () => {
    expect(sizes(await describeMedia(at('medium.webp'), 'image/webp'))).toEqual(['thumbnail 512x384'])
    expect(sizes(await describeMedia(at('small.png'), 'image/png'))).toEqual(['thumbnail 300x200'])
    expect(sizes(await describeMedia(at('still.gif'), 'image/gif'))).toEqual(['thumbnail 200x150'])
    expect(sizes(await describeMedia(at('photo.avif'), 'image/avif'))).toEqual(['thumbnail 512x384'])
    const scan = await describeMedia(at('scan.tif'), 'image/tiff')
    expect(sizes(scan)).toEqual(['thumbnail 512x384', 'preview 800x600'])
    // Not a JPEG: the preview keeps WebP, which keeps transparency.
    expect(scan.derivatives.map((d) => d.type)).toEqual(['image/webp', 'image/webp'])
  })

  it('applies the EXIF orientation to the dimensions and the derivatives', async () => {
    const turned = await describeMedia(at('turned.jpg'), 'image/jpeg')
    expect([turned.width, turned.height]).toEqual([1800, 2400]) // stored 2400x1800, orientation 6
    expect(sizes(turned)).toEqual(['thumbnail 384x512', 'preview 1536x2048'])
    const preview = await sharp(turned.derivatives[1]!.bytes).metadata()
    expect([preview.width, preview.height, preview.orientation]).toEqual([1536, 2048, undefined])
  })

  it('strips every piece of metadata from the derivatives: no EXIF, no GPS', async () => {
    for (const file of ['large.jpg', 'turned.jpg']) {
      const { derivatives } = await describeMedia(at(file), 'image/jpeg', { location: true })
      expect(derivatives.length).toBe(2)
      for (const derivative of derivatives) {
        const decoded = await sharp(derivative.bytes).metadata()
        expect([decoded.exif, decoded.xmp, decoded.icc, decoded.iptc]).toEqual([undefined, undefined, undefined, undefined])
        expect(await exifr.parse(derivative.bytes, { gps: true }).catch(() => undefined)).toBeUndefined()
        expect(Buffer.from(derivative.bytes).includes('Exif')).toBe(false)
      }
    }
    // The original does carry them: the checks above can see them.
    expect((await sharp(at('large.jpg')).metadata()).exif).toBeDefined()
  })

  it('gives the location only when asked for it, to 1e-6 degree', async () => {
    expect((await describeMedia(at('large.jpg'), 'image/jpeg')).location).toBeNull()
    const large = (await describeMedia(at('large.jpg'), 'image/jpeg', { location: true })).location!
    expect(large.latitude).toBeCloseTo(eiffelTower.latitude, 6)
    expect(large.longitude).toBeCloseTo(eiffelTower.longitude, 6)
    const turned = (await describeMedia(at('turned.jpg'), 'image/jpeg', { location: true })).location!
    expect(turned.latitude).toBeCloseTo(sydney.latitude, 6)
    expect(turned.longitude).toBeCloseTo(sydney.longitude, 6)
    expect((await describeMedia(at('medium.webp'), 'image/webp', { location: true })).location).toBeNull() // no GPS in it
  })

  it('describes a video, a RAW-like TIFF and a truncated JPEG without derivatives or dimensions, and without throwing', async () => {
    const none = { width: null, height: null, duration: null, location: null, derivatives: [] }
    const undated = { captured: null, capturedSource: null, capturedOffset: null, camera: null, ...none }
    expect(await describeMedia(at('clip.mp4'), 'video/mp4', { location: true })).toEqual(undated)
    // TIFF's magic under another media type is taken for a camera RAW file.
    expect(await describeMedia(at('scan.tif'), 'image/x-adobe-dng')).toEqual(undated)
    // The header and its EXIF are intact: the capture time is still read.
    expect(await describeMedia(at('truncated.jpg'), 'image/jpeg')).toEqual({
      captured: captured.getTime(),
      capturedSource: 'exif-original',
      capturedOffset: 120,
      camera: { make: 'Coffer', model: 'Test photo' },
      ...none,
    })
    expect(await describeMedia(at('clip.mp4'), 'image/jpeg')).toEqual(undated) // the bytes decide, not the name
  })

  it('reads no more than the head of a huge file that is not an image', async () => {
    const before = process.memoryUsage().rss
    const started = performance.now()
    expect(await describeMedia(at('huge.mov'), 'video/quicktime')).toEqual({
      captured: null,
      capturedSource: null,
      capturedOffset: null,
      camera: null,
      width: null,
      height: null,
      duration: null,
      location: null,
      derivatives: [],
    })
    expect(performance.now() - started).toBeLessThan(1000) // ffprobe gave up on it at once
    expect(process.memoryUsage().rss - before).toBeLessThan(256 * 2 ** 20) // reading it whole would take 4 GiB
  })

  it('describes many files at once, more than it decodes at a time, each as alone; a file that fails to decode frees its turn', async () => {
    const names = Array.from({ length: 4 * availableParallelism() }, (_, i) => (i % 3 === 0 ? 'truncated.jpg' : i % 3 === 1 ? 'large.jpg' : 'turned.jpg'))
    const alone = new Map<string, string[]>()
    for (const name of new Set(names)) alone.set(name, sizes(await describeMedia(at(name), 'image/jpeg')))
    const together = await Promise.all(names.map((name) => describeMedia(at(name), 'image/jpeg')))
    expect(together.map(sizes)).toEqual(names.map((name) => alone.get(name)))
    expect(alone.get('truncated.jpg')).toEqual([]) // decoding it failed, many times over, and nothing waits forever
  })

  it('keeps the JavaScript heap flat over many files', async () => {
    setFlagsFromString('--expose-gc')
    const collectGarbage = runInNewContext('gc') as () => void
    const heapAfter = async (times: number): Promise<number> => {
      for (let i = 0; i < times; i++) await describeMedia(at('tiny.jpg'), 'image/jpeg', { location: i % 2 === 0 })
      collectGarbage()
      return process.memoryUsage().heapUsed
    }
    const settled = await heapAfter(100)
    // exifr keeps every options object it is given: one made per call grew the heap by 8 KiB a
    // file (5 MiB here); flat, it moves by a few hundred KiB.
    expect((await heapAfter(600)) - settled).toBeLessThan(2 * 2 ** 20)
  })

  it('throws when the file cannot be read', async () => {
    await expect(describeMedia(at('missing.jpg'), 'image/jpeg')).rejects.toMatchObject({ code: 'ENOENT' })
    await expect(describeMedia(folder, 'image/jpeg')).rejects.toMatchObject({ code: 'EISDIR' })
  })
})

/** A frame that shows something: the test pattern's colours, not one flat colour (a black or grey frame, a failed decode). */
async function expectPicture(bytes: Uint8Array): Promise<void> {
  const { channels } = await sharp(bytes).stats()
  expect(Math.max(...channels.map((channel) => channel.stdev))).toBeGreaterThan(30)
}

/** Mean difference per byte of two images of the same size, as RGB. */
async function difference(a: Uint8Array, b: Uint8Array): Promise<number> {
  const [x, y] = await Promise.all([a, b].map((bytes) => sharp(bytes).removeAlpha().raw().toBuffer()))
  expect(x!.length).toBe(y!.length)
  let sum = 0
  for (let i = 0; i < x!.length; i++) sum += Math.abs(x![i]! - y![i]!)
  return sum / x!.length
}

const FRAME_MS = 40 // at 25 frames a second
const noCapture = { captured: null, capturedSource: null, capturedOffset: null, camera: null, location: null }

describe('describeMedia on videos (ffprobe and ffmpeg)', () => {
  // Without ffmpeg, writeVideo fails saying so: these tests fail rather than skip.
  beforeAll(async () => {
    // Videos: 3 s at 25 frames a second, 320×240, unless said otherwise.
    const clip = { width: 320, height: 240, seconds: 3 } as const
    await writeVideo(at('faststart.mp4'), { codec: 'h264', ...clip, faststart: true })
    await writeVideo(at('phone.mp4'), { codec: 'h264', ...clip, creationTime: captured }) // the index (moov) at the end, as ffmpeg and phones write it
    await writeVideo(at('clip.webm'), { codec: 'vp9', ...clip })
    rotated = await writeVideo(at('portrait.mp4'), { codec: 'h264', ...clip, rotate: 90 })
    await writeVideo(at('wide.mov'), { codec: 'h264', width: 2560, height: 1440, seconds: 1, rate: 10 })
    await writeVideo(at('short.mp4'), { codec: 'h264', width: 64, height: 48, seconds: 0.4 })
    await writeVideo(at('anamorphic.mp4'), { codec: 'h264', width: 720, height: 576, seconds: 1, pixelAspect: '16:15' }) // PAL DV, shown 4:3
    await writeVideo(at('long-sound.mp4'), { codec: 'h264', width: 64, height: 48, seconds: 0.4, audioSeconds: 12 }) // the picture ends 1 s in
    // Dated: an iPhone's MOV (Apple's creationdate where it was shot; its creation_time, the end of the recording, 14 s on), Apple's tag
    // alone, a WebM's date (Matroska DateUTC), a winter creation_time, and a camera whose clock was never set (5 s past the Unix epoch).
    const dated = { codec: 'h264', width: 64, height: 48, seconds: 0.4 } as const
    await writeVideo(at('iphone.mov'), { ...dated, appleCreationDate: '2019-07-04T12:34:56-0700', creationTime: new Date(Date.UTC(2019, 6, 4, 19, 35, 10)) })
    await writeVideo(at('apple-only.mov'), { ...dated, appleCreationDate: '2019-07-04T12:34:56+0530' })
    await writeVideo(at('dated.webm'), { ...dated, codec: 'vp9', creationTime: captured })
    await writeVideo(at('winter.mp4'), { ...dated, creationTime: new Date(Date.UTC(2020, 0, 15, 12, 0, 0)) })
    await writeVideo(at('unset-clock.mp4'), { ...dated, creationTime: new Date(5000) })
    // Broken: the index gone (cut in half, with the moov at the end), and every frame's bytes zeroed under an intact index.
    const phone = await readFile(at('phone.mp4'))
    await writeFile(at('cut.mp4'), phone.subarray(0, phone.length >> 1))
    const fast = await readFile(at('faststart.mp4'))
    const mdat = fast.indexOf('mdat', 0, 'latin1') + 4
    await writeFile(at('blank-frames.mp4'), Buffer.concat([fast.subarray(0, mdat), Buffer.alloc(fast.length - mdat)]))
  }, 60_000)

  it('reads the length to a frame and the dimensions, and makes a thumbnail and a preview (WebP) of a poster frame: MP4 with its index first or last, WebM', async () => {
    const utc = () => 0
    for (const [name, type, capture] of [
      ['faststart.mp4', 'video/mp4', {}],
      ['phone.mp4', 'video/mp4', { captured: captured.getTime(), capturedSource: 'container', capturedOffset: 0 }], // its creation_time
      ['clip.webm', 'video/webm', {}],
    ] as const) {
      const video = await describeMedia(at(name), type, { location: true, zone: utc })
      expect(video, name).toMatchObject({ ...noCapture, ...capture, width: 320, height: 240 })
      expect(Math.abs(video.duration! - 3000), name).toBeLessThanOrEqual(FRAME_MS)
      expect(sizes(video), name).toEqual(['thumbnail 320x240', 'preview 320x240'])
      for (const derivative of video.derivatives) {
        const decoded = await sharp(derivative.bytes).metadata()
        expect([`image/${decoded.format}`, decoded.width, decoded.height], name).toEqual(['image/webp', derivative.width, derivative.height])
        expect([decoded.exif, decoded.xmp, decoded.icc], name).toEqual([undefined, undefined, undefined])
        await expectPicture(derivative.bytes)
      }
    }
    // The same frames, the same poster: the index's place changes nothing.
    const [first, last] = await Promise.all(['faststart.mp4', 'phone.mp4'].map((name) => describeMedia(at(name), 'video/mp4')))
    expect(await difference(first!.derivatives[0]!.bytes, last!.derivatives[0]!.bytes)).toBeLessThan(2)
  })

  it("dates a video by its container: Apple's creationdate at its own offset, else creation_time (UTC) at the device's zone then; none when its clock was never set or it states none", async () => {
    const newYork = zoneOffset('America/New_York')!
    const dated = async (name: string, options: MediaOptions = { zone: newYork }) => {
      const { captured, capturedSource, capturedOffset } = await describeMedia(at(name), name.endsWith('.mov') ? 'video/quicktime' : 'video/mp4', options)
      return { captured, capturedSource, capturedOffset }
    }
    const container = (captured: number, capturedOffset: number) => ({ captured, capturedSource: 'container', capturedOffset })
    // creation_time is a moment: shown at the backing-up device's zone at that moment (summer time in July, not in January).
    expect(await dated('phone.mp4')).toEqual(container(captured.getTime(), -240))
    expect(await dated('winter.mp4')).toEqual(container(Date.UTC(2020, 0, 15, 12, 0, 0), -300))
    expect(await dated('dated.webm')).toEqual(container(captured.getTime(), -240))
    expect(await dated('phone.mp4', {})).toEqual(container(captured.getTime(), localZone(captured.getTime()))) // this machine's zone unless given
    // Apple's tag is where it was shot, whatever the device's zone: it wins over creation_time.
    expect(await dated('iphone.mov')).toEqual(container(Date.UTC(2019, 6, 4, 19, 34, 56), -420))
    expect(await dated('apple-only.mov')).toEqual(container(Date.UTC(2019, 6, 4, 7, 4, 56), 330))
    const iphone = await describeMedia(await readFile(at('iphone.mov')), 'video/quicktime', { zone: newYork }) // on stdin as from its path
    expect([iphone.captured, iphone.capturedOffset]).toEqual([Date.UTC(2019, 6, 4, 19, 34, 56), -420])
    for (const name of ['unset-clock.mp4', 'faststart.mp4', 'wide.mov'])
      expect(await dated(name), name).toEqual({ captured: null, capturedSource: null, capturedOffset: null })
    expect((await describeMedia(at('iphone.mov'), 'video/quicktime', { ffmpeg: false })).captured).toBeNull() // ffprobe reads it, or nothing does
  })

  it("reduces a large video's poster to the preview and thumbnail sizes, never enlarges a small one, widens non-square pixels, and reads a length under a second", async () => {
    const wide = await describeMedia(at('wide.mov'), 'video/quicktime')
    expect([wide.width, wide.height, wide.duration]).toEqual([2560, 1440, 1000])
    expect(sizes(wide)).toEqual(['thumbnail 512x288', 'preview 2048x1152'])
    expect(wide.derivatives.map((d) => d.type)).toEqual(['image/webp', 'image/webp'])
    const short = await describeMedia(at('short.mp4'), 'video/mp4')
    expect([short.width, short.height, short.duration]).toEqual([64, 48, 400])
    expect(sizes(short)).toEqual(['thumbnail 64x48', 'preview 64x48'])
    // Pixels wider than tall: the width as shown, and a poster of square pixels.
    const anamorphic = await describeMedia(at('anamorphic.mp4'), 'video/mp4')
    expect([anamorphic.width, anamorphic.height]).toEqual([768, 576])
    expect(sizes(anamorphic)).toEqual(['thumbnail 512x384', 'preview 768x576'])
    // The container's length is its sound track's; 1 s in there is no picture, and the poster is the first frame.
    const longSound = await describeMedia(at('long-sound.mp4'), 'video/mp4')
    expect([longSound.width, longSound.height]).toEqual([64, 48])
    expect(Math.abs(longSound.duration! - 12_000)).toBeLessThanOrEqual(50) // to an AAC frame
    expect(sizes(longSound)).toEqual(['thumbnail 64x48', 'preview 64x48'])
  })

  it('shows a rotated video as a player does: its dimensions swapped, its poster upright', async () => {
    expect(Math.abs(rotated.rotation)).toBe(90) // the display matrix ffmpeg wrote, as ffprobe reads it back
    const portrait = await describeMedia(at('portrait.mp4'), 'video/mp4')
    expect([portrait.width, portrait.height]).toEqual([240, 320])
    expect(sizes(portrait)).toEqual(['thumbnail 240x320', 'preview 240x320'])
    // The same frames stored upright, turned as the matrix says (ffprobe's angle is counterclockwise; sharp's clockwise).
    const upright = (await describeMedia(at('faststart.mp4'), 'video/mp4')).derivatives[0]!.bytes
    const turned = (angle: number): Promise<Buffer> => sharp(upright).rotate(angle).webp({ lossless: true }).toBuffer()
    expect(await difference(portrait.derivatives[0]!.bytes, await turned((360 - rotated.rotation) % 360))).toBeLessThan(4)
    expect(await difference(portrait.derivatives[0]!.bytes, await turned(rotated.rotation))).toBeGreaterThan(30) // the other way round is told apart
  })

  it('reads a video given as bytes on stdin: as from its path when its index comes first; with the index last, no poster (a pipe cannot seek), so a backup gives a video by its path', async () => {
    const fromPath = await describeMedia(at('faststart.mp4'), 'video/mp4')
    const fromBytes = await describeMedia(await readFile(at('faststart.mp4')), 'video/mp4')
    expect([fromBytes.width, fromBytes.height, fromBytes.duration]).toEqual([fromPath.width, fromPath.height, fromPath.duration])
    expect(sizes(fromBytes)).toEqual(sizes(fromPath))
    expect(await difference(fromBytes.derivatives[0]!.bytes, fromPath.derivatives[0]!.bytes)).toBeLessThan(2)
    const indexLast = await describeMedia(await readFile(at('phone.mp4')), 'video/mp4')
    expect([indexLast.width, indexLast.height, indexLast.derivatives]).toEqual([320, 240, []])
    // What backup describes: a photo's bytes read once, a video's path.
    const given: (string | Uint8Array)[] = []
    for (const name of ['phone.mp4', 'tiny.jpg']) {
      const candidate = candidateOf((await walkedFile(folder, name))!, {
        inMemoryMax: 64 * 2 ** 20,
        describe: async (file, type) => {
          given.push(file)
          return describeMedia(file, type)
        },
      })
      const facts = await candidate.describe!()
      expect(facts.derivatives.length, name).toBeGreaterThan(0)
    }
    expect(given[0]).toBe(at('phone.mp4'))
    expect(given[1]).toBeInstanceOf(Uint8Array)
  })

  it('without ffmpeg ({ ffmpeg: false }), or from a broken video, gives nulls and no derivatives, and does not throw', async () => {
    const nothing = { ...noCapture, width: null, height: null, duration: null, derivatives: [] }
    expect(await describeMedia(at('faststart.mp4'), 'video/mp4', { location: true, ffmpeg: false })).toEqual(nothing)
    expect(sizes(await describeMedia(at('faststart.mp4'), 'video/mp4', { ffmpeg: true }))).toEqual(['thumbnail 320x240', 'preview 320x240'])
    expect(await describeMedia(at('cut.mp4'), 'video/mp4', { location: true })).toEqual(nothing) // no index: nothing to read
    // An intact index over frames that do not decode: the length and dimensions it states, no poster.
    const blank = await describeMedia(at('blank-frames.mp4'), 'video/mp4')
    expect([blank.width, blank.height, blank.derivatives]).toEqual([320, 240, []])
    expect(Math.abs(blank.duration! - 3000)).toBeLessThanOrEqual(FRAME_MS)
    // The file's type decides: a video under an image's name is not handed to ffmpeg.
    expect(await describeMedia(at('faststart.mp4'), 'image/jpeg')).toEqual(nothing)
  })

  it('describes many videos at once, more than it decodes at a time, each as alone; a broken one frees its turn', async () => {
    const names = Array.from({ length: 3 * availableParallelism() }, (_, i) => ['faststart.mp4', 'cut.mp4', 'clip.webm'][i % 3]!)
    const facts = (d: MediaDescription): string => `${d.width}x${d.height} ${d.duration} ${sizes(d).join(', ')}`
    const alone = new Map<string, string>()
    for (const name of new Set(names)) alone.set(name, facts(await describeMedia(at(name), 'video/mp4')))
    const together = await Promise.all(names.map((name) => describeMedia(at(name), 'video/mp4')))
    expect(together.map(facts)).toEqual(names.map((name) => alone.get(name)))
    expect(alone.get('cut.mp4')).toBe('nullxnull null ')
  })
})

describe('containerCaptured', () => {
  const zone = (at: number) => (at >= Date.UTC(2019, 0, 1) ? 60 : -60)
  const read = (format: Record<string, unknown>, stream: Record<string, unknown> = {}) =>
    containerCaptured({ streams: [{ tags: stream }], format: { tags: format } }, zone)
  const apple = 'com.apple.quicktime.creationdate'
  it("takes Apple's creationdate at its offset, else creation_time as a moment at the zone given, else the video stream's creation_time", () => {
    const moment = Date.UTC(2019, 6, 4, 10, 34, 56)
    expect(read({ [apple]: '2019-07-04T12:34:56+0200', creation_time: '2019-07-04T10:40:00.000000Z' })).toEqual({
      at: moment,
      source: 'container',
      offset: 120,
    })
    expect(read({ [apple]: '2019-07-04T05:04:56-05:30' })).toEqual({ at: moment, source: 'container', offset: -330 })
    expect(read({ [apple]: '2019-07-04T10:34:56Z' })).toEqual({ at: moment, source: 'container', offset: 0 })
    expect(read({ creation_time: '2019-07-04T10:34:56.000000Z' })).toEqual({ at: moment, source: 'container', offset: 60 })
    expect(read({ creation_time: '2019-07-04T10:34:56.123456789Z' })).toEqual({ at: moment + 123, source: 'container', offset: 60 })
    expect(read({ creation_time: '2019-07-04 10:34:56' })).toEqual({ at: moment, source: 'container', offset: 60 }) // older ffprobe: UTC, unsaid
    expect(read({ creation_time: '2019-07-04T12:34:56+02:00' })).toEqual({ at: moment, source: 'container', offset: 60 }) // a moment all the same
    expect(read({ creation_time: '2018-07-04T10:34:56Z' })).toEqual({ at: Date.UTC(2018, 6, 4, 10, 34, 56), source: 'container', offset: -60 }) // the zone then
    expect(read({}, { creation_time: '2019-07-04T10:34:56.000000Z' })).toEqual({ at: moment, source: 'container', offset: 60 })
    expect(read({ creation_time: '2019-07-04T10:34:56Z' }, { creation_time: '2020-01-01T00:00:00Z' })?.at).toBe(moment)
  })
  it("passes over a time that is unset (QuickTime's or Unix's zero, the day after), not a real date, unparsable, or at an offset beyond ±18 hours; Apple's without an offset", () => {
    for (const unusable of [
      '1904-01-01T00:00:00.000000Z',
      '1970-01-01T00:00:00.000000Z',
      '1970-01-01T23:59:59Z',
      '1970-01-02T01:00:00+0200', // 23:00 on 1 January, UTC
      '2019-02-30T10:34:56Z',
      '2019-07-04T24:00:00Z',
      '2019-07-04T10:34Z',
      '2019:07:04 10:34:56',
      'yesterday',
      '',
      '2019-07-04T10:34:56+1900',
      '2019-07-04T10:34:56+0260',
      20190704,
      null,
    ]) {
      expect(read({ [apple]: unusable, creation_time: unusable }, { creation_time: unusable }), String(unusable)).toBeNull()
    }
    expect(read({ creation_time: '1970-01-02T00:00:00Z' })?.at).toBe(Date.UTC(1970, 0, 2)) // a clock a day on from its zero may be right
    // Apple's tag without an offset, or unusable: creation_time.
    expect(read({ [apple]: '2019-07-04T12:34:56', creation_time: '2019-07-04T10:34:56Z' })).toEqual({
      at: Date.UTC(2019, 6, 4, 10, 34, 56),
      source: 'container',
      offset: 60,
    })
    expect(read({ [apple]: '1904-01-01T00:00:00+0000', creation_time: '2019-07-04T10:34:56Z' })?.offset).toBe(60)
    expect(containerCaptured({ streams: [], format: {} }, zone)).toBeNull()
    expect(containerCaptured(null, zone)).toBeNull()
  })
})

describe('probedVideo', () => {
  const stream = (facts: Record<string, unknown>, format: Record<string, unknown> = { duration: '12.345678' }) => probedVideo({ streams: [facts], format })
  it('applies the pixel aspect ratio, then a quarter turn either way (display matrix or rotate tag), and rounds the length to a millisecond', () => {
    expect(stream({ width: 1920, height: 1080, sample_aspect_ratio: '1:1' })).toEqual({ width: 1920, height: 1080, duration: 12_346 })
    expect(stream({ width: 720, height: 576, sample_aspect_ratio: '16:15' })).toEqual({ width: 768, height: 576, duration: 12_346 })
    expect(stream({ width: 1920, height: 1080, sample_aspect_ratio: '0:1', side_data_list: [{}, { rotation: -90 }] })).toMatchObject({
      width: 1080,
      height: 1920,
    })
    expect(stream({ width: 1920, height: 1080, side_data_list: [{ rotation: 180 }] })).toMatchObject({ width: 1920, height: 1080 })
    expect(stream({ width: 1920, height: 1080, tags: { rotate: '270' } })).toMatchObject({ width: 1080, height: 1920 })
  })
  it("takes the stream's length without the container's, null without either; null without a video stream or with absurd dimensions", () => {
    expect(stream({ width: 640, height: 480, duration: '2.0005' }, {})).toEqual({ width: 640, height: 480, duration: 2001 })
    expect(stream({ width: 640, height: 480, duration: 'N/A' }, { duration: 'N/A' })).toEqual({ width: 640, height: 480, duration: null })
    expect(probedVideo({ streams: [], format: { duration: '3.0' } })).toBeNull()
    expect(probedVideo({})).toBeNull()
    expect(probedVideo(null)).toBeNull()
    expect(stream({ width: 0, height: 480 })).toBeNull()
    expect(stream({ width: 640.5, height: 480 })).toBeNull()
    expect(stream({ width: 100_000, height: 480 })).toBeNull()
    expect(stream({ width: '640', height: 480 })).toBeNull()
  })
})

describe('generateLibrary', () => {
  it('writes a mixed library, the same for the same seed, that describeMedia reads without an error', async () => {
    const files = await generateLibrary(at('library'), { count: 40, seed: 11, subfolders: 3, bigFileBytes: 3 * 2 ** 20 + 5 })
    expect(files.length).toBe(41)
    expect(new Set(files.map((f) => f.type))).toEqual(new Set(['image/jpeg', 'image/png', 'image/webp', 'image/gif', 'video/mp4', 'video/quicktime']))
    expect(files.filter((f) => f.path.startsWith('set-0/set-1/')).length).toBeGreaterThan(0)
    expect(files.find((f) => f.path === 'big.mov')?.size).toBe(3 * 2 ** 20 + 5)
    const again = await generateLibrary(at('library-again'), { count: 40, seed: 11, subfolders: 3 })
    const hash = async (file: string): Promise<string> =>
      createHash('sha256')
        .update(await readFile(file))
        .digest('hex')
    for (const [i, file] of again.entries()) {
      expect(file.path).toBe(files.filter((f) => f.path !== 'big.mov')[i]!.path)
      expect(await hash(at(`library-again/${file.path}`))).toBe(await hash(at(`library/${file.path}`)))
    }
    let dated = 0
    for (const file of files) {
      expect((await stat(at(`library/${file.path}`))).size).toBe(file.size)
      const media = await describeMedia(at(`library/${file.path}`), file.type)
      expect(media.derivatives.length, file.path).toBe(file.type.startsWith('image/') ? 1 : 0)
      if (media.captured !== null) dated++
    }
    expect(dated).toBeGreaterThan(25)
  })
})

describe('exifTime', () => {
  it('applies the offset, adds the fractional seconds, and refuses dates that do not exist', () => {
    expect(exifTime('2021:07:04 12:34:56', '+02:00', '123')).toBe(Date.UTC(2021, 6, 4, 10, 34, 56, 123))
    expect(exifTime('2021:07:04 12:34:56', '-05:30', null)).toBe(Date.UTC(2021, 6, 4, 18, 4, 56))
    expect(exifTime('2021:07:04 12:34:56', undefined, '5')).toBe(Date.UTC(2021, 6, 4, 12, 34, 56, 500))
    expect(exifTime('2021:02:30 12:00:00', '+00:00', null)).toBeNull()
    expect(exifTime('0000:00:00 00:00:00', null, null)).toBeNull()
    expect(exifTime('    :  :     :  :  ', null, null)).toBeNull()
    expect(exifTime(undefined, '+01:00', null)).toBeNull()
  })
})
