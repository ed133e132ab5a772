// Reading a Google Takeout export of Google Photos (issue 42; docs/decisions/0071-takeout-import.md):
// which JSON sidecar belongs to which photo or video, what a sidecar and an album's metadata file
// say, which folders are albums, and which files of several folders are one photo. Names and
// texts only: the caller lists the archives (or a folder) and reads the files; nothing here
// touches a disk or a zip, so the web app runs it too on the entries of a zip it streams.
//
// Takeout's rules are not documented by Google; these are the ones observed by the tools that
// read Takeout, each checked against their test tables and issue reports (read, never copied):
// - simulot/immich-go, adapters/googlePhotos/matchers.go, matcher_test.go, json.go,
//   googlephotos.go and docs/misc/google-takeout.md (snapshot 2e5607a5, November 2025): the name
//   pairs (truncation, `(1)` moved after the extension, `-modifié`/`-bearbeitet`/`-modificato`,
//   `.supplemental-metadata` and its truncations, `IMAG0061-edited.JPG` sharing
//   `IMAG0061.JPG.supplemental-metadata.json`), the localized album-metadata names, the
//   `albumData` wrapper, "a photo in a year folder and in albums: same name, same size".
// - ente-io/ente, web/packages/gallery/services/upload/metadata-json.ts and pull requests 4956
//   and 12691: the 46 UTF-16 code units (JavaScript's `slice`) before `(n)` and `.json`, the index
//   placed after the clipped `.supplemental-metadata`, the index left in place
//   (`skytree (2).jpg.supplemental-metadata.json`), unclipped long names in newer exports;
//   `geoData` before `geoDataExif`, 0,0 meaning none.
// - TheLastGimbus/GooglePhotosTakeoutHelper, lib/date_extractors/json_extractor.dart,
//   lib/extras.dart, lib/folder_classify.dart, issues 180, 236, 318, 460 and pull requests 449,
//   483: 51 characters in all with `.json`, the sidecar named without the photo's extension when
//   it was uploaded without one, the localized "edited" suffixes, "Photos from YYYY" and its
//   translations, the Live Photo video that has no sidecar of its own, geoData holding the
//   location edited in Google Photos.
// - Xentraxx/GooglePhotosTakeoutHelper_Neo, lib/common/constants/constants.dart and
//   extra_formats.dart, issue 100: more year-folder and special-folder translations.
import type { GeoLocation } from './format/metadata.ts'
import { BACKED_UP_TYPES, mediaTypeOfName } from './media-types.ts'
import { ProblemError } from './problem-error.ts'

// ---------------------------------------------------------------------------------------------
// Sidecar names

/**
 * Takeout clips a sidecar's name (the photo's name, with `.supplemental-metadata` in exports
 * since 2024) to this many UTF-16 code units, then adds the duplicate index `(n)` if any and
 * `.json`: at most 51 characters without an index.
 */
export const SIDECAR_NAME_LIMIT = 46

/** What exports since 2024 insert between the photo's name and `.json` (clipped like the rest). */
export const SUPPLEMENTAL_METADATA = '.supplemental-metadata'

/**
 * "Edited" in the languages Takeout names an edited copy in (`IMG_1234-edited.jpg`); an edited
 * copy without a sidecar of its own shares its original's. Lower case, NFC. English, French,
 * German, Italian confirmed by immich-go; the others as GooglePhotosTakeoutHelper (and its Neo
 * fork) list them.
 */
export const EDITED_SUFFIXES: readonly string[] = [
  '-edited',
  '-modifié',
  '-bearbeitet',
  '-modificato',
  '-editado',
  '-editada',
  '-ha editado',
  '-editat',
  '-bewerkt',
  '-edytowane',
  '-redigeret',
  '-muokattu',
  '-upravené',
  '-düzenlendi',
  '-diedit',
  '-đã chỉnh sửa',
  '-отредактировано',
  '-відредаговано',
  '-編集済み',
  '-已编辑',
  '-编辑',
  '-편집됨',
  '-แก้ไขแล้ว',
  '-संपादित',
  '-تم التعديل',
]

/** An album folder's metadata file, by language (immich-go's table); lower case, NFC. */
export const ALBUM_METADATA_NAMES: readonly string[] = [
  'metadata.json',
  'métadonnées.json',
  'metadati.json',
  'metadaten.json',
  'metadatos.json',
  'metadades.json',
  'metadáta.json',
  'метаданные.json',
  'метаданни.json',
]

