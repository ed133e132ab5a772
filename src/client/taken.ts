// The date a photo was taken (docs/client-format.md, "Date taken"; decision 0054): the first of
// these that the photo has, in this order:
//
//   exif-original   EXIF DateTimeOriginal at OffsetTimeOriginal, with SubSecTimeOriginal
//   exif-digitized  EXIF CreateDate (DateTimeDigitized) at OffsetTimeDigitized, with SubSecTimeDigitized
//   exif-modified   EXIF ModifyDate (IFD0 DateTime) at OffsetTime, with SubSecTime
//   gps             GPSDateStamp and GPSTimeStamp (UTC)
//   file-name       a date in the file's name (IMG_20190704_123456.jpg, 2019-07-04 12.34.56.jpg, ...)
//   file-modified   the file's modification time recorded at backup
//   uploaded        when the asset was uploaded (its manifest's signed timestamp)
//
// The first four need the file: a backup reads them (capturedFromTags) and records the first as
// the metadata's `captured` and `captured_source`. The last three are computed here whenever the
// date is read, from the metadata's name and modified and the manifest, so that photos stored
// before version 3 get a date without being uploaded again. Pure and browser-safe: the caller
// reads the tags (exifr, raw values) and passes `now` where it matters.
import type { AssetMetadata, CapturedSource } from './format/metadata.ts'

/**
 * Every source of a date taken, in the order they are tried. `exif` is a `captured` of metadata
 * version 1 or 2, which recorded no source: EXIF DateTimeOriginal, else CreateDate.
 */
export type TakenSource = CapturedSource | 'exif' | 'file-name' | 'file-modified' | 'uploaded'

export interface Taken {
  /** Milliseconds since the Unix epoch (UTC). */
  readonly at: number
  readonly source: TakenSource
}

/**
 * The EXIF and GPS tags the date is read from, as exifr names them: given as a `pick`, they are
 * all exifr reads. The GPS IFD is read for its date and time only: its position tags are not
 * among these, so a location is never parsed unless asked for as well (node/media.ts).
 */
export const TAKEN_TAGS = [
  'DateTimeOriginal',
  'OffsetTimeOriginal',
  'SubSecTimeOriginal',
  'CreateDate',
  'OffsetTimeDigitized',
  'SubSecTimeDigitized',
  'ModifyDate',
  'OffsetTime',
  'SubSecTime',
  'GPSDateStamp',
  'GPSTimeStamp',
]

const DATE_TIME = /^(\d{4}):(\d{2}):(\d{2}) (\d{2}):(\d{2}):(\d{2})/
const OFFSET = /^([+-])(\d{2}):(\d{2})$/

/** Date.UTC of these fields when they name a real date and time (Date.UTC rolls 30 February into March: a real one reads back the same), else null. */
function realUtc(year: number, month: number, day: number, hours = 0, minutes = 0, seconds = 0): number | null {
  const at = Date.UTC(year, month - 1, day, hours, minutes, seconds)
  const check = new Date(at)
  const real =
    year >= 1 &&
    check.getUTCFullYear() === year &&
    check.getUTCMonth() === month - 1 &&
    check.getUTCDate() === day &&
    check.getUTCHours() === hours &&
    check.getUTCMinutes() === minutes &&
    check.getUTCSeconds() === seconds
  return real ? at : null
}

/**
 * An EXIF date and time ("YYYY:MM:DD HH:MM:SS", local to the camera) as ms since the epoch: at
 * its EXIF offset ("+02:00") when there is one, else as if it were UTC — the camera's zone is
 * unknown, and UTC keeps the wall-clock time a person saw wherever the library is read.
 * Fractional seconds from its SubSecTime tag. Null when absent or not a real date and time.
 */
