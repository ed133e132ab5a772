// What the client learns from a photo before backing it up (docs/client-library.md, "Derivatives
// and EXIF"): its dimensions, capture time (EXIF or GPS: taken.ts) and (only when the user opted
// in) location, and the derivatives a viewer shows instead of the original, all made here with
// sharp (libvips) and exifr. Node-only: sharp is native code.
//
// Bounded work: the file's first bytes decide whether it is an image at all, so a video or any
// other file is never handed to a decoder and never read beyond its head; sharp refuses inputs
// over MAX_INPUT_PIXELS; exifr is given the EXIF block sharp found in the header, or reads only
// the head of the file. An image that does not decode gives no derivatives and no dimensions,
// never an error: only I/O (a missing file) throws.
import exifr from 'exifr'
import { open } from 'node:fs/promises'
import { availableParallelism } from 'node:os'
import sharp, { type Metadata, type Sharp } from 'sharp'
import type { CameraFacts, CapturedSource } from '../format/metadata.ts'
import { CAMERA_TAGS, cameraFromTags, DERIVATIVE_QUALITY, PREVIEW_SIZE, previewType, THUMBNAIL_SIZE, THUMBNAIL_TYPE } from '../media.ts'
import { capturedFromTags, TAKEN_TAGS } from '../taken.ts'

/** A derivative's bytes as encoded (WebP, or JPEG for a JPEG's preview: media.ts; orientation applied, no metadata at all). */
export interface Derivative {
  readonly kind: 'thumbnail' | 'preview'
  readonly type: string
  readonly width: number
  readonly height: number
  readonly bytes: Uint8Array
}

export interface MediaDescription {
  /** Capture time from EXIF or GPS (taken.ts capturedFromTags), ms since the Unix epoch, or null. */
  readonly captured: number | null
  /** The tag it came from; null exactly when `captured` is. */
  readonly capturedSource: CapturedSource | null
  /** Minutes east of UTC of the wall clock where it was taken (taken.ts capturedFromTags); null without one (a floating time) or without `captured`. */
  readonly capturedOffset: number | null
  /** The original's dimensions as displayed (EXIF orientation applied); null unless it decoded. */
  readonly width: number | null
  readonly height: number | null
  /** Make, model, lens and exposure from EXIF (media.ts cameraFromTags); null when the file states none. */
  readonly camera: CameraFacts | null
  /** EXIF GPS in degrees; null unless asked for and present. */
  readonly location: { readonly latitude: number; readonly longitude: number } | null
  /** A thumbnail, then a preview when one is made; empty when the file is not an image that decodes. */
  readonly derivatives: readonly Derivative[]
}

/** sharp's own default (0x3FFF²), pinned: above today's 200-megapixel phone sensors, below a decompression bomb. */
export const MAX_INPUT_PIXELS = 0x3fff * 0x3fff
// Effort 1 encodes in about a third of the time of the default effort (4) for
// files 4 to 9 per cent larger. JPEG: libjpeg-turbo's standard Huffman tables (optimised ones
// take a second pass) and 4:2:0 chroma, as cameras write it.
const WEBP = { quality: DERIVATIVE_QUALITY, effort: 1 } as const
const JPEG = { quality: DERIVATIVE_QUALITY, optimiseCoding: false } as const

// libvips' operation cache helps a server that resizes the same few images again and again; a
// backup reads each file once, so the cache would only hold memory and open files.
sharp.cache(false)

/**
 * Decodes at once: one per core. Decoding is all CPU, so more at a time only adds the memory of
 * their pixels (a 12-megapixel photo decodes to 36 MiB) and holds libuv threads that file reads
 * and signatures then wait for; backup's other files in flight go on reading and sending.
 */
const DECODES_AT_ONCE = availableParallelism()
let decoding = 0
const waiting: (() => void)[] = []

async function withDecodeSlot<T>(work: () => Promise<T>): Promise<T> {
  if (decoding >= DECODES_AT_ONCE) await new Promise<void>((resolve) => waiting.push(resolve))
  else decoding++
  try {
    return await work()
  } finally {
    const next = waiting.shift()
    if (next === undefined) decoding--
    else next() // the slot passes on
  }
}