/** Files about the whole export (at the top of the Google Photos folder), not about a photo; lower case, NFC. */
const EXPORT_FILES = new Set([
  'shared_album_comments.json',
  'print-subscriptions.json',
  'user-generated-memory-titles.json',
  'titres-souvenirs-générés-par-utilisateur.json',
])

/** How a photo or video got its sidecar: its own by its name, its original's (an edited copy), its photo's (a Live Photo's video). */
export type SidecarVia = 'own' | 'edited' | 'live'

export interface TakeoutMedia {
  /** As given. */
  readonly path: string
  /** The sidecar's path as given, or null: no JSON file of its folder is its by the rules. */
  readonly sidecar: string | null
  /** How it was matched; null without a sidecar. */
  readonly via: SidecarVia | null
}

/** A file that is neither a photo or video nor JSON, or that is not read, and why. */
export interface TakeoutSkipped {
  readonly path: string
  readonly reason: string
}

export interface TakeoutListing {
  /** Every photo and video (by its name, as media-types.ts decides), in the order given. */
  readonly media: readonly TakeoutMedia[]
  /** The album metadata file of a folder (a name of ALBUM_METADATA_NAMES that no photo claims), one per folder at most. */
  readonly albumMetadata: readonly { readonly folder: string; readonly path: string }[]
  /**
   * JSON files that no photo or video of their folder claims: a sidecar whose photo is not in the
   * listing (an archive of the export left out) or named by a rule not known here, or an album's
   * metadata in a language not listed (parseAlbumMetadata tells).
   */
  readonly unmatched: readonly string[]
  readonly skipped: readonly TakeoutSkipped[]
}

export const SKIPPED_NOT_MEDIA = 'not a photo or video (by its name)'
export const SKIPPED_HIDDEN = 'a hidden or system file'
export const SKIPPED_REPEATED = 'the same path again (in another archive of the export): read once'
export const SKIPPED_EXPORT_FILE = 'a file about the whole export, not about a photo'

/** A name in the form every comparison here uses: NFC (macOS gives NFD names), so that `-modifié` is one string. */
const nfc = (name: string): string => name.normalize('NFC')

/** The folder of a path ("" at the top) and its last name; "/" between names, as in a zip. */
function split(path: string): { folder: string; name: string } {
  const slash = path.lastIndexOf('/')
  return { folder: path.slice(0, Math.max(slash, 0)), name: path.slice(slash + 1) }
}

interface NameParts {
  /** The name without its extension and without Takeout's duplicate index: `IMG_1234` of `IMG_1234(1).jpg`. */
  readonly base: string
  /** `(1)`, or "". */
  readonly index: string
  /** `.jpg`, or "" (none, or a name that starts with its only dot). */
  readonly extension: string
}

function partsOf(name: string): NameParts {
  const dot = name.lastIndexOf('.')
  const stem = dot > 0 ? name.slice(0, dot) : name
  const extension = dot > 0 ? name.slice(dot) : ''
  const index = /\(\d+\)$/.exec(stem)?.[0] ?? ''
  return { base: stem.slice(0, stem.length - index.length), index, extension }
}

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff

/**
 * The ways Takeout may have written `text` in a sidecar's name, in a fixed order of four (null
 * where a way gives nothing new): as it is (short names, and some newer exports that leave long
 * names whole), clipped to 46 UTF-16 code units, the other side of a surrogate pair the cut would
 * split (a lone half cannot be in a name), and clipped to 46 code points.
 */
function clippings(text: string): (string | null)[] {
  if (text.length <= SIDECAR_NAME_LIMIT) return [text, null, null, null]
  const ways: (string | null)[] = [text]
  if (isHighSurrogate(text.charCodeAt(SIDECAR_NAME_LIMIT - 1))) ways.push(text.slice(0, SIDECAR_NAME_LIMIT - 1), text.slice(0, SIDECAR_NAME_LIMIT + 1))
  else ways.push(text.slice(0, SIDECAR_NAME_LIMIT), null)
  const points = Array.from(text)
  const byPoints = points.length > SIDECAR_NAME_LIMIT ? points.slice(0, SIDECAR_NAME_LIMIT).join('') : null
  ways.push(byPoints !== null && !ways.includes(byPoints) ? byPoints : null)
  return ways
}

