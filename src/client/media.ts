// What every client makes of a photo the same way, in Node (node/media.ts, with sharp) and in a
// browser (the web app's worker, with createImageBitmap): the derivatives' sizes (docs/client-library.md,
// "Derivatives and EXIF"), and the camera facts read from EXIF. The capture time read from
// EXIF and GPS is taken.ts's.
import { isCameraCount, isCameraText, type CameraFacts } from './format/metadata.ts'

/** Long side of the thumbnail, never upscaled. */
export const THUMBNAIL_SIZE = 512
/** Long side of the preview, never upscaled; an original no longer than this (in a format browsers show) gets none. */
export const PREVIEW_SIZE = 2048
/** The thumbnail's media type: WebP, small, and it keeps transparency. */
export const THUMBNAIL_TYPE = 'image/webp'
/**
 * The preview's media type: JPEG for a JPEG original, which has no transparency to lose:
 * libjpeg-turbo encodes a 2048 px image in about a fifth of the time of WebP at its least effort,
 * and WebP's preview was most of a backup's cost per photo (decision 0064). WebP for the rest.
 */
export const previewType = (originalIsJpeg: boolean): string => (originalIsJpeg ? 'image/jpeg' : 'image/webp')
/** The derivatives' encoder quality (0-100). */
export const DERIVATIVE_QUALITY = 80

/**
 * The EXIF tags of the camera facts (the metadata's `camera`), as exifr names them: read with
 * taken.ts's TAKEN_TAGS by both describers (node/media.ts, the web app's worker), in one pick.
 */
export const CAMERA_TAGS = ['Make', 'Model', 'LensModel', 'ExposureTime', 'FNumber', 'ISO', 'FocalLength']

/** A make, model or lens as stored: trimmed, NULs (C strings' padding) removed; undefined when not text the metadata takes. */
function cameraText(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined
  const text = value.replace(/\0/g, '').trim()
  return isCameraText(text) ? text : undefined
}

/** A positive number as a whole count of `scale`ths (f/2.8 at 10: 28); undefined when none fits. */
function tenths(value: unknown, scale: number): number | undefined {
  const number = Array.isArray(value) ? value[0] : value
  if (typeof number !== 'number' || !Number.isFinite(number)) return undefined
  const count = Math.round(number * scale)
  return isCameraCount(count) ? count : undefined
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b))

/**
 * An exposure time in seconds (exifr gives EXIF's rational as a number) as the fraction a
 * camera states it: 1/250 for 0.004, 1/3 for 0.333…, else to 1/10,000 of a second (0.3 s:
 * 3/10, 2.5 s: 5/2, 30 s: 30/1). Undefined when not a positive time that fits.
 */
export function exposureFraction(seconds: unknown): readonly [number, number] | undefined {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0) return undefined
  if (seconds < 1) {
    const denominator = Math.round(1 / seconds)
    if (isCameraCount(denominator) && Math.abs(1 / denominator - seconds) <= seconds * 0.005) return [1, denominator]
  }
  const numerator = Math.round(seconds * 10_000)
  if (!isCameraCount(numerator)) return undefined
  const common = gcd(numerator, 10_000)
  return [numerator / common, 10_000 / common]
}

/** The camera facts in EXIF tags as exifr reads them (CAMERA_TAGS, raw values); null when none is there. */
export function cameraFromTags(tags: Readonly<Record<string, unknown>>): CameraFacts | null {
  const facts: { -readonly [K in keyof CameraFacts]: CameraFacts[K] } = {}
  const make = cameraText(tags.Make)
  const model = cameraText(tags.Model)
  const lens = cameraText(tags.LensModel)
  const exposureTime = exposureFraction(tags.ExposureTime)
  const fNumberTenths = tenths(tags.FNumber, 10)
  const iso = tenths(tags.ISO, 1)
  const focalLengthTenths = tenths(tags.FocalLength, 10)
  if (make !== undefined) facts.make = make
  if (model !== undefined) facts.model = model
  if (lens !== undefined) facts.lens = lens
  if (exposureTime !== undefined) facts.exposureTime = exposureTime
  if (fNumberTenths !== undefined) facts.fNumberTenths = fNumberTenths
  if (iso !== undefined) facts.iso = iso
  if (focalLengthTenths !== undefined) facts.focalLengthTenths = focalLengthTenths
  return Object.keys(facts).length === 0 ? null : facts
}

/** A video's length as a player shows it: m:ss, or h:mm:ss from an hour; at least 0:01 for a clip under a second. */
export function durationText(ms: number): string {
  const total = Math.max(1, Math.round(ms / 1000))
  const [hours, minutes, seconds] = [Math.floor(total / 3600), Math.floor(total / 60) % 60, total % 60]
  const ss = String(seconds).padStart(2, '0')
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${ss}` : `${minutes}:${ss}`
}