export function exifTime(dateTime: unknown, offset: unknown, subSeconds: unknown): number | null {
  const match = typeof dateTime === 'string' ? DATE_TIME.exec(dateTime) : null
  if (match === null) return null
  const wallClock = realUtc(...(match.slice(1).map(Number) as [number, number, number, number, number, number]))
  if (wallClock === null) return null
  const zone = typeof offset === 'string' ? OFFSET.exec(offset.trim()) : null
  const offsetMs = zone === null ? 0 : (zone[1] === '-' ? -1 : 1) * (Number(zone[2]) * 60 + Number(zone[3])) * 60_000
  const fraction = typeof subSeconds === 'string' || typeof subSeconds === 'number' ? /^\d+/.exec(String(subSeconds).trim()) : null
  const milliseconds = fraction === null ? 0 : Math.floor(Number(`0.${fraction[0]}`) * 1000)
  return wallClock - offsetMs + milliseconds
}

const GPS_DATE = /^(\d{4})[:-](\d{2})[:-](\d{2})$/

/**
 * GPSDateStamp ("YYYY:MM:DD") and GPSTimeStamp (hours, minutes and seconds: three numbers, the
 * seconds possibly fractional, as exifr reads the rationals raw) as ms since the epoch: the GPS
 * clock is UTC. Null unless both are there and name a real date and time.
 */
export function gpsTime(dateStamp: unknown, timeStamp: unknown): number | null {
  const date = typeof dateStamp === 'string' ? GPS_DATE.exec(dateStamp.trim()) : null
  const parts = Array.isArray(timeStamp)
    ? timeStamp
    : typeof timeStamp === 'string' && /^\d{1,2}:\d{1,2}:\d{1,2}(\.\d+)?$/.test(timeStamp.trim())
      ? timeStamp.trim().split(':').map(Number)
      : null
  if (date === null || parts === null || parts.length !== 3 || !parts.every((n) => typeof n === 'number' && Number.isFinite(n) && n >= 0)) return null
  const [hours, minutes, seconds] = parts as [number, number, number]
  if (!Number.isInteger(hours) || !Number.isInteger(minutes)) return null
  const day = realUtc(Number(date[1]), Number(date[2]), Number(date[3]), hours, minutes, Math.floor(seconds))
  return day === null ? null : day + Math.floor((seconds % 1) * 1000)
}

/** The date read from the file's own tags (EXIF, then GPS), and which one; null when none holds a real date. */
export function capturedFromTags(tags: Readonly<Record<string, unknown>>): { readonly at: number; readonly source: CapturedSource } | null {
  const found: [CapturedSource, number | null][] = [
    ['exif-original', exifTime(tags.DateTimeOriginal, tags.OffsetTimeOriginal, tags.SubSecTimeOriginal)],
    ['exif-digitized', exifTime(tags.CreateDate, tags.OffsetTimeDigitized, tags.SubSecTimeDigitized)],
    ['exif-modified', exifTime(tags.ModifyDate, tags.OffsetTime, tags.SubSecTime)],
    ['gps', gpsTime(tags.GPSDateStamp, tags.GPSTimeStamp)],
  ]
  for (const [source, at] of found) if (at !== null) return { at, source }
  return null
}

/**
 * A date, with a time when one follows, in a file name: YYYYMMDD, YYYY-MM-DD, YYYY_MM_DD or
 * YYYY.MM.DD (not more digits on either side), then optionally a separator ("_", "-", " ", "T"
 * or " at ") and HHMMSS, HH.MM.SS, HH-MM-SS, HH_MM_SS or HH:MM:SS, then optionally milliseconds.
 */
const NAME_DATE = /(?<!\d)(\d{4})([-_.]?)(\d{2})\2(\d{2})(?:(?:[T_ -]| at )(\d{2})([.:_-]?)(\d{2})\6(\d{2})(?:[.,]?\d{1,3})?)?(?!\d)/g

