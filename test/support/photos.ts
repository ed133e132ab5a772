// Photo libraries for tests and benchmarks, made on the spot: deterministic from a seed, encoded
// by sharp with the EXIF a camera writes (capture time and offset, GPS, orientation), and sized
// like real files. Pixels are a smooth gradient under noise: noise keeps JPEG from shrinking a
// picture to nothing, so bytes per pixel are those of a photo. The noise is an AES-CTR keystream
// (native, so a library of thousands is quick to make), as are opaque video-like files.
import { createCipheriv, createHash } from 'node:crypto'
import { mkdir, open } from 'node:fs/promises'
import path from 'node:path'
import sharp, { type Exif } from 'sharp'

export type PhotoFormat = 'jpeg' | 'png' | 'webp' | 'gif'

export interface PhotoOptions {
  readonly format: PhotoFormat
  /** Pixels as stored (before the Orientation tag is applied). */
  readonly width: number
  readonly height: number
  readonly seed: number
  /** Written as DateTimeOriginal (wall-clock time at `utcOffsetMinutes`); no date when absent. */
  readonly captured?: Date
  /** The camera's offset from UTC, written as OffsetTimeOriginal; 0 unless given, null to write no offset. */
  readonly utcOffsetMinutes?: number | null
  /** Degrees, written as the GPS IFD. */
  readonly gps?: { readonly latitude: number; readonly longitude: number }
  /** EXIF Orientation, 1 to 8. */
  readonly orientation?: number
  /** EXIF Make and Model; "Coffer" and "Test photo" unless given. */
  readonly camera?: { readonly make: string; readonly model: string }
  /** More tags as written, by IFD (0: the image's, 2: EXIF's, 3: GPS'), e.g. { IFD0: { DateTime: '2019:07:04 12:00:00' } }. */
  readonly moreExif?: { readonly IFD0?: Record<string, string>; readonly IFD2?: Record<string, string>; readonly IFD3?: Record<string, string> }
}

/** Noise bits per channel: about a third of a byte per pixel as a quality-85 JPEG. */
const NOISE_MASK = 63

/** Bytes of a seeded keystream: the same seed gives the same bytes. */
function keystream(seed: number, purpose: string): (length: number) => Buffer {
  const key = createHash('sha256').update(`coffer-test-photos/${purpose}/${seed}`).digest().subarray(0, 16)
  const cipher = createCipheriv('aes-128-ctr', key, Buffer.alloc(16))
  return (length) => cipher.update(Buffer.alloc(length))
}

/**
 * width × height × 3 RGB bytes: a diagonal gradient between two seeded colours, plus noise. The
 * gradient stays below 256 - 64, so adding the noise never carries out of a byte and four bytes
 * are added at once as one 32-bit word.
 */
function pixels(width: number, height: number, seed: number): Uint8Array {
  const random = keystream(seed, 'pixels')
  const ends = random(6)
  const span = width + height
  const ramp = new Uint8Array(span * 3) // the gradient along x + y
  for (let p = 0; p < span; p++) {
    for (let c = 0; c < 3; c++) ramp[p * 3 + c] = (((ends[c]! * (span - p) + ends[c + 3]! * p) / span) * (255 - NOISE_MASK)) / 255
  }
  const rowBytes = width * 3
  const gradient = new Uint8Array(rowBytes * height)
  for (let y = 0; y < height; y++) gradient.set(ramp.subarray(y * 3, y * 3 + rowBytes), y * rowBytes)
  const out = new Uint8Array(gradient.length)
  out.set(random(out.length))
  const words = out.length >> 2
  const out32 = new Uint32Array(out.buffer, 0, words)
  const gradient32 = new Uint32Array(gradient.buffer, 0, words)
  const mask32 = NOISE_MASK * 0x01010101
  for (let i = 0; i < words; i++) out32[i] = ((out32[i]! & mask32) + gradient32[i]!) >>> 0
  for (let i = words * 4; i < out.length; i++) out[i] = (out[i]! & NOISE_MASK) + gradient[i]!
  return out
}

const two = (n: number): string => String(n).padStart(2, '0')

/** "YYYY:MM:DD HH:MM:SS" of a time as seen at an offset. */
function exifDateTime(time: Date, offsetMinutes: number): string {
  const local = new Date(time.getTime() + offsetMinutes * 60_000)
  return `${local.getUTCFullYear()}:${two(local.getUTCMonth() + 1)}:${two(local.getUTCDate())} ${two(local.getUTCHours())}:${two(local.getUTCMinutes())}:${two(local.getUTCSeconds())}`
}

function exifOffset(minutes: number): string {
  const magnitude = Math.abs(minutes)
  return `${minutes < 0 ? '-' : '+'}${two(Math.floor(magnitude / 60))}:${two(magnitude % 60)}`
}