type ImageFormat = 'jpeg' | 'png' | 'gif' | 'webp' | 'tiff' | 'heif'

// ISO BMFF major brands of HEIF and AVIF images; MP4 and QuickTime videos carry others.
const HEIF_BRANDS = new Set(['heic', 'heix', 'heim', 'heis', 'hevc', 'hevx', 'mif1', 'msf1', 'avif', 'avis'])
const HEAD_BYTES = 16
const ascii = (bytes: Uint8Array, from: number, to: number): string => String.fromCharCode(...bytes.subarray(from, to))

/**
 * The image format the file's first bytes announce, or null (a video, a document, anything
 * else). TIFF counts only when the caller says image/tiff: camera RAW files (DNG, NEF, CR2, ARW)
 * start like TIFF, and libvips would read their small embedded preview as the photo.
 */
function imageFormat(head: Uint8Array, type: string): ImageFormat | null {
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'jpeg'
  if (ascii(head, 0, 8) === '\x89PNG\r\n\x1a\n') return 'png'
  if (ascii(head, 0, 4) === 'GIF8') return 'gif'
  if (ascii(head, 0, 4) === 'RIFF' && ascii(head, 8, 12) === 'WEBP') return 'webp'
  if (ascii(head, 4, 8) === 'ftyp' && HEIF_BRANDS.has(ascii(head, 8, 12))) return 'heif'
  if ((ascii(head, 0, 4) === 'II*\0' || ascii(head, 0, 4) === 'MM\0*') && type === 'image/tiff') return 'tiff'
  return null
}

/** An image as sharp and exifr take it: a path, or the file's bytes already read (node/files.ts fileSource). */
type MediaInput = string | Uint8Array

async function readHead(file: MediaInput): Promise<Uint8Array> {
  if (typeof file !== 'string') return file.subarray(0, HEAD_BYTES)
  const handle = await open(file, 'r')
  try {
    const head = new Uint8Array(HEAD_BYTES)
    const { bytesRead } = await handle.read(head, 0, HEAD_BYTES, 0)
    return head.subarray(0, bytesRead)
  } finally {
    await handle.close()
  }
}

const input = (file: MediaInput): Sharp => sharp(file, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' })

/**
 * A preview only when the original is larger than one, or in a format browsers do not show
 * (TIFF): otherwise a viewer shows the original itself, which is already small.
 */
const previewNeeded = (format: ImageFormat, width: number, height: number): boolean => Math.max(width, height) > PREVIEW_SIZE || format === 'tiff'

/**
 * Decodes the image once, oriented and reduced to the largest derivative's size, and encodes the
 * derivatives from those pixels. Throws when sharp cannot decode it.
 */
async function derive(file: MediaInput, format: ImageFormat, width: number, height: number): Promise<Derivative[]> {
  const withPreview = previewNeeded(format, width, height)
  const largest = withPreview ? PREVIEW_SIZE : THUMBNAIL_SIZE
  const { data, info } = await input(file)
    .rotate()
    .resize(largest, largest, { fit: 'inside', withoutEnlargement: true })
    .raw({ depth: 'uchar' })
    .toBuffer({ resolveWithObject: true })
  const pixels = (): Sharp => sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } })
  const encode = async (kind: Derivative['kind'], image: Sharp): Promise<Derivative> => {
    const type = kind === 'thumbnail' ? THUMBNAIL_TYPE : previewType(format === 'jpeg')
    const encoded = await (type === 'image/jpeg' ? image.jpeg(JPEG) : image.webp(WEBP)).toBuffer({ resolveWithObject: true })
    return {
      kind,
      type,
      width: encoded.info.width,
      height: encoded.info.height,
      bytes: new Uint8Array(encoded.data.buffer, encoded.data.byteOffset, encoded.data.length),
    }
  }
  const thumbnail = await encode('thumbnail', pixels().resize(THUMBNAIL_SIZE, THUMBNAIL_SIZE, { fit: 'inside', withoutEnlargement: true }))
  return withPreview ? [thumbnail, await encode('preview', pixels())] : [thumbnail]
}

