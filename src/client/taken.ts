// The date a photo was taken (docs/client-format.md, "Date taken"; decision 0054): the first of
// these that the photo has, in this order:
//
//   exif-original   EXIF DateTimeOriginal at OffsetTimeOriginal, with SubSecTimeOriginal
//   exif-digitized  EXIF CreateDate (DateTimeDigitized) at OffsetTimeDigitized, with SubSecTimeDigitized
//   exif-modified   EXIF ModifyDate (IFD0 DateTime) at OffsetTime, with SubSecTime
//   gps             GPSDateStamp and GPSTimeStamp (UTC; shown at an EXIF offset tag when the file has one)
//   file-name       a date in the file's name (IMG_20190704_123456.jpg, 2019-07-04 12.34.56.jpg, ...)
//   file-modified   the file's modification time recorded at backup
//   uploaded        when the asset was uploaded (its manifest's signed timestamp)
//
// A date from outside the file's EXIF (metadata version 5: `takeout`, `xmp`, `container`; decision
// 0071) is recorded at backup or import in place of the first four, with its offset, and read as they are.
//
// The first four need the file: a backup reads them (capturedFromTags) and records the first as
// the metadata's `captured`, `captured_source` and `captured_offset`. The last three are computed
// here whenever the date is read, from the metadata's name and modified and the manifest, so that
// photos stored before version 3 get a date without being uploaded again.
//
// A date taken is shown and grouped by the wall clock where the photo was taken (`local`), as the
// camera showed it: a time stated with an offset at that offset, a time stated without one (a
// floating wall clock) as it reads, and the two sources that are moments with no place of their
// own (file-modified, uploaded) in the viewer's zone. Pure and browser-safe: the caller reads the
// tags (exifr, raw values) and passes `now` and the viewer's zone where they matter.
import type { AssetMetadata, CapturedSource } from './format/metadata.ts'

/**
 * Every source of a date taken, in the order they are tried. `exif` is a `captured` of metadata
 * version 1 or 2, which recorded no source: EXIF DateTimeOriginal, else CreateDate.
 */
export type TakenSource = CapturedSource | 'exif' | 'file-name' | 'file-modified' | 'uploaded'

export interface Taken {
  /**
   * Milliseconds since the Unix epoch (UTC): the moment. For a floating time (`offset` null), the
   * wall clock read as if it were UTC, since its zone is unknown.
   */
  readonly at: number
  readonly source: TakenSource
  /**
   * Minutes east of UTC of the wall clock where it was taken, so that `local` = `at` + `offset`:
   * the photo's own for the four file sources (its EXIF offset tag; the GPS clock's is 0 unless
   * an EXIF offset tag names the camera's zone), the viewer's zone at `at` for `file-modified` and
   * `uploaded` (moments with no place of their own: see viewerZoned). Null for a floating time,
   * a wall clock without a zone: EXIF without its offset tag, a file name, and the `exif` of
   * metadata versions 1 and 2, which did not record whether an offset was applied.
   */
  readonly offset: number | null
  /**
   * The wall clock to show and to group by (day, month, year): milliseconds of that wall-clock
   * time as if it were UTC, so formatted in UTC (takenMonthPath, takenIso, the web app's wallClockText).
   */
  readonly local: number
}

/** The sources whose offset is the viewer's zone, not the photo's: times with no place of their own. */
export const viewerZoned = (source: TakenSource): boolean => source === 'file-modified' || source === 'uploaded'

/** A viewer's time zone: its offset in minutes east of UTC at a moment (ms since the epoch). */
export type ZoneOffset = (at: number) => number

/** The zone of the machine this runs on (the process's TZ in Node, the browser's in a browser). */
export const localZone: ZoneOffset = (at) => -new Date(at).getTimezoneOffset() || 0

/**
 * An IANA time zone ("America/Los_Angeles", "UTC"; a leading ":" as in TZ is dropped) as a
 * ZoneOffset, read through Intl; null when Intl does not know it. Offsets with seconds (local
 * mean time before 1900) are rounded to the minute.
 */