/** Degrees as EXIF's degrees, minutes, seconds rationals, seconds to 1e-6 (1e-10 degree). */
function exifDegrees(degrees: number): string {
  const micro = Math.round(Math.abs(degrees) * 3_600_000_000)
  const whole = Math.floor(micro / 3_600_000_000)
  const minutes = Math.floor((micro % 3_600_000_000) / 60_000_000)
  return `${whole}/1 ${minutes}/1 ${micro % 60_000_000}/1000000`
}

/** The IFDs sharp writes: IFD2 is EXIF's, IFD3 the GPS one. */
function exifOf(options: PhotoOptions): Exif {
  const exif: { IFD0: Record<string, string>; IFD2: Record<string, string>; IFD3?: Record<string, string> } = {
    IFD0: { Make: options.camera?.make ?? 'Coffer', Model: options.camera?.model ?? 'Test photo' },
    IFD2: {},
  }
  if (options.captured !== undefined) {
    const offset = options.utcOffsetMinutes === undefined ? 0 : options.utcOffsetMinutes
    exif.IFD2.DateTimeOriginal = exifDateTime(options.captured, offset ?? 0)
    if (offset !== null) exif.IFD2.OffsetTimeOriginal = exifOffset(offset)
  }
  if (options.gps !== undefined) {
    const { latitude, longitude } = options.gps
    exif.IFD3 = {
      GPSLatitudeRef: latitude < 0 ? 'S' : 'N',
      GPSLatitude: exifDegrees(latitude),
      GPSLongitudeRef: longitude < 0 ? 'W' : 'E',
      GPSLongitude: exifDegrees(longitude),
    }
  }
  const more = options.moreExif
  if (more !== undefined) {
    Object.assign(exif.IFD0, more.IFD0)
    Object.assign(exif.IFD2, more.IFD2)
    if (more.IFD3 !== undefined) exif.IFD3 = { ...exif.IFD3, ...more.IFD3 }
  }
  return exif
}

/**
 * Writes a photo: deterministic pixels from the seed, and EXIF (not for GIF, which has none).
 * JPEG quality 85 with the standard Huffman tables, as cameras write it (optimised tables take a
 * second pass, doubling the time for 5 per cent), PNG at zlib level 1 (quick; noise does not
 * deflate anyway), WebP quality 80 at the least effort. Answers the bytes written.
 */
export async function writePhoto(file: string, options: PhotoOptions): Promise<number> {
  const { width, height } = options
  let image = sharp(pixels(width, height, options.seed), { raw: { width, height, channels: 3 } })
  if (options.orientation !== undefined) image = image.withMetadata({ orientation: options.orientation })
  if (options.format !== 'gif') image = image.withExifMerge(exifOf(options))
  const encoded =
    options.format === 'jpeg'
      ? image.jpeg({ quality: 85, optimiseCoding: false })
      : options.format === 'png'
        ? image.png({ compressionLevel: 1 })
        : options.format === 'webp'
          ? image.webp({ quality: 80, effort: 0 })
          : image.gif({ effort: 1 })
  await mkdir(path.dirname(file), { recursive: true })
  return (await encoded.toFile(file)).size
}

const PIECE_BYTES = 1 << 20

/**
 * Writes an MP4 (or, for a .mov name, QuickTime) look-alike of exactly `bytes` bytes: an ftyp
 * box, then one mdat box of seeded random bytes, written a MiB at a time so that any size fits
 * in flat memory. No decoder can play it; a backup only needs to find it opaque.
 */
export async function writeOpaque(file: string, bytes: number, seed: number): Promise<void> {
  const brand = path.extname(file).toLowerCase() === '.mov' ? 'qt  ' : 'isom'
  const ftyp = Buffer.concat([Buffer.from([0, 0, 0, 20]), Buffer.from(`ftyp${brand}`, 'latin1'), Buffer.alloc(4), Buffer.from(brand, 'latin1')])
  const mdat = Buffer.alloc(16) // size 1: the 64-bit size follows the type
  mdat.writeUInt32BE(1, 0)
  mdat.write('mdat', 4, 'latin1')
  mdat.writeBigUInt64BE(BigInt(bytes - ftyp.length), 8)
  const header = Buffer.concat([ftyp, mdat])
  if (bytes < header.length) throw new RangeError(`an opaque file needs at least ${header.length} bytes`)
  await mkdir(path.dirname(file), { recursive: true })
  const random = keystream(seed, 'opaque')
  const handle = await open(file, 'w')
  try {
    await handle.write(header)
    for (let left = bytes - header.length; left > 0; left -= PIECE_BYTES) await handle.write(random(Math.min(left, PIECE_BYTES)))
  } finally {
    await handle.close()
  }
}

/** Numbers in [0, 1) from a seed (mulberry32): a library's choices, the same for the same seed. */
export function randomNumbers(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = Math.imul(state ^ (state >>> 15), 1 | state)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32
  }
}