const GPS_TAGS = ['GPSLatitude', 'GPSLatitudeRef', 'GPSLongitude', 'GPSLongitudeRef']
// Raw values: exifr's revived dates would be in the machine's time zone. Two objects made once:
// exifr keeps every options object it is given in a Map for good, so one per call would leak.
// A pick is all exifr reads: without `location`, the GPS IFD is read for its date and time
// (TAKEN_TAGS) and its position tags are neither picked nor parsed. The camera facts (CAMERA_TAGS) are read either way.
const EXIF_OPTIONS = { pick: [...TAKEN_TAGS, ...CAMERA_TAGS], reviveValues: false }
const EXIF_WITH_GPS_OPTIONS = { pick: [...TAKEN_TAGS, ...CAMERA_TAGS, ...GPS_TAGS], gps: true, reviveValues: false }

/** The EXIF fields used here; the GPS position only when `location`. */
async function readExif(source: Uint8Array | string, location: boolean): Promise<Record<string, unknown>> {
  try {
    const tags: unknown = await exifr.parse(source, location ? EXIF_WITH_GPS_OPTIONS : EXIF_OPTIONS)
    return typeof tags === 'object' && tags !== null ? (tags as Record<string, unknown>) : {}
  } catch {
    return {} // no EXIF, or EXIF exifr cannot read: the photo is still backed up
  }
}

/** sharp's EXIF block: the TIFF structure, after the "Exif\0\0" of JPEG and WebP (PNG has none). */
function tiffOf(exif: Buffer): Uint8Array {
  return exif.subarray(0, 6).toString('latin1') === 'Exif\0\0' ? exif.subarray(6) : exif
}

function locationOf(tags: Record<string, unknown>): MediaDescription['location'] {
  const { latitude, longitude } = tags
  if (typeof latitude !== 'number' || typeof longitude !== 'number' || !Number.isFinite(latitude) || !Number.isFinite(longitude)) return null
  if (Math.abs(latitude) > 90 || Math.abs(longitude) > 180) return null
  return { latitude, longitude }
}

/**
 * Describes one file for backup: capture time and its source, dimensions, camera facts, location when
 * `options.location` (opt-in: otherwise the GPS position is not even parsed) and derivatives, from its path or from its
 * bytes when they are already in memory (read once: nothing here reads the file again). `type` is the file's media
 * type (e.g. from mediaTypeOf). Throws only when the file cannot be read (missing, a folder,
 * no permission); content sharp or exifr cannot read gives nulls and no derivatives.
 */
export async function describeMedia(file: MediaInput, type: string, options: { location?: boolean } = {}): Promise<MediaDescription> {
  const location = options.location === true
  const format = imageFormat(await readHead(file), type)
  if (format === null)
    return { captured: null, capturedSource: null, capturedOffset: null, width: null, height: null, camera: null, location: null, derivatives: [] }
  const metadata: Metadata | null = await input(file)
    .metadata()
    .catch(() => null)
  let derived: { width: number; height: number; derivatives: Derivative[] } | null = null
  if (metadata !== null) {
    // autoOrient: the dimensions once EXIF orientation is applied.
    const { width, height } = metadata.autoOrient
    derived = await withDecodeSlot(() => derive(file, format, width, height)).then(
      (derivatives) => ({ width, height, derivatives }),
      () => null,
    )
  }
  // What sharp found in the header; when sharp could not read even that (HEIC: the prebuilt
  // libvips has no HEVC decoder), exifr reads the head of the file itself.
  const tags = metadata === null ? await readExif(file, location) : metadata.exif === undefined ? {} : await readExif(tiffOf(metadata.exif), location)
  const captured = capturedFromTags(tags)
  return {
    captured: captured?.at ?? null,
    capturedSource: captured?.source ?? null,
    capturedOffset: captured?.offset ?? null,
    width: derived?.width ?? null,
    height: derived?.height ?? null,
    camera: cameraFromTags(tags),
    location: location ? locationOf(tags) : null,
    derivatives: derived?.derivatives ?? [],
  }
}