/**
 * The names a photo's sidecar may have, most specific first, as a fixed list of slots (null where
 * a rule gives nothing) so that photos compete slot by slot (matchSidecars). Three forms of the
 * name (Takeout's duplicate index moved after the extension: `IMG(1).jpg` → `IMG.jpg(1).json`;
 * the index left where it is; the extension left out, for a photo uploaded without one), each
 * without and with `.supplemental-metadata`, each in the four clippings.
 */
export function sidecarNames(name: string): (string | null)[] {
  const { base, index, extension } = partsOf(nfc(name))
  // [the name, what follows the clipped name, the least a clipping must keep]: the index left in
  // place must survive the clipping, or `IMG…(1).jpg` would take `IMG….json`, another photo's.
  const forms: [string, string, number][] = [[base + extension, index, 0]]
  forms.push(index === '' ? ['', '', 0] : [base + index + extension, '', base.length + index.length])
  forms.push(extension === '' ? ['', '', 0] : [base, index, 0])
  const slots: (string | null)[] = []
  for (const [text, after, least] of forms) {
    for (const suffix of ['', SUPPLEMENTAL_METADATA]) {
      for (const clipped of text === '' ? [null, null, null, null] : clippings(text + suffix)) {
        slots.push(clipped === null || clipped.length < least ? null : `${clipped}${after}.json`)
      }
    }
  }
  return slots
}

/** The original's name of an edited copy (`IMG-edited.jpg`, `IMG-edited(1).jpg`, `IMG(1)-bearbeitet.jpg`), or null when the name is not an edited copy's. */
export function originalOfEdited(name: string): string | null {
  const { base, index, extension } = partsOf(nfc(name))
  const lower = base.toLowerCase()
  for (const suffix of EDITED_SUFFIXES) {
    if (lower.length > suffix.length && lower.endsWith(suffix)) return base.slice(0, base.length - suffix.length) + index + extension
  }
  return null
}

interface Entry {
  readonly path: string
  /** NFC. */
  readonly name: string
  readonly video: boolean
}

interface Folder {
  readonly media: Entry[]
  /** NFC name → path. */
  readonly json: Map<string, string>
}

/** Which of a folder's JSON a name is: exactly, or when exactly fails, by a unique case-insensitive match. */
class Lookup {
  readonly #exact: Map<string, string>
  readonly #folded = new Map<string, string | null>()

  constructor(json: Map<string, string>) {
    this.#exact = json
    for (const [name, path] of json) {
      const key = name.toLowerCase()
      this.#folded.set(key, this.#folded.has(key) ? null : path)
    }
  }

