// What the client learns from a photo or video before backing it up (docs/client-library.md,
// "Derivatives and EXIF"): its dimensions, capture time (EXIF or GPS: taken.ts) and (only when
// the user opted in) location, a video's length, and the derivatives a viewer shows instead of
// the original, all made here with sharp (libvips) and exifr; a video's poster frame, length and
// container creation time with ffmpeg and ffprobe when they are on the PATH (decision 0069). Node-only: sharp is native code.
//
// Bounded work: the file's first bytes decide whether it is an image at all, so a video or any
// other file is never handed to an image decoder and never read here beyond its head; sharp refuses inputs
// over MAX_INPUT_PIXELS; exifr is given the EXIF block sharp found in the header, or reads only
// the head of the file. A video is read by ffprobe and ffmpeg in processes of their own, each
// with a time limit and a cap on what it may print. An image that does not decode, or a video
// they cannot read, gives no derivatives, never an error: only I/O (a missing file) throws.
import exifr from 'exifr'
import { execFile } from 'node:child_process'
import { open } from 'node:fs/promises'
import { availableParallelism } from 'node:os'
import path from 'node:path'
import sharp, { type Metadata, type Sharp } from 'sharp'
import type { CameraFacts, CapturedSource } from '../format/metadata.ts'
import { CAMERA_TAGS, cameraFromTags, DERIVATIVE_QUALITY, PREVIEW_SIZE, previewType, THUMBNAIL_SIZE, THUMBNAIL_TYPE } from '../media.ts'
import { type Captured, capturedFromTags, localZone, MAX_OFFSET_MINUTES, TAKEN_TAGS, type ZoneOffset } from '../taken.ts'

/** A derivative's bytes as encoded (WebP, or JPEG for a JPEG's preview: media.ts; orientation applied, no metadata at all). */
export interface Derivative {
  readonly kind: 'thumbnail' | 'preview'
  readonly type: string
  readonly width: number
  readonly height: number
  readonly bytes: Uint8Array
}