/**
 * The date in a file's name (its last path segment), read as UTC like an EXIF time without an
 * offset: IMG_20190704_123456.jpg, 20190704_123456.jpg, PXL_20190704_123456789.jpg,
 * 2019-07-04 12.34.56.jpg, 2019-07-04.jpg, Screenshot_2019-07-04-12-34-56.png,
 * "Screenshot 2019-07-04 at 12.34.56.png", IMG-20190704-WA0001.jpg (WhatsApp: the date only,
 * at midnight). The first real date in the name wins; a date that does not exist, or a year
 * outside 1900 to next year (by `now`), is not one. A time that does not exist is left out (the
 * date alone, at midnight). Null when the name holds none.
 */
export function fileNameDate(name: string, now: number = Date.now()): number | null {
  const base = name.slice(name.lastIndexOf('/') + 1)
  const lastYear = new Date(now).getUTCFullYear() + 1
  const pattern = new RegExp(NAME_DATE)
  for (let match = pattern.exec(base); match !== null; match = pattern.exec(base)) {
    const [year, month, day] = [Number(match[1]), Number(match[3]), Number(match[4])]
    const date = year < 1900 || year > lastYear ? null : realUtc(year, month, day)
    if (date === null) {
      pattern.lastIndex = match.index + 1 // what it took for a time may hold the real date
      continue
    }
    const time = match[5] === undefined ? null : realUtc(year, month, day, Number(match[5]), Number(match[7]), Number(match[8]))
    return time ?? date
  }
  return null
}

/** What the date taken is read from. */
export interface TakenFacts {
  /** The file's EXIF and GPS tags (TAKEN_TAGS, raw as exifr reads them), when the file is at hand. */
  readonly tags?: Readonly<Record<string, unknown>> | null
  /**
   * Otherwise what the metadata recorded of them: `captured`, and `capturedSource` (version 3:
   * null exactly when captured is; undefined for versions 1 and 2, whose captured is then `exif`).
   */
  readonly captured?: number | null
  readonly capturedSource?: CapturedSource | null
  /** The file's name (a path: its last segment is read). */
  readonly name: string
  /** Its modification time recorded at backup, or null. */
  readonly modified: number | null
  /** When it was uploaded: ms since the epoch. */
  readonly uploaded: number
}

/**
 * The date a photo was taken and where it came from: the first source, in the order at the top
 * of this file, that gives one. Always a date: the upload time is the last resort. `now` bounds
 * the years a file name may give (the current time unless given).
 */
export function dateTaken(facts: TakenFacts, now: number = Date.now()): Taken {
  if (facts.tags !== undefined && facts.tags !== null) {
    const captured = capturedFromTags(facts.tags)
    if (captured !== null) return captured
  } else if (facts.captured !== undefined && facts.captured !== null) {
    return { at: facts.captured, source: facts.capturedSource ?? 'exif' }
  }
  const named = fileNameDate(facts.name, now)
  if (named !== null) return { at: named, source: 'file-name' }
  if (facts.modified !== null) return { at: facts.modified, source: 'file-modified' }
  return { at: facts.uploaded, source: 'uploaded' }
}

/**
 * The date taken of a stored asset: from its metadata (any version) and its upload time (the
 * manifest's timestamp, RFC 3339, or ms since the epoch).
 */
export function metadataTaken(
  metadata: Pick<AssetMetadata, 'name' | 'modified' | 'captured' | 'capturedSource'>,
  uploaded: string | number,
  now: number = Date.now(),
): Taken {
  const uploadedAt = typeof uploaded === 'number' ? uploaded : Date.parse(uploaded)
  return dateTaken(
    {
      captured: metadata.captured,
      ...(metadata.capturedSource === undefined ? {} : { capturedSource: metadata.capturedSource }),
      name: metadata.name,
      modified: metadata.modified,
      uploaded: Number.isFinite(uploadedAt) ? uploadedAt : 0,
    },
    now,
  )
}

const two = (n: number): string => String(n).padStart(2, '0')

/** The month of a date taken as "YYYY/MM" in UTC, the zone its times are read in: the folder `restore --layout date` writes a file into. */
export const takenMonthPath = (at: number): string => {
  const date = new Date(at)
  return `${String(date.getUTCFullYear()).padStart(4, '0')}/${two(date.getUTCMonth() + 1)}`
}