export interface LibraryOptions {
  /** Files besides the big one: photos, and about one in 40 a small video. */
  readonly count: number
  readonly seed: number
  /** Adds one opaque QuickTime file of this many bytes ("big.mov"). */
  readonly bigFileBytes?: number
  /** Spreads the files over this many subfolders (some nested), besides the top folder. */
  readonly subfolders?: number
  /** Files written at once; 4 unless given (sharp encodes on libuv's pool while pixels are made). */
  readonly parallel?: number
}

export interface LibraryFile {
  /** Relative to the library's folder, with "/" between names. */
  readonly path: string
  readonly size: number
  readonly type: string
}

const EXTENSIONS: Record<PhotoFormat, string> = { jpeg: '.jpg', png: '.png', webp: '.webp', gif: '.gif' }
const TYPES: Record<string, string> = {
  '.jpg': 'image/jpeg',
  '.png': 'image/png',
  '.webp': 'image/webp',
  '.gif': 'image/gif',
  '.mp4': 'video/mp4',
  '.mov': 'video/quicktime',
}
const ASPECTS = [4 / 3, 3 / 2, 16 / 9, 1] as const
const PLACES = [
  { latitude: 48.8582602, longitude: 2.2944991 },
  { latitude: -33.8567844, longitude: 151.2152967 },
  { latitude: 40.6892494, longitude: -74.0445004 },
  { latitude: 35.3606255, longitude: 138.7273634 },
] as const

type Plan = { readonly file: string } & ({ readonly photo: PhotoOptions } | { readonly opaque: number })

/**
 * Writes a mixed library into `folder`: mostly JPEGs of 640 to 1280 px on the long side (about
 * 0.1 to 0.45 MiB), some WebP, PNG and GIF (smaller: lossless noise is large and GIF slow to
 * make), about one file in 40 a small MP4 or MOV (64 KiB to 2 MiB); capture times over ten
 * years with assorted UTC offsets (one photo in ten without a date), GPS on one in three,
 * orientation 6 or 8 on one in ten. Deterministic for a seed. Answers every file written with
 * its size and media type.
 */
export async function generateLibrary(folder: string, options: LibraryOptions): Promise<LibraryFile[]> {
  const random = randomNumbers(options.seed)
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!
  const between = (low: number, high: number): number => low + Math.floor(random() * (high - low + 1))
  const subfolders = Array.from({ length: options.subfolders ?? 0 }, (_, i) => (i % 2 === 1 ? `set-${i - 1}/set-${i}` : `set-${i}`))
  const plans: Plan[] = []
  for (let n = 0; n < options.count; n++) {
    const where = subfolders.length > 0 && random() < 0.6 ? `${pick(subfolders)}/` : ''
    const roll = random()
    if (roll < 0.025) {
      plans.push({ file: `${where}VID_${String(n).padStart(5, '0')}${random() < 0.5 ? '.mp4' : '.mov'}`, opaque: between(64 << 10, 2 << 20) })
      continue
    }
    const format: PhotoFormat = roll < 0.85 ? 'jpeg' : roll < 0.91 ? 'png' : roll < 0.97 ? 'webp' : 'gif'
    const long = format === 'jpeg' || format === 'webp' ? between(640, 1280) : format === 'png' ? between(240, 480) : between(120, 320)
    const short = Math.round(long / pick(ASPECTS))
    const portrait = random() < 0.25
    const utcOffsetMinutes = pick([0, 60, 120, -300, -420, 330, 540, null])
    plans.push({
      file: `${where}IMG_${String(n).padStart(5, '0')}${EXTENSIONS[format]}`,
      photo: {
        format,
        width: portrait ? short : long,
        height: portrait ? long : short,
        seed: options.seed * 1_000_003 + n,
        ...(random() < 0.9 ? { captured: new Date(Date.UTC(2015, 0, 1) + Math.floor(random() * 10 * 365.25 * 86_400) * 1000), utcOffsetMinutes } : {}),
        ...(random() < 1 / 3 ? { gps: pick(PLACES) } : {}),
        ...(random() < 0.1 ? { orientation: pick([6, 8]) } : {}),
      },
    })
  }
  if (options.bigFileBytes !== undefined) plans.push({ file: 'big.mov', opaque: options.bigFileBytes })

  const written: LibraryFile[] = []
  let next = 0
  const worker = async (): Promise<void> => {
    for (let i = next++; i < plans.length; i = next++) {
      const plan = plans[i]!
      const target = path.join(folder, plan.file)
      let size: number
      if ('photo' in plan) size = await writePhoto(target, plan.photo)
      else {
        await writeOpaque(target, plan.opaque, options.seed * 1_000_003 + i)
        size = plan.opaque
      }
      written.push({ path: plan.file, size, type: TYPES[path.extname(plan.file)]! })
    }
  }
  await Promise.all(Array.from({ length: options.parallel ?? 4 }, worker))
  return written.sort((a, b) => a.path.localeCompare(b.path))
}