export interface MediaDescription {
  /** Capture time from EXIF or GPS (taken.ts capturedFromTags), or a video's container creation time (containerCaptured), ms since the Unix epoch, or null. */
  readonly captured: number | null
  /** The tag it came from; null exactly when `captured` is. */
  readonly capturedSource: CapturedSource | null
  /** Minutes east of UTC of the wall clock where it was taken (taken.ts capturedFromTags, containerCaptured); null without one (a floating time) or without `captured`. */
  readonly capturedOffset: number | null
  /**
   * The original's dimensions as displayed: a photo's with its EXIF orientation applied, null unless it decoded;
   * a video's with its rotation and pixel aspect applied, as ffprobe reads them, null without ffprobe or when it cannot read the file.
   */
  readonly width: number | null
  readonly height: number | null
  /** A video's length in whole milliseconds, as ffprobe reads it (the metadata's duration); null for a photo and when unknown. */
  readonly duration: number | null
  /** Make, model, lens and exposure from EXIF (media.ts cameraFromTags); null when the file states none. */
  readonly camera: CameraFacts | null
  /** EXIF GPS in degrees; null unless asked for and present. */
  readonly location: { readonly latitude: number; readonly longitude: number } | null
  /** A thumbnail, then a preview when one is made (always, for a video's poster frame); empty when the file is not an image that decodes nor a video ffmpeg decodes. */
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
async function derive(file: MediaInput, format: ImageFormat, withPreview: boolean): Promise<Derivative[]> {
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

export interface MediaOptions {
  /** Read the GPS position (the user opted in); off unless given. */
  readonly location?: boolean
  /** Read videos with ffprobe and ffmpeg when they are on the PATH; on unless given (false: a video is described as any other file). */
  readonly ffmpeg?: boolean
  /**
   * The backing-up device's time zone: the offset of a video's container `creation_time`, a
   * moment with no zone of its own (containerCaptured). taken.ts localZone (TZ, else the system's) unless given.
   */
  readonly zone?: ZoneOffset
}

/**
 * Describes one file for backup: capture time and its source, dimensions, camera facts, location when
 * `options.location` (opt-in: otherwise the GPS position is not even parsed), a video's length, and derivatives, from its path or from its
 * bytes when they are already in memory (read once: nothing here reads the file again; a video is
 * better given by its path: ffmpeg seeks in a file, and cannot in a pipe). `type` is the file's media
 * type (e.g. from mediaTypeOf): a file of a video/* type whose first bytes are not an image's is
 * read with ffprobe and ffmpeg (describeVideo) unless `options.ffmpeg` is false. Throws only when the file cannot be read (missing, a folder,
 * no permission); content sharp, exifr or ffmpeg cannot read gives nulls and no derivatives.
 */
export async function describeMedia(file: MediaInput, type: string, options: MediaOptions = {}): Promise<MediaDescription> {
  const location = options.location === true
  const format = imageFormat(await readHead(file), type)
  if (format === null) {
    const video = type.startsWith('video/') && options.ffmpeg !== false ? await describeVideo(file, options.zone ?? localZone) : null
    return {
      captured: video?.captured?.at ?? null,
      capturedSource: video?.captured?.source ?? null,
      capturedOffset: video?.captured?.offset ?? null,
      width: video?.width ?? null,
      height: video?.height ?? null,
      duration: video?.duration ?? null,
      camera: null,
      location: null,
      derivatives: video?.derivatives ?? [],
    }
  }
  const metadata: Metadata | null = await input(file)
    .metadata()
    .catch(() => null)
  let derived: { width: number; height: number; derivatives: Derivative[] } | null = null
  if (metadata !== null) {
    // autoOrient: the dimensions once EXIF orientation is applied.
    const { width, height } = metadata.autoOrient
    derived = await withDecodeSlot(() => derive(file, format, previewNeeded(format, width, height))).then(
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
    duration: null,
    camera: cameraFromTags(tags),
    location: location ? locationOf(tags) : null,
    derivatives: derived?.derivatives ?? [],
  }
}

// Videos: ffprobe reads the length, the dimensions and the creation time from the container,
// ffmpeg decodes one frame, and sharp makes the derivatives of that frame as it makes a photo's (decision 0069).

/** How long ffprobe may take to read a video's container, and ffmpeg to decode its poster frame. */
const PROBE_TIMEOUT_MS = 10_000
const POSTER_TIMEOUT_MS = 30_000
/** What ffprobe may print (a few hundred bytes of JSON: only the fields asked for), and ffmpeg: one PNG of at most PREVIEW_SIZE² RGB pixels. */
const PROBE_OUTPUT_MAX = 64 * 1024
const POSTER_OUTPUT_MAX = 3 * PREVIEW_SIZE * PREVIEW_SIZE + 1024 * 1024
/** The poster frame: a second in, or a tenth of the way into a video shorter than 10 s (the first frames are often black). */
const POSTER_AT_MS = 1000
/** The poster's way out: the first video stream's one frame, RGB, as a PNG quickly compressed, on a pipe. */
const POSTER_OUTPUT = '-map 0:v:0 -an -sn -dn -frames:v 1 -pix_fmt rgb24 -c:v png -compression_level 1 -f image2pipe'.split(' ')
/** Seconds of the video ffmpeg reads past the poster's time, at most. */
const POSTER_READ_S = 10
/** Dimensions past this are not a video's (a file that lies). */
const VIDEO_SIDE_MAX = 1 << 16

/** The programs, as the PATH finds them. */
interface VideoTools {
  readonly ffprobe: string
  readonly ffmpeg: string
}

let videoTools: Promise<VideoTools | null> | undefined

/**
 * ffprobe and ffmpeg, found on the PATH once per process (each run once with -version, which
 * fails when it is missing or broken); null when either is not there.
 */
export function findVideoTools(): Promise<VideoTools | null> {
  const works = (name: string): Promise<boolean> =>
    run(name, ['-version'], null, { timeoutMs: PROBE_TIMEOUT_MS, maxBytes: PROBE_OUTPUT_MAX }).then(
      () => true,
      () => false,
    )
  videoTools ??= Promise.all([works('ffprobe'), works('ffmpeg')]).then(([ffprobe, ffmpeg]) =>
    ffprobe && ffmpeg ? { ffprobe: 'ffprobe', ffmpeg: 'ffmpeg' } : null,
  )
  return videoTools
}

/**
 * Runs `command` (no shell: the arguments as they are) and answers what it printed on stdout;
 * rejects when it fails, runs past `timeoutMs` (killed) or prints more than `maxBytes`.
 * `input` is written to its stdin, which is closed either way.
 */
function run(command: string, args: readonly string[], input: Uint8Array | null, limits: { timeoutMs: number; maxBytes: number }): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      command,
      args,
      { encoding: 'buffer', timeout: limits.timeoutMs, maxBuffer: limits.maxBytes, killSignal: 'SIGKILL', windowsHide: true },
      (error, stdout) => (error === null ? resolve(stdout) : reject(error)),
    )
    child.stdin?.on('error', () => {}) // it may stop reading before the end (EPIPE): its exit says how it went
    child.stdin?.end(input ?? undefined)
  })
}

