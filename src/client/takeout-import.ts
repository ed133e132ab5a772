// A Google Takeout export as a plan of what to store where (decision 0071): the files of every
// archive (or of the folder it was unpacked to) matched with their sidecars (takeout.ts), the
// copies of one photo in its year folder and its albums grouped into one photo, each album
// named by its metadata file, and what a photo's sidecar says turned into the facts its
// metadata takes (the date taken and its offset, the place, the caption, the favourite mark).
// Pure and browser-safe: coffer-photos (src/cli/photos/import.ts) gives it zip entries or files
// on disk, the web app the entries of a zip the person picked; both back the plan up with the
// same engine as a folder's backup (sync.ts).
import { descriptionOf, type GeoLocation } from './format/metadata.ts'
import type { MediaFacts } from './files.ts'
import {
  albumOf,
  groupCopies,
  isYearFolder,
  matchSidecars,
  parseSidecar,
  TAKEOUT_JSON_MAX_LENGTH,
  TakeoutJsonError,
  type SidecarVia,
  type TakeoutSidecar,
  type TakeoutSkipped,
} from './takeout.ts'

/** A file of the export: a zip entry, or a file of an unpacked export; `open` streams its bytes and may be called again. */
export interface ExportFile {
  /** Its path in the export, "/" between names (a zip entry's name; a relative path on disk). */
  readonly path: string
  readonly size: number
  /** Modified, ms since the epoch, or null. */
  readonly modified: number | null
  /** What tells this file from another of the same path, size and time across runs (an archive entry's CRC-32): the local index's identity. */
  readonly identity: string
  open(): AsyncIterable<Uint8Array>
}

/** One photo or video of the export, however many folders hold a copy of it. */
export interface TakeoutPhoto {
  /** The copy that is read and stored (a year folder's when there is one): its path is the stored name's source. */
  readonly file: ExportFile
  /** Every copy's path, `file`'s first. */
  readonly copies: readonly string[]
  /** The sidecar of `file`, or of another copy when `file` has none; null when no copy has one. */
  readonly sidecar: ExportFile | null
  readonly via: SidecarVia | null
  /** Whether a copy is in a year folder (or another folder that is not an album): the photo belongs in the library's album. */
  readonly inLibrary: boolean
  /** The albums its copies are in, by name, in the order of the copies; no name twice. */
  readonly albums: readonly string[]
}

export interface TakeoutPlan {
  readonly photos: readonly TakeoutPhoto[]
  /** Every album some photo is in, in the order first met. */
  readonly albums: readonly string[]
  /** JSON files no photo claims (takeout.ts TakeoutListing.unmatched). */
  readonly unmatched: readonly string[]
  readonly skipped: readonly TakeoutSkipped[]
}

/** The album the photos of the export's year folders go to, unless the person names another. */
export const TAKEOUT_LIBRARY_ALBUM = 'Google Photos'

/** Why a photo of the export is not stored: its sidecar says it was in the trash. */
export const SKIPPED_TRASHED = "in Google Photos' trash"

/**
 * The name a photo is stored under: its folder in the export and its own name ("Photos from
 * 2019/IMG_0001.jpg"), the export's own folders left out; the same in coffer-photos and the web
 * app, so that either finds what the other stored.
 */
export const storedName = (photo: Pick<TakeoutPhoto, 'file'>): string => photo.file.path.split('/').slice(-2).join('/')

/** The bytes a sidecar or album metadata file is read to: 4 UTF-8 bytes a code unit of the JSON limit. */
const JSON_BYTES_MAX = 4 * TAKEOUT_JSON_MAX_LENGTH

/** A small file's text (UTF-8): read whole up to `max` bytes; null past it, so that the caller reports it unread. */
export async function readText(file: ExportFile, max = JSON_BYTES_MAX): Promise<string | null> {
  if (file.size > max) return null
  const parts: Uint8Array[] = []
  let length = 0
  for await (const part of file.open()) {
    length += part.length
    if (length > max) return null
    parts.push(part)
  }
  const whole = new Uint8Array(length)
  let at = 0
  for (const part of parts) {
    whole.set(part, at)
    at += part.length
  }
  return new TextDecoder().decode(whole)
}

const folderOf = (path: string): string => path.slice(0, Math.max(path.lastIndexOf('/'), 0))

/**
 * The plan of an export from the files of all its archives at once (a sidecar may be in another
 * archive than its photo): albums' metadata files are read here (one small file an album), the
 * photos' sidecars later, as each photo is stored (takeoutFacts).
 */