export function zoneOffset(timeZone: string): ZoneOffset | null {
  let format: Intl.DateTimeFormat
  try {
    format = new Intl.DateTimeFormat('en-US', { timeZone: timeZone.replace(/^:/, ''), timeZoneName: 'longOffset' })
  } catch {
    return null
  }
  return (at) => {
    const name = format.formatToParts(at).find((part) => part.type === 'timeZoneName')?.value ?? 'GMT'
    const parts = /^GMT([+-])(\d{1,2})(?::(\d{2}))?(?::(\d{2}))?$/.exec(name)
    if (parts === null) return 0 // "GMT": UTC itself
    const minutes = Number(parts[2]) * 60 + Number(parts[3] ?? 0) + Number(parts[4] ?? 0) / 60
    return (parts[1] === '-' ? -1 : 1) * Math.round(minutes) || 0
  }
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

/** The widest offset a time may be stated at, in minutes either side of UTC (±18 hours, as ISO 8601 and java.time allow; real zones span -12:00 to +14:00). */
export const MAX_OFFSET_MINUTES = 1080

/** An EXIF offset tag ("+02:00", "-05:30") in minutes east of UTC; null when absent or not one (minutes over 59, beyond ±18:00). */
export function exifOffset(offset: unknown): number | null {
  const zone = typeof offset === 'string' ? OFFSET.exec(offset.trim()) : null
  if (zone === null || Number(zone[3]) > 59) return null
  const minutes = Number(zone[2]) * 60 + Number(zone[3])
  return minutes > MAX_OFFSET_MINUTES ? null : (zone[1] === '-' ? -minutes : minutes) || 0
}

/** Date.UTC of these fields when they name a real date and time (Date.UTC rolls 30 February into March: a real one reads back the same), else null. */
export function realUtc(year: number, month: number, day: number, hours = 0, minutes = 0, seconds = 0): number | null {
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
 * its EXIF offset ("+02:00") when there is one (exifOffset), else as if it were UTC — the
 * camera's zone is unknown, and UTC keeps the wall-clock time a person saw wherever the library
 * is read. Fractional seconds from its SubSecTime tag. Null when absent or not a real date and time.
 */
export function exifTime(dateTime: unknown, offset: unknown, subSeconds: unknown): number | null {
  const match = typeof dateTime === 'string' ? DATE_TIME.exec(dateTime) : null
  if (match === null) return null
  const wallClock = realUtc(...(match.slice(1).map(Number) as [number, number, number, number, number, number]))
  if (wallClock === null) return null
  const fraction = typeof subSeconds === 'string' || typeof subSeconds === 'number' ? /^\d+/.exec(String(subSeconds).trim()) : null
  const milliseconds = fraction === null ? 0 : Math.floor(Number(`0.${fraction[0]}`) * 1000)
  return wallClock - (exifOffset(offset) ?? 0) * 60_000 + milliseconds
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

/** A capture time read from the file (the metadata's captured, captured_source and captured_offset). */
export interface Captured {
  /** ms since the epoch; a floating time's wall clock as if UTC. */
  readonly at: number
  readonly source: CapturedSource
  /** Minutes east of UTC of the wall clock where it was taken; null for a floating time. */
  readonly offset: number | null
}

/**
 * The date read from the file's own tags (EXIF, then GPS), which one, and the offset of the wall
 * clock where it was taken: an EXIF date's own offset tag (null without one: floating); for the
 * GPS clock, which is UTC, the first EXIF offset tag the file has (OffsetTimeOriginal, then
 * OffsetTimeDigitized, OffsetTime: the camera's zone when its dates are missing or broken), else
 * 0. Null when no tag holds a real date.
 */
export function capturedFromTags(tags: Readonly<Record<string, unknown>>): Captured | null {
  const found: [CapturedSource, number | null, number | null][] = [
    ['exif-original', exifTime(tags.DateTimeOriginal, tags.OffsetTimeOriginal, tags.SubSecTimeOriginal), exifOffset(tags.OffsetTimeOriginal)],
    ['exif-digitized', exifTime(tags.CreateDate, tags.OffsetTimeDigitized, tags.SubSecTimeDigitized), exifOffset(tags.OffsetTimeDigitized)],
    ['exif-modified', exifTime(tags.ModifyDate, tags.OffsetTime, tags.SubSecTime), exifOffset(tags.OffsetTime)],
    [
      'gps',
      gpsTime(tags.GPSDateStamp, tags.GPSTimeStamp),
      exifOffset(tags.OffsetTimeOriginal) ?? exifOffset(tags.OffsetTimeDigitized) ?? exifOffset(tags.OffsetTime) ?? 0,
    ],
  ]
  for (const [source, at, offset] of found) if (at !== null) return { at, source, offset }
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
   * Otherwise what the metadata recorded of them: `captured`, `capturedSource` and
   * `capturedOffset` (version 3: the source null exactly when captured is, the offset null too
   * for a floating time; both undefined for versions 1 and 2, whose captured is then `exif`, floating).
   */
  readonly captured?: number | null
  readonly capturedSource?: CapturedSource | null
  readonly capturedOffset?: number | null
  /** The file's name (a path: its last segment is read). */
  readonly name: string
  /** Its modification time recorded at backup, or null. */
  readonly modified: number | null
  /** When it was uploaded: ms since the epoch. */
  readonly uploaded: number
}

/** How a date taken is read. */
export interface TakenOptions {
  /** Bounds the years a file name may give: the current time unless given. */
  readonly now?: number
  /** The viewer's zone, which `file-modified` and `uploaded` are shown in: this machine's (localZone) unless given. */
  readonly zone?: ZoneOffset
}

/** A Taken of a moment at an offset (null: floating, `at` is already the wall clock). */
const takenAt = (instant: number, source: TakenSource, offset: number | null): Taken => ({
  at: instant,
  source,
  offset,
  local: offset === null ? instant : instant + offset * 60_000,
})

/**
 * The date a photo was taken, where it came from, and the wall clock to show it at: the first
 * source, in the order at the top of this file, that gives one. Always a date: the upload time
 * is the last resort.
 */
export function dateTaken(facts: TakenFacts, options: TakenOptions = {}): Taken {
  const zone = options.zone ?? localZone
  if (facts.tags !== undefined && facts.tags !== null) {
    const captured = capturedFromTags(facts.tags)
    if (captured !== null) return takenAt(captured.at, captured.source, captured.offset)
  } else if (facts.captured !== undefined && facts.captured !== null) {
    return takenAt(facts.captured, facts.capturedSource ?? 'exif', facts.capturedSource === undefined ? null : (facts.capturedOffset ?? null))
  }
  const named = fileNameDate(facts.name, options.now ?? Date.now())
  if (named !== null) return takenAt(named, 'file-name', null)
  if (facts.modified !== null) return takenAt(facts.modified, 'file-modified', zone(facts.modified))
  return takenAt(facts.uploaded, 'uploaded', zone(facts.uploaded))
}

/**
 * The date taken of a stored asset: from its metadata (any version) and its upload time (the
 * manifest's timestamp, RFC 3339, or ms since the epoch).
 */
export function metadataTaken(
  metadata: Pick<AssetMetadata, 'name' | 'modified' | 'captured' | 'capturedSource' | 'capturedOffset'>,
  uploaded: string | number,
  options: TakenOptions = {},
): Taken {
  const uploadedAt = typeof uploaded === 'number' ? uploaded : Date.parse(uploaded)
  return dateTaken(
    {
      captured: metadata.captured,
      ...(metadata.capturedSource === undefined ? {} : { capturedSource: metadata.capturedSource }),
      ...(metadata.capturedOffset === undefined ? {} : { capturedOffset: metadata.capturedOffset }),
      name: metadata.name,
      modified: metadata.modified,
      uploaded: Number.isFinite(uploadedAt) ? uploadedAt : 0,
    },
    options,
  )
}

const two = (n: number): string => String(n).padStart(2, '0')

/** A year as ISO 8601 writes it: four digits, or six with a sign outside 0000 to 9999. */
const isoYear = (year: number): string =>
  year >= 0 && year <= 9999 ? String(year).padStart(4, '0') : `${year < 0 ? '-' : '+'}${String(Math.abs(year)).padStart(6, '0')}`

/** An offset in minutes as ISO 8601 writes it: "Z" for 0, else "+02:00", "-07:00". */
export function isoOffset(minutes: number): string {
  if (minutes === 0) return 'Z'
  const magnitude = Math.abs(minutes)
  return `${minutes < 0 ? '-' : '+'}${two(Math.floor(magnitude / 60))}:${two(magnitude % 60)}`
}

/**
 * A date taken as ISO 8601 at the wall clock where it was taken: with its offset when it has
 * one ("2019-07-31T23:30:00-07:00", "2016-01-01T10:20:30.750Z"), without a zone when it is
 * floating ("2019-07-04T12:34:56", a local date and time). Milliseconds only when not zero.
 * Both are valid in an HTML time element's datetime.
 */
export function takenIso(taken: Pick<Taken, 'local' | 'offset'>): string {
  const date = new Date(taken.local)
  const time = `${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())}`
  const milliseconds = date.getUTCMilliseconds() === 0 ? '' : `.${String(date.getUTCMilliseconds()).padStart(3, '0')}`
  const day = `${isoYear(date.getUTCFullYear())}-${two(date.getUTCMonth() + 1)}-${two(date.getUTCDate())}`
  return `${day}T${time}${milliseconds}${taken.offset === null ? '' : isoOffset(taken.offset)}`
}

/** The month of a date taken's wall clock (Taken.local, read in UTC) as "YYYY/MM": the folder `restore --layout date` writes a file into. */
export const takenMonthPath = (local: number): string => {
  const date = new Date(local)
  return `${String(date.getUTCFullYear()).padStart(4, '0')}/${two(date.getUTCMonth() + 1)}`
}

// Month and year of a wall clock (Taken.local), which reads in UTC: "Jul 2019".
const SHORT_MONTH = new Intl.DateTimeFormat('en-GB', { month: 'short', year: 'numeric', timeZone: 'UTC' })

/** The months a set of photos was taken over, from the oldest wall clock to the newest (Taken.local): "Jul 2019 – Aug 2021", one month when both are in it. */
export function takenMonthRange(oldest: number, newest: number): string {
  const [from, to] = [SHORT_MONTH.format(oldest), SHORT_MONTH.format(newest)]
  return from === to ? from : `${from} – ${to}`
}