interface ProbedVideo {
  readonly width: number
  readonly height: number
  readonly duration: number | null
}

const positiveNumber = (value: unknown): number | null => {
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number.parseFloat(value) : Number.NaN
  return Number.isFinite(n) && n > 0 ? n : null
}

/**
 * What ffprobe's JSON says of the first video stream: its dimensions as displayed (the pixel aspect
 * ratio applied, then the rotation: a phone's portrait video is stored landscape and turned by 90°
 * in its display matrix) and the length in whole milliseconds (the container's, else the stream's).
 * Null when there is no video stream or its dimensions are missing or absurd.
 */
export function probedVideo(json: unknown): ProbedVideo | null {
  if (typeof json !== 'object' || json === null) return null
  const { streams, format } = json as { streams?: unknown; format?: { duration?: unknown } }
  const stream: unknown = Array.isArray(streams) ? streams[0] : undefined
  if (typeof stream !== 'object' || stream === null) return null
  const facts = stream as {
    width?: unknown
    height?: unknown
    duration?: unknown
    sample_aspect_ratio?: unknown
    tags?: { rotate?: unknown }
    side_data_list?: unknown
  }
  const { width, height } = facts
  if (!Number.isSafeInteger(width) || !Number.isSafeInteger(height)) return null
  let shown = { width: width as number, height: height as number }
  // Anamorphic video (a DV camera's 720×576 at 16:15) is shown wider than it is stored; "0:1" and "1:1" change nothing.
  const aspect = typeof facts.sample_aspect_ratio === 'string' ? /^(\d+):(\d+)$/.exec(facts.sample_aspect_ratio) : null
  if (aspect !== null && Number(aspect[1]) > 0 && Number(aspect[2]) > 0) {
    shown = { ...shown, width: Math.max(1, Math.round((shown.width * Number(aspect[1])) / Number(aspect[2]))) }
  }
  // The display matrix (ffprobe 5 and later), else the rotate tag older versions printed; in degrees, either way round.
  const sideData = Array.isArray(facts.side_data_list) ? (facts.side_data_list as unknown[]) : []
  const matrix = sideData.find((entry): entry is { rotation: number } => typeof (entry as { rotation?: unknown } | null)?.rotation === 'number')
  const rotation = matrix?.rotation ?? Number(facts.tags?.rotate ?? 0)
  if (Number.isFinite(rotation) && Math.abs(Math.round(rotation / 90)) % 2 === 1) shown = { width: shown.height, height: shown.width }
  if (shown.width < 1 || shown.height < 1 || shown.width > VIDEO_SIDE_MAX || shown.height > VIDEO_SIDE_MAX) return null
  const seconds = positiveNumber(format?.duration) ?? positiveNumber(facts.duration)
  const duration = seconds === null ? null : Math.round(seconds * 1000)
  return { ...shown, duration: duration !== null && Number.isSafeInteger(duration) && duration > 0 ? duration : null }
}