  find(name: string, folded: boolean): string | null {
    return (folded ? this.#folded.get(name.toLowerCase()) : this.#exact.get(name)) ?? null
  }

  /** The first of `names` there is, exactly, else case-insensitively. */
  first(names: readonly (string | null)[]): string | null {
    for (const folded of [false, true]) {
      for (const name of names) {
        const found = name === null ? null : this.find(name, folded)
        if (found !== null) return found
      }
    }
    return null
  }
}

/**
 * Which JSON file is the sidecar of each photo and video of `paths` (every file of an export,
 * from any number of its archives; "/" between names, as in a zip, each archive's paths as they
 * are: `Takeout/Google Photos/Photos from 2019/IMG_1234.jpg`). Only a folder's own JSON files
 * are looked at, and names only: the caller reads the files it names.
 *
 * The rules, tried in turn within a folder:
 * 1. **Its own**, by its name (sidecarNames): the names of every photo compete slot by slot, so
 *    that a more specific rule (`IMG.jpg.json` for `IMG.jpg`) wins over a looser one (`IMG.json`
 *    for `IMG.png`, whose own is elsewhere); exact names before case-insensitive ones. When two
 *    photos want the same file at the same step, an original wins over an edited copy, a photo
 *    over a video, then the first name in code-unit order; the others go on to their next rule.
 * 2. **An edited copy's original's** (originalOfEdited): the original's own if it is in the
 *    folder, else the first of the original's names there is. Shared, not taken.
 * 3. **A Live Photo's video** shares its photo's: a video left without one takes the sidecar of a
 *    photo of the same folder and the same name before the extension (`IMG_1234.HEIC` and
 *    `IMG_1234.MOV`), exactly, else case-insensitively; the first such photo by name.
 *
 * Not matched on purpose: a photo whose index Takeout gave to its file and not to its sidecar
 * (`original_…_P(1).jpg` next to `original_…_.json` only): the `(1)` is another photo, and the
 * other photo's date would be wrong. A repeated path (the same file in two archives) is read once.
 */
export function matchSidecars(paths: Iterable<string>): TakeoutListing {
  const skipped: TakeoutSkipped[] = []
  const folders = new Map<string, Folder>()
  const order: Entry[] = []
  const jsonOrder: { folder: string; name: string; path: string }[] = []
  const seen = new Set<string>()
  for (const path of paths) {
    if (path === '' || path.endsWith('/')) continue
    if (seen.has(nfc(path))) {
      skipped.push({ path, reason: SKIPPED_REPEATED })
      continue
    }
    seen.add(nfc(path))
    const { folder, name } = split(nfc(path))
    if (name.startsWith('.') || folder.split('/').some((part) => part.startsWith('.') || part === '__MACOSX')) {
      skipped.push({ path, reason: SKIPPED_HIDDEN })
      continue
    }
    const at = folders.get(folder) ?? { media: [], json: new Map<string, string>() }
    folders.set(folder, at)
    if (name.toLowerCase().endsWith('.json')) {
      at.json.set(name, path)
      jsonOrder.push({ folder, name, path })
    } else if (BACKED_UP_TYPES.test(mediaTypeOfName(name))) {
      const entry = { path, name, video: mediaTypeOfName(name).startsWith('video/') }
      at.media.push(entry)
      order.push(entry)
    } else skipped.push({ path, reason: SKIPPED_NOT_MEDIA })
  }

  const found = new Map<Entry, { sidecar: string; via: SidecarVia }>()
  const used = new Set<string>()
  for (const folder of folders.values()) {
    if (folder.media.length === 0 || folder.json.size === 0) continue
    const lookup = new Lookup(folder.json)
    const names = new Map(folder.media.map((entry) => [entry, sidecarNames(entry.name)]))
    const ownOf = new Map<string, string>()
    const slotCount = names.values().next().value?.length ?? 0
    // 1. Its own, slot by slot.
    for (const folded of [false, true]) {
      for (let slot = 0; slot < slotCount; slot++) {
        const wanted = new Map<string, Entry[]>()
        for (const entry of folder.media) {
          if (found.has(entry)) continue
          const name = names.get(entry)?.[slot] ?? null
          const sidecar = name === null ? null : lookup.find(name, folded)
          if (sidecar === null || used.has(sidecar)) continue
          wanted.set(sidecar, [...(wanted.get(sidecar) ?? []), entry])
        }
        for (const [sidecar, entries] of wanted) {
          const [winner] = entries.sort(precedence)
          if (winner === undefined) continue
          found.set(winner, { sidecar, via: 'own' })
          ownOf.set(winner.name, sidecar)
          used.add(sidecar)
        }
      }
    }
    // 2. An edited copy's original's.
    for (const entry of folder.media) {
      if (found.has(entry)) continue
      const original = originalOfEdited(entry.name)
      if (original === null) continue
      const sidecar = ownOf.get(original) ?? lookup.first(sidecarNames(original))
      if (sidecar === null) continue
      found.set(entry, { sidecar, via: 'edited' })
      used.add(sidecar)
    }
    // 3. A Live Photo's video.
    const photos = folder.media.filter((entry) => !entry.video && found.has(entry)).sort((a, b) => compare(a.name, b.name))
    for (const entry of folder.media) {
      if (!entry.video || found.has(entry)) continue
      const stem = stemOf(entry.name)
      const photo = photos.find((p) => stemOf(p.name) === stem) ?? photos.find((p) => stemOf(p.name).toLowerCase() === stem.toLowerCase())
      const sidecar = photo === undefined ? undefined : found.get(photo)?.sidecar
      if (sidecar !== undefined) found.set(entry, { sidecar, via: 'live' })
    }
  }

  const albumNames = new Set(ALBUM_METADATA_NAMES)
  const albumMetadata: { folder: string; path: string }[] = []
  const withMetadata = new Set<string>()
  const unmatched: string[] = []
  for (const { folder, name, path } of jsonOrder) {
    if (used.has(path)) continue
    const lower = name.toLowerCase()
    if (albumNames.has(lower) && !withMetadata.has(folder)) {
      withMetadata.add(folder)
      albumMetadata.push({ folder, path })
    } else if (EXPORT_FILES.has(lower)) skipped.push({ path, reason: SKIPPED_EXPORT_FILE })
    else unmatched.push(path)
  }
  const media = order.map((entry): TakeoutMedia => {
    const match = found.get(entry)
    return { path: entry.path, sidecar: match?.sidecar ?? null, via: match?.via ?? null }
  })
  return { media, albumMetadata, unmatched, skipped }
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** Who gets a sidecar two photos want at the same step: an original before an edited copy, a photo before a video, then by name. */
function precedence(a: Entry, b: Entry): number {
  const edited = Number(originalOfEdited(a.name) !== null) - Number(originalOfEdited(b.name) !== null)
  if (edited !== 0) return edited
  return Number(a.video) - Number(b.video) || compare(a.name, b.name)
}

function stemOf(name: string): string {
  const dot = name.lastIndexOf('.')
  return dot > 0 ? name.slice(0, dot) : name
}

// ---------------------------------------------------------------------------------------------
// Folders: albums and year folders

/**
 * The year folders Takeout puts every photo in ("Photos from 2019"), by language: English
 * (GooglePhotosTakeoutHelper), German (its pull request 483), French and Spanish (its issue 318),
 * Italian (GooglePhotosTakeoutHelper_Neo issue 100), Spanish "del" and Dutch (the Neo fork's list,
 * where the apostrophe of "Foto's" reads as an underscore; both are taken).
 */
const YEAR_FOLDER = /^(?:Photos from|Fotos von|Photos de|Fotos de|Fotos del|Foto da|Foto's van|Foto_s van) \d{4}$/

/**
 * Folders that hold photos but are no album of the person's, when they have no album metadata:
 * the export's own (Takeout, the Google Photos folder by language, from immich-go's table), the
 * trash, the archive and the locked folder by language (GooglePhotosTakeoutHelper and its Neo
 * fork; "Bin" in British English, its issue 482), Google's "Failed Videos" (immich-go). Lower
 * case, NFC.
 */
const NOT_ALBUMS = new Set([
  'takeout',
  'google photos',
  'google fotos',
  'google foto',
  'fotky google',
  'google фото',
  'google снимки',
  'trash',
  'bin',
  'corbeille',
  'papierkorb',
  'papelera',
  'cestino',
  'lixeira',
  'prullenbak',
  'kosz',
  'корзина',
  'ゴミ箱',
  '回收站',
  'paperera',
  'archive',
  'archiv',
  'archivio',
  'archivo',
  'arquivo',
  'archief',
  'archiwum',
  'архив',
  'アーカイブ',
  'arxiu',
  'locked folder',
  'failed videos',
])

/** Whether a folder (its path or its name) is a year folder ("Photos from 2019" and its translations). */
export function isYearFolder(folder: string): boolean {
  return YEAR_FOLDER.test(nfc(split(folder.replace(/\/+$/, '')).name))
}

/**
 * The album a folder of the export stands for, or null: a year folder never is one (the photos it
 * holds are in the library, whatever album they are in too); otherwise the title its album
 * metadata file gives (`metadataJson`: the text of the file matchSidecars names), and when there
 * is none, or it is empty or unreadable, the folder's name, except for the export's own folders,
 * the trash, the archive and "Failed Videos". Takeout writes an album's folder with the
 * characters a file system refuses replaced, and untitled albums as "Untitled(2)" and the like:
 * the metadata's title is the album's name, the folder's only a stand-in.
 */
export function albumOf(folder: string, metadataJson?: string | null): string | null {
  const name = nfc(split(folder.replace(/\/+$/, '')).name)
  if (name === '' || YEAR_FOLDER.test(name)) return null
  if (metadataJson !== undefined && metadataJson !== null) {
    try {
      const title = parseAlbumMetadata(metadataJson).title
      if (title !== null) return title
    } catch (error) {
      if (!(error instanceof TakeoutJsonError)) throw error
    }
  }
  return NOT_ALBUMS.has(name.toLowerCase()) ? null : name
}

// ---------------------------------------------------------------------------------------------
// The same photo in several folders

export interface TakeoutFileFacts {
  /** As given to matchSidecars. */
  readonly path: string
  readonly size: number
}

/**
 * The photos of `files`, each as the paths of its copies: Takeout puts a photo in its year folder
 * and again in every album it is in, so it should be stored once and added to each album. Two
 * files of different folders are one photo when their names (Takeout's duplicate index `(n)` left
 * out: a folder numbers its own collisions) and their sizes are the same; when one folder holds
 * two files of that name and size (`IMG(1).jpg` beside `IMG.jpg`), which copy is which cannot be
 * told, and each of those files stays a photo of its own (stored twice at worst, never put in an
 * album it is not in). Every path is in one group; groups and their paths are in the order given.
 */
export function groupCopies(files: readonly TakeoutFileFacts[]): string[][] {
  const buckets = new Map<string, TakeoutFileFacts[]>()
  for (const file of files) {
    const { name } = split(nfc(file.path))
    const { base, extension } = partsOf(name)
    const key = `${base}${extension}\u0000${file.size}`
    buckets.set(key, [...(buckets.get(key) ?? []), file])
  }
  const groupOf = new Map<string, string[]>()
  for (const bucket of buckets.values()) {
    const folders = bucket.map((file) => split(nfc(file.path)).folder)
    const clear = new Set(folders).size === folders.length
    if (clear) {
      const group = bucket.map((file) => file.path)
      for (const path of group) groupOf.set(path, group)
    } else for (const file of bucket) groupOf.set(file.path, [file.path])
  }
  const groups: string[][] = []
  const listed = new Set<string[]>()
  for (const file of files) {
    const group = groupOf.get(file.path)
    if (group === undefined || listed.has(group)) continue
    listed.add(group)
    groups.push(group)
  }
  return groups
}

// ---------------------------------------------------------------------------------------------
// The JSON files

/** A sidecar or album metadata file longer than this (in UTF-16 code units) is refused: Takeout's are a few KB. */
export const TAKEOUT_JSON_MAX_LENGTH = 1_048_576
/** Objects and arrays nested deeper than this are refused (a sidecar nests four deep, an album's comments six). */
export const TAKEOUT_JSON_MAX_DEPTH = 32

export type TakeoutJsonProblem = 'too-large' | 'too-deep' | 'malformed' | 'not-a-sidecar' | 'not-album-metadata'

/** A JSON file of the export that is not read, and why: the one error parseSidecar and parseAlbumMetadata throw. */
export class TakeoutJsonError extends ProblemError<TakeoutJsonProblem> {}

/** What a photo's sidecar says that Coffer can keep. */
export interface TakeoutSidecar {
  /** The photo's name in Google Photos (whole, where the file's was clipped), or null. */
  readonly title: string | null
  /** The description typed in Google Photos, or null when empty. */
  readonly description: string | null
  /** `photoTakenTime` in milliseconds since the epoch: a moment, no zone. Null when absent or 0 (Takeout's "unknown"). */
  readonly takenMs: number | null
  /** `geoData` (the place Google Photos shows, as edited there), else `geoDataExif`; 0,0 and out-of-range positions are none. */
  readonly geo: GeoLocation | null
  readonly favorited: boolean
  /** In Google Photos' trash when exported. */
  readonly trashed: boolean
  /** Archived in Google Photos (hidden from its main view). */
  readonly archived: boolean
  /** Shared by a partner (`googlePhotosOrigin.fromPartnerSharing`), not the person's own. */
  readonly fromPartner: boolean
  /** The names of the people tagged, in order, empty ones left out. */
  readonly people: readonly string[]
  /** The photo's address in Google Photos, or null. */
  readonly url: string | null
}

/** What an album's metadata file says. */
export interface TakeoutAlbum {
  /** Null when empty: an untitled album. */
  readonly title: string | null
  readonly description: string | null
}

/** The JSON object of a Takeout file, within the bounds; throws TakeoutJsonError. */
function readObject(json: string, what: string): Record<string, unknown> {
  if (typeof json !== 'string') throw new TakeoutJsonError('malformed', `${what}: not text`)
  if (json.length > TAKEOUT_JSON_MAX_LENGTH) throw new TakeoutJsonError('too-large', `${what}: longer than ${TAKEOUT_JSON_MAX_LENGTH} characters`)
  const text = json.startsWith('\uFEFF') ? json.slice(1) : json
  if (!withinDepth(text, TAKEOUT_JSON_MAX_DEPTH)) throw new TakeoutJsonError('too-deep', `${what}: nested deeper than ${TAKEOUT_JSON_MAX_DEPTH}`)
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new TakeoutJsonError('malformed', `${what}: not JSON (${(error as Error).message})`)
  }
  if (!isObject(value)) throw new TakeoutJsonError('malformed', `${what}: not a JSON object`)
  return value
}

/** Whether no object or array of `text` nests deeper than `max`, counted outside strings (a scan before parsing). */
function withinDepth(text: string, max: number): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (inString) {
      if (code === 0x5c) i++
      else if (code === 0x22) inString = false
    } else if (code === 0x22) inString = true
    else if (code === 0x7b || code === 0x5b) {
      if (++depth > max) return false
    } else if (code === 0x7d || code === 0x5d) depth--
  }
  return true
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

const text = (value: unknown): string | null => (typeof value === 'string' && value.trim() !== '' ? value : null)

/** Seconds in a Takeout time object (`{"timestamp": "1563024896", "formatted": …}`, a string; a number too) as milliseconds; null when absent, 0 or not a date. */
function timestampMs(value: unknown): number | null {
  if (!isObject(value)) return null
  const stamp = value.timestamp
  let seconds: number
  if (typeof stamp === 'string' && /^-?\d{1,15}$/.test(stamp.trim())) seconds = Number(stamp.trim())
  else if (typeof stamp === 'number' && Number.isInteger(stamp)) seconds = stamp
  else return null
  const ms = seconds * 1000
  return seconds === 0 || Math.abs(ms) > 8.64e15 ? null : ms
}

function position(value: unknown): GeoLocation | null {
  if (!isObject(value)) return null
  const { latitude, longitude } = value
  if (typeof latitude !== 'number' || typeof longitude !== 'number' || !Number.isFinite(latitude) || !Number.isFinite(longitude)) return null
  if ((latitude === 0 && longitude === 0) || Math.abs(latitude) > 90 || Math.abs(longitude) > 180) return null
  return { latitude, longitude }
}

/**
 * A photo's sidecar, read. Refused (TakeoutJsonError, nothing else) when longer than
 * TAKEOUT_JSON_MAX_LENGTH, nested deeper than TAKEOUT_JSON_MAX_DEPTH, not a JSON object, or not a
 * photo's sidecar (neither `photoTakenTime` nor `creationTime`: an album's metadata, or another
 * file). A field of the wrong type reads as absent.
 */
export function parseSidecar(json: string): TakeoutSidecar {
  const value = readObject(json, 'sidecar')
  if (!isObject(value.photoTakenTime) && !isObject(value.creationTime)) {
    throw new TakeoutJsonError('not-a-sidecar', 'sidecar: neither photoTakenTime nor creationTime: not the metadata of a photo')
  }
  const origin = value.googlePhotosOrigin
  const people = Array.isArray(value.people)
    ? value.people.flatMap((person: unknown) => {
        const name = isObject(person) ? text(person.name) : null
        return name === null ? [] : [name]
      })
    : []
  return {
    title: text(value.title),
    description: text(value.description),
    takenMs: timestampMs(value.photoTakenTime),
    geo: position(value.geoData) ?? position(value.geoDataExif),
    favorited: value.favorited === true,
    trashed: value.trashed === true,
    archived: value.archived === true,
    fromPartner: isObject(origin) && 'fromPartnerSharing' in origin,
    people,
    url: text(value.url),
  }
}

/**
 * An album's metadata file, read (`{"title": …, "description": …}`, or in older exports the same
 * inside `albumData`). Refused (TakeoutJsonError) as parseSidecar refuses, and when it is a
 * photo's sidecar (`photoTakenTime`) or names no title at all.
 */
export function parseAlbumMetadata(json: string): TakeoutAlbum {
  const outer = readObject(json, 'album metadata')
  const value = isObject(outer.albumData) ? outer.albumData : outer
  if ('photoTakenTime' in value) throw new TakeoutJsonError('not-album-metadata', "album metadata: a photo's sidecar (photoTakenTime)")
  if (typeof value.title !== 'string') throw new TakeoutJsonError('not-album-metadata', 'album metadata: no title')
  return { title: text(value.title), description: text(value.description) }
}