export async function planTakeout(files: Iterable<ExportFile>): Promise<TakeoutPlan> {
  const byPath = new Map<string, ExportFile>()
  const order: string[] = []
  for (const file of files) {
    order.push(file.path)
    if (!byPath.has(file.path)) byPath.set(file.path, file)
  }
  const listing = matchSidecars(order)
  const albumByFolder = new Map<string, string | null>()
  for (const { folder, path } of listing.albumMetadata) {
    const metadata = byPath.get(path)
    albumByFolder.set(folder, albumOf(folder, metadata === undefined ? null : await readText(metadata)))
  }
  const albumFor = (folder: string): string | null => {
    if (!albumByFolder.has(folder)) albumByFolder.set(folder, albumOf(folder))
    return albumByFolder.get(folder) ?? null
  }
  const matched = new Map(listing.media.map((media) => [media.path, media]))
  const photos: TakeoutPhoto[] = []
  const albums: string[] = []
  for (const group of groupCopies(listing.media.map((media) => ({ path: media.path, size: byPath.get(media.path)!.size })))) {
    // A year folder's copy first: it is the one every photo of the person's library has.
    const copies = [...group].sort((a, b) => Number(isYearFolder(folderOf(b))) - Number(isYearFolder(folderOf(a))))
    const first = copies[0]!
    const withSidecar = copies.map((path) => matched.get(path)!).find((media) => media.sidecar !== null)
    const names: string[] = []
    let inLibrary = false
    for (const path of copies) {
      const album = albumFor(folderOf(path))
      if (album === null) inLibrary = true
      else if (!names.includes(album)) names.push(album)
    }
    for (const name of names) if (!albums.includes(name)) albums.push(name)
    photos.push({
      file: byPath.get(first)!,
      copies,
      sidecar: withSidecar === undefined ? null : byPath.get(withSidecar.sidecar!)!,
      via: withSidecar?.via ?? null,
      inLibrary,
      albums: names,
    })
  }
  return { photos, albums, unmatched: listing.unmatched, skipped: listing.skipped }
}

/** A sidecar as read for a photo: what it says, or why it could not be read. */
export type SidecarReading = { readonly sidecar: TakeoutSidecar } | { readonly error: string }

/** A photo's sidecar read and parsed; null when it has none. */
export async function readSidecar(photo: Pick<TakeoutPhoto, 'sidecar'>): Promise<SidecarReading | null> {
  if (photo.sidecar === null) return null
  const text = await readText(photo.sidecar)
  if (text === null) return { error: `${photo.sidecar.path}: larger than a sidecar can be` }
  try {
    return { sidecar: parseSidecar(text) }
  } catch (error) {
    if (error instanceof TakeoutJsonError) return { error: `${photo.sidecar.path}: ${error.message}` }
    throw error
  }
}

/** Minutes east of UTC a wall clock may be from its moment: the zones of the world span -12:00 to +14:00. */
const ZONE_SPAN_MINUTES = 14 * 60

/**
 * The offset of the wall clock where a photo was taken, for the moment its sidecar gives
 * (`photoTakenTime` has no zone): the file's own EXIF offset when its date states one; else the
 * offset its EXIF wall clock implies (Google turned that wall clock into the moment at the zone
 * it knew: their difference, when it is a whole quarter hour within the world's zones); else the
 * importing device's zone at that moment (`zone`).
 */
export function takenOffset(takenMs: number, file: Pick<MediaFacts, 'captured' | 'capturedSource' | 'capturedOffset'>, zone: (at: number) => number): number {
  if (file.captured !== null && file.capturedSource !== undefined && file.capturedSource !== null && file.capturedSource !== 'gps') {
    if (file.capturedOffset !== undefined && file.capturedOffset !== null) return file.capturedOffset
    const minutes = (file.captured - takenMs) / 60_000
    if (Number.isInteger(minutes) && minutes % 15 === 0 && Math.abs(minutes) <= ZONE_SPAN_MINUTES) return minutes
  }
  return zone(takenMs)
}

export interface TakeoutFactOptions {
  /** Keep the sidecar's place (and the file's EXIF position, which `file` holds only when asked for). */
  readonly location: boolean
  /** The importing device's zone: takenOffset's last resort. */
  readonly zone: (at: number) => number
}

/**
 * What the metadata of a photo takes from its sidecar, over what its file says (`file`:
 * node/media.ts or the web app's worker): the date taken (source `takeout`, metadata version 5)
 * when the sidecar has one, the place Google Photos showed when the person keeps places, the
 * caption, the favourite mark.
 */
export function takeoutFacts(file: MediaFacts, sidecar: TakeoutSidecar | null, options: TakeoutFactOptions): MediaFacts {
  if (sidecar === null) return file
  const location: GeoLocation | null = options.location ? (sidecar.geo ?? file.location ?? null) : null
  const description = sidecar.description === null ? null : descriptionOf(sidecar.description)
  return {
    ...file,
    ...(sidecar.takenMs === null
      ? {}
      : { captured: sidecar.takenMs, capturedSource: 'takeout' as const, capturedOffset: takenOffset(sidecar.takenMs, file, options.zone) }),
    location,
    ...(description === null ? {} : { description }),
    ...(sidecar.favorited ? { favourite: true } : {}),
  }
}