/** Apple's `com.apple.quicktime.creationdate` (an iPhone's MOV): the wall clock where it was shot with its offset, "2019-07-04T12:34:56+0200". */
const APPLE_CREATION_DATE = 'com.apple.quicktime.creationdate'
/** An ISO 8601 date and time as containers state them: "2019-07-04T10:34:56.000000Z" (ffprobe's creation_time), "…+0200", "…+02:00"; a space for the T (older ffprobe). */
const CONTAINER_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?$/
/** Before this a creation time is a clock never set: QuickTime's zero (1904-01-01), Unix's (1970-01-01) and the day after either. */
const CONTAINER_TIME_MIN = Date.UTC(1970, 0, 2)

/** A container's time as [the moment in ms, its stated offset in minutes east (null when it states none)]; null when it is not a real date and time or states an offset beyond ±18 hours. */
function containerTime(value: unknown): [number, number | null] | null {
  const match = typeof value === 'string' ? CONTAINER_TIME.exec(value.trim()) : null
  if (match === null) return null
  const [year, month, day, hours, minutes, seconds] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number]
  const wallClock = Date.UTC(year, month - 1, day, hours, minutes, seconds)
  // Date.UTC rolls 30 February into March, 24:00 into the next day: a real date and time reads back the same.
  if (new Date(wallClock).toISOString().slice(0, 19) !== `${match.slice(1, 4).join('-')}T${match.slice(4, 7).join(':')}`) return null
  const zone = match[8]
  let offset: number | null = null
  if (zone === 'Z') offset = 0
  else if (zone !== undefined) {
    const [zoneHours, zoneMinutes] = [Number(zone.slice(1, 3)), Number(zone.slice(-2))]
    if (zoneMinutes > 59 || zoneHours * 60 + zoneMinutes > MAX_OFFSET_MINUTES) return null
    offset = (zone[0] === '-' ? -1 : 1) * (zoneHours * 60 + zoneMinutes) || 0
  }
  const milliseconds = match[7] === undefined ? 0 : Number(match[7].padEnd(3, '0').slice(0, 3))
  return [wallClock - (offset ?? 0) * 60_000 + milliseconds, offset]
}

/**
 * A video's capture time from ffprobe's JSON (source `container`, metadata version 5: docs/client-format.md,
 * "Dates from outside the file's EXIF"): Apple's `com.apple.quicktime.creationdate` when it states
 * an offset, at that offset (where it was shot); else the container's `creation_time`, else the
 * video stream's (a moment: UTC, stated or not), at `zone` (the backing-up device's) at that
 * moment. A time that does not parse, names no real date, lies before CONTAINER_TIME_MIN (a clock
 * never set) or states an offset beyond ±18 hours is passed over. Null when none is left.
 */
export function containerCaptured(json: unknown, zone: ZoneOffset): Captured | null {
  if (typeof json !== 'object' || json === null) return null
  const { streams, format } = json as { streams?: unknown; format?: { tags?: Record<string, unknown> } }
  const streamTags = Array.isArray(streams) ? (streams[0] as { tags?: Record<string, unknown> } | undefined)?.tags : undefined
  const usable = (time: [number, number | null] | null): time is [number, number | null] => time !== null && time[0] >= CONTAINER_TIME_MIN
  const apple = containerTime(format?.tags?.[APPLE_CREATION_DATE])
  if (usable(apple) && apple[1] !== null) return { at: apple[0], source: 'container', offset: apple[1] }
  for (const tags of [format?.tags, streamTags]) {
    const created = containerTime(tags?.creation_time)
    if (usable(created)) return { at: created[0], source: 'container', offset: zone(created[0]) }
  }
  return null
}

