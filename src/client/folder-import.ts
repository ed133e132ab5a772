// What `coffer-photos import folder` lays over what a file says of itself (decision 0071, "The
// folder import"): an XMP sidecar's date taken, place and caption (xmp.ts reads it), and the
// favourite mark Apple's privacy export of iCloud Photos lists in its `Photo Details.csv`. Names
// and text only, pure and browser-safe: the caller lists the folder and reads the files, so the
// web app can use it too.
//
// The ranks, as the tools that read these exports order them (read, never copied):
// - An XMP sidecar's date **wins over the file's own**: sidecars are where people correct dates
//   (Lightroom's and darktable's capture-time edits, Apple Photos' "Export IPTC as XMP", which
//   writes the date Photos shows, adjustments included, beside the unmodified original). Immich
//   merges a sidecar's tags over the file's, PhotoPrism takes a field from the sidecar alone when
//   the sidecar has it, immich-go takes the sidecar's date first. Except where the sidecar says
//   what the file says already, to its own precision: the file's own date is then kept, more
//   precise (seconds, its offset) and written as metadata readers before version 5 open. So a
//   date without a time (precision `day`) keeps the file's own time when that falls on that day.
// - The sidecar's place wins over the file's EXIF position (a place set by hand), when places are kept.
// - Apple's `Photo Details.csv` (no documentation from Apple; its header and rows as immich-go's
//   `from-icloud` test data, PhotoMigrator and others show them: imgName, fileChecksum, favorite,
//   hidden, deleted, originalCreationDate, viewCount, importDate) is read for `favorite` alone.
import { descriptionOf } from './format/metadata.ts'
import type { MediaFacts } from './files.ts'
import { fileNameDate } from './taken.ts'
import type { XmpDatePrecision, XmpFacts } from './xmp.ts'
import { ProblemError } from './problem-error.ts'

// ---------------------------------------------------------------------------------------------
// An XMP sidecar over the file

const PRECISION_MS: Readonly<Record<XmpDatePrecision, number>> = { day: 86_400_000, minute: 60_000, second: 1000 }

/** A wall clock (ms, as if UTC) cut to a precision: the day, the minute or the second it falls in (before 1970 too). */
const cut = (wallClock: number, precision: XmpDatePrecision): number => Math.floor(wallClock / PRECISION_MS[precision]) * PRECISION_MS[precision]

/**
 * The file's own date as its wall clock and offset: the date its describer read (EXIF, GPS, a
 * video's container), else the one its name holds (taken.ts fileNameDate: floating), else null.
 */
function ownDate(file: MediaFacts, name: string, now: number): { readonly wallClock: number; readonly offset: number | null } | null {
  if (file.captured !== null) {
    const offset = file.capturedSource === undefined || file.capturedSource === null ? null : (file.capturedOffset ?? null)
    return { wallClock: file.captured + (offset ?? 0) * 60_000, offset }
  }
  const named = fileNameDate(name, now)
  return named === null ? null : { wallClock: named, offset: null }
}

/**
 * Whether a sidecar's date says what the file's own says: the same wall clock to the sidecar's
 * precision (the same day for a date alone), and no offset of the sidecar's that the file's
 * differs from (a sidecar that adds the offset to the same wall clock says more).
 */
export function sidecarDateAgrees(file: MediaFacts, sidecar: Pick<XmpFacts, 'takenAt' | 'offset' | 'precision'>, name: string, now = Date.now()): boolean {
  if (sidecar.takenAt === null || sidecar.precision === null) return false
  const own = ownDate(file, name, now)
  if (own === null) return false
  const wallClock = sidecar.takenAt + (sidecar.offset ?? 0) * 60_000
  return cut(own.wallClock, sidecar.precision) === cut(wallClock, sidecar.precision) && (sidecar.offset === null || sidecar.offset === own.offset)
}

export interface FolderFacts {
  /** What the photo's XMP sidecar says (xmp.ts parseXmpSidecar), or null: none, or not readable. */
  readonly sidecar: XmpFacts | null
  /** Apple's Photo Details lists it as a favourite. */
  readonly favourite?: boolean
}

export interface FolderFactOptions {
  /** Keep where the photo was taken: the sidecar's place, else the file's EXIF position (which `file` holds only when asked for). */
  readonly location: boolean
  /** The photo's path in the folder ("/" between names): its name may hold its date (taken.ts fileNameDate). */
  readonly name: string
  /** The current time, which bounds a year in a name (taken.ts); Date.now() unless given. */
  readonly now?: number
}

/**
 * What the metadata of a photo takes from its sidecar and Apple's details, over what its file
 * says (`file`: node/media.ts or the web app's worker): the sidecar's date taken (source `xmp`,
 * metadata version 5, at the date's own offset, floating when it states none) unless the file's
 * own date agrees with it (sidecarDateAgrees: then the file's is kept, or its name's, which the
 * reader takes when `captured` is null); the sidecar's place when places are kept (else none);
 * its caption (descriptionOf); the favourite mark. An XMP rating is not a favourite: Immich and
 * Lightroom keep the two apart, and Apple Photos writes no rating.
 */
