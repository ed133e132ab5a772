// What every client makes of a photo the same way, in Node (node/media.ts, with sharp) and in a
// browser (the web app's worker, with createImageBitmap): the derivatives' sizes and the capture
// time read from EXIF (docs/client-library.md, "Derivatives and EXIF"). Browser-safe, no parser:
// the caller reads the tags (exifr) with the raw values these functions take.

/** Long side of the thumbnail, never upscaled. */
export const THUMBNAIL_SIZE = 512
/** Long side of the preview, never upscaled; an original no longer than this (in a format browsers show) gets none. */
export const PREVIEW_SIZE = 2048
/** The derivatives' media type and encoder quality (0-100). */
export const DERIVATIVE_TYPE = 'image/webp'
export const DERIVATIVE_QUALITY = 80

/** The EXIF tags a capture time is read from; GPS is never among them (it is opt-in). */
export const EXIF_TIME_TAGS = ['DateTimeOriginal', 'OffsetTimeOriginal', 'SubSecTimeOriginal', 'CreateDate', 'OffsetTimeDigitized', 'SubSecTimeDigitized']

const DATE_TIME = /^(\d{4}):(\d{2}):(\d{2}) (\d{2}):(\d{2}):(\d{2})/
const OFFSET = /^([+-])(\d{2}):(\d{2})$/

/**
 * An EXIF date and time ("YYYY:MM:DD HH:MM:SS", local to the camera) as ms since the epoch: at
 * its EXIF offset ("+02:00") when there is one, else as if it were UTC — the camera's zone is
 * unknown, and UTC keeps the wall-clock time a person saw wherever the library is read.
 * Fractional seconds from its SubSecTime tag. Null when absent or not a real date and time.
 */
export function exifTime(dateTime: unknown, offset: unknown, subSeconds: unknown): number | null {
  const match = typeof dateTime === 'string' ? DATE_TIME.exec(dateTime) : null
  if (match === null) return null
  const [year, month, day, hours, minutes, seconds] = match.slice(1).map(Number) as [number, number, number, number, number, number]
  const wallClock = Date.UTC(year, month - 1, day, hours, minutes, seconds)
  const check = new Date(wallClock)
  // Date.UTC rolls 2021:02:30 over into March; a real date reads back the same.
  if (
    year < 1 ||
    check.getUTCFullYear() !== year ||
    check.getUTCMonth() !== month - 1 ||
    check.getUTCDate() !== day ||
    check.getUTCHours() !== hours ||
    check.getUTCMinutes() !== minutes ||
    check.getUTCSeconds() !== seconds
  )
    return null
  const zone = typeof offset === 'string' ? OFFSET.exec(offset.trim()) : null
  const offsetMs = zone === null ? 0 : (zone[1] === '-' ? -1 : 1) * (Number(zone[2]) * 60 + Number(zone[3])) * 60_000
  const fraction = typeof subSeconds === 'string' || typeof subSeconds === 'number' ? /^\d+/.exec(String(subSeconds).trim()) : null
  const milliseconds = fraction === null ? 0 : Math.floor(Number(`0.${fraction[0]}`) * 1000)
  return wallClock - offsetMs + milliseconds
}

/** The capture time of a photo from its EXIF tags (EXIF_TIME_TAGS, raw values), or null. */
export function exifCaptured(tags: Record<string, unknown>): number | null {
  return (
    exifTime(tags.DateTimeOriginal, tags.OffsetTimeOriginal, tags.SubSecTimeOriginal) ??
    exifTime(tags.CreateDate, tags.OffsetTimeDigitized, tags.SubSecTimeDigitized)
  )
}