/** ffmpeg's name for the input: the file by its path (file: so that no name is taken for a protocol or an option), or stdin. */
const ffmpegInput = (file: MediaInput): string => (typeof file === 'string' ? `file:${path.resolve(file)}` : 'pipe:0')
const stdinOf = (file: MediaInput): Uint8Array | null => (typeof file === 'string' ? null : file)

/** What ffprobe says of the container and its first video stream: the facts probedVideo and containerCaptured read, as JSON. */
async function probe(tools: VideoTools, file: MediaInput): Promise<unknown> {
  const entries = [
    'format=duration',
    `format_tags=creation_time,${APPLE_CREATION_DATE}`,
    'stream=width,height,duration,sample_aspect_ratio',
    'stream_tags=rotate,creation_time',
    'stream_side_data=rotation',
  ].join(':')
  const args = ['-v', 'error', '-hide_banner', '-print_format', 'json', '-select_streams', 'v:0', '-show_entries', entries, ffmpegInput(file)]
  const printed = await run(tools.ffprobe, args, stdinOf(file), { timeoutMs: PROBE_TIMEOUT_MS, maxBytes: PROBE_OUTPUT_MAX })
  return JSON.parse(printed.toString('utf8'))
}

/**
 * One frame `atMs` into the video, upright (ffmpeg applies the rotation), square pixels, no larger
 * than the preview, as a PNG; empty when there is no frame there.
 */
function posterFrame(tools: VideoTools, file: MediaInput, atMs: number): Promise<Buffer> {
  const fit = `scale=iw*sar:ih,setsar=1,scale='min(${PREVIEW_SIZE},iw)':'min(${PREVIEW_SIZE},ih)':force_original_aspect_ratio=decrease`
  // -ss before -i: ffmpeg seeks in the file to the keyframe before, then decodes up to that time,
  // reading no more than POSTER_READ_S past it (a broken video is not decoded to its end, error
  // after error); after -i, for a pipe, which cannot seek: it decodes from the start. Its errors
  // are not printed (-v fatal): nothing reads them, and a broken video has one a frame.
  const seek = ['-ss', (atMs / 1000).toFixed(3)]
  const before = typeof file === 'string' ? [...seek, '-t', String(POSTER_READ_S)] : []
  const args = ['-nostdin', '-v', 'fatal', '-hide_banner', ...before, '-i', ffmpegInput(file), ...(typeof file === 'string' ? [] : seek)]
  args.push('-vf', fit, ...POSTER_OUTPUT, 'pipe:1')
  return run(tools.ffmpeg, args, stdinOf(file), { timeoutMs: POSTER_TIMEOUT_MS, maxBytes: POSTER_OUTPUT_MAX })
}

/**
 * A video's dimensions, length, capture time (containerCaptured, `zone` for a `creation_time`)
 * and derivatives (a thumbnail and a preview of its poster frame, WebP: decision 0069), or null
 * without ffprobe and ffmpeg or when ffprobe cannot read it. A video ffprobe reads but ffmpeg
 * cannot decode keeps its dimensions, length and capture time, with no derivatives.
 * One decode slot for the whole: ffmpeg decodes on as many cores as it finds.
 */
async function describeVideo(file: MediaInput, zone: ZoneOffset): Promise<(ProbedVideo & { captured: Captured | null; derivatives: Derivative[] }) | null> {
  const tools = await findVideoTools()
  if (tools === null) return null
  return withDecodeSlot(async () => {
    const json = await probe(tools, file).catch(() => null)
    const probed = probedVideo(json)
    if (probed === null) return null
    const at = probed.duration === null ? 0 : Math.min(POSTER_AT_MS, probed.duration / 10)
    // At 0 again when there was no frame there: a length that overstates what is there, a seek that fails.
    const first = await posterFrame(tools, file, at).catch(() => Buffer.alloc(0))
    const poster = first.length > 0 || at === 0 ? first : await posterFrame(tools, file, 0).catch(() => Buffer.alloc(0))
    const derivatives = poster.length === 0 ? [] : await derive(poster, 'png', true).catch(() => [])
    return { ...probed, captured: containerCaptured(json, zone), derivatives }
  })
}