export function folderFacts(file: MediaFacts, facts: FolderFacts, options: FolderFactOptions): MediaFacts {
  const { sidecar } = facts
  const favourite = facts.favourite === true ? { favourite: true } : {}
  if (sidecar === null) return { ...file, ...favourite }
  const dated = sidecar.takenAt !== null && !sidecarDateAgrees(file, sidecar, options.name, options.now)
  const description = sidecar.description === null ? null : descriptionOf(sidecar.description)
  return {
    ...file,
    ...(dated ? { captured: sidecar.takenAt, capturedSource: 'xmp' as const, capturedOffset: sidecar.offset } : {}),
    location: options.location ? (sidecar.location ?? file.location ?? null) : null,
    ...(description === null ? {} : { description }),
    ...favourite,
  }
}

// ---------------------------------------------------------------------------------------------
// Apple's Photo Details.csv

/**
 * The names Apple gives the details of a folder of its export: `Photo Details.csv`, then
 * `Photo Details-1.csv`, `-2`... when one is not enough (as PhotoMigrator and others report them).
 */
export const isPhotoDetailsName = (name: string): boolean => /^Photo Details(?:-\d{1,4})?\.csv$/i.test(name.normalize('NFC'))

/** A details file longer than this (UTF-16 code units; bytes, as read) is refused: a row is about 120 bytes, a folder of 100,000 photos some 12 MB. */
export const PHOTO_DETAILS_MAX_LENGTH = 32 * 1024 * 1024

export type PhotoDetailsProblem = 'too-large' | 'malformed' | 'not-photo-details'

/** A details file that is not read, and why: the one error parsePhotoDetails throws. */
export class PhotoDetailsError extends ProblemError<PhotoDetailsProblem> {}

/** One photo's row: its file's name (NFC) and whether it is a favourite (`yes`, `no`; null for anything else). */
export interface PhotoDetailsRow {
  readonly name: string
  readonly favourite: boolean | null
}

export interface PhotoDetails {
  readonly rows: readonly PhotoDetailsRow[]
  /** Rows left out: a count of fields other than the header's, or no name. */
  readonly skipped: number
}

/**
 * The records of a CSV (RFC 4180: commas, fields in double quotes with "" for a quote and line
 * breaks inside, CRLF or LF between records), blank lines left out. One pass, no backtracking.
 */
function csvRecords(text: string): string[][] {
  const records: string[][] = []
  let record: string[] = []
  let field = ''
  let quoted = false
  let i = 0
  const endRecord = () => {
    record.push(field)
    if (record.length > 1 || record[0] !== '') records.push(record)
    record = []
    field = ''
  }
  while (i < text.length) {
    const char = text[i]!
    if (quoted) {
      if (char === '"') {
        if (text[i + 1] === '"') {
          field += '"'
          i += 2
          continue
        }
        quoted = false
      } else field += char
      i++
      continue
    }
    if (char === '"' && field === '') quoted = true
    else if (char === ',') {
      record.push(field)
      field = ''
    } else if (char === '\r' || char === '\n') {
      endRecord()
      if (char === '\r' && text[i + 1] === '\n') i++
    } else field += char
    i++
  }
  if (quoted) throw new PhotoDetailsError('malformed', 'Photo Details: a quoted field does not end')
  if (field !== '' || record.length > 0) endRecord()
  return records
}

/**
 * A `Photo Details.csv` of Apple's export: each row's name (`imgName`) and favourite mark
 * (`favorite`, `yes` or `no`). Refused with PhotoDetailsError, and nothing else, when longer than
 * PHOTO_DETAILS_MAX_LENGTH (`too-large`), not a CSV (`malformed`: a quote not closed), or without
 * those two columns in its header (`not-photo-details`). A row of another length than the header
 * is skipped and counted, not the file refused: one odd row does not lose the others.
 */
export function parsePhotoDetails(input: string): PhotoDetails {
  if (input.length > PHOTO_DETAILS_MAX_LENGTH) throw new PhotoDetailsError('too-large', `Photo Details: longer than ${PHOTO_DETAILS_MAX_LENGTH} characters`)
  const [header, ...records] = csvRecords(input.startsWith('\uFEFF') ? input.slice(1) : input)
  const columns = (header ?? []).map((column) => column.trim())
  const nameAt = columns.indexOf('imgName')
  const favouriteAt = columns.indexOf('favorite')
  if (nameAt < 0 || favouriteAt < 0) throw new PhotoDetailsError('not-photo-details', 'Photo Details: no imgName and favorite columns')
  const rows: PhotoDetailsRow[] = []
  let skipped = 0
  for (const record of records) {
    const name = record[nameAt]?.trim().normalize('NFC') ?? ''
    if (record.length !== columns.length || name === '') {
      skipped++
      continue
    }
    const mark = record[favouriteAt]!.trim().toLowerCase()
    rows.push({ name, favourite: mark === 'yes' ? true : mark === 'no' ? false : null })
  }
  return { rows, skipped }
}

/**
 * The names of a folder's favourites over all its details files: a name some row marks `yes` and
 * none `no` (the same name twice with both marks is two photos that cannot be told apart: neither
 * is marked).
 */
export function favouritesOf(details: Iterable<PhotoDetails>): Set<string> {
  const yes = new Set<string>()
  const no = new Set<string>()
  for (const { rows } of details) for (const row of rows) if (row.favourite !== null) (row.favourite ? yes : no).add(row.name)
  for (const name of no) yes.delete(name)
  return yes
}
