// Search that finds, on the device (issue 41, decision 0070): the account's photos by what their
// encrypted metadata says — a file name, a date taken, a camera, an album, a place, a favourite
// mark, a video, a caption — answered from an index this device keeps, never by the server (DESIGN.md
// section 7: "Indexes live on the device").
//
// One SearchEntry per photo (searchEntry makes it from the metadata); a SearchIndex keeps them,
// put and removed one at a time as an album's feed moves on, with what a query needs worked out
// once per photo (its words folded, its year and month, its place's names), so that a query over
// 100,000 photos is one pass over columns in date order (0.3 to 3 ms: docs/benchmarks.md).
// parseQuery reads what a person types (docs/photos.md, "Searching"); search answers it, newest
// first; suggest completes the word being typed from what the index holds. Pure and browser-safe:
// the CLI keeps its index sealed in its state store (node/search-store.ts), the web app in the
// browser's.
import type { AssetMetadata, CameraFacts, GeoLocation } from './format/metadata.ts'
import { placeNames, placeText, type Place, type PlaceLookup } from './places.ts'
import { metadataTaken, type TakenOptions } from './taken.ts'

export type MediaKind = 'photo' | 'video'

/** What search knows of one photo or video. */
export interface SearchEntry {
  readonly assetId: string
  readonly albumId: string
  /** The file's name as stored (with its subfolder: "trip/IMG_0001.jpg"). */
  readonly name: string
  /** The date taken: the wall clock where it was taken, in ms as if it were UTC (taken.ts Taken.local); null when unknown. */
  readonly taken: number | null
  /** The camera, make and model ("Canon EOS 5D"), or null. */
  readonly camera: string | null
  /** Where it was taken, when the person opted in to keeping the position; else null. */
  readonly place: GeoLocation | null
  readonly favourite: boolean
  readonly kind: MediaKind
  /** The person's caption (a Takeout or XMP description, metadata version 5), or null. */
  readonly description: string | null
}

/**
 * Text as search compares it: decomposed (NFKD), accents and other marks dropped, lower case,
 * and the letters that do not decompose written as their plain forms (ß ss, æ ae, ø o, ł l ...):
 * "Malmö", "MALMO" and "malmo" are one word, "Łódź" is "lodz".
 */
export function fold(text: string): string {
  if (ASCII.test(text)) return text.toLowerCase() // nothing to decompose or replace: most names
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[ßæœøłđðþıħŧ]/g, (letter) => FOLDED_LETTERS[letter] ?? letter)
}
const ASCII = /^[ -~]*$/ // printable ASCII
const FOLDED_LETTERS: Readonly<Record<string, string>> = { ß: 'ss', æ: 'ae', œ: 'oe', ø: 'o', ł: 'l', đ: 'd', ð: 'd', þ: 'th', ı: 'i', ħ: 'h', ŧ: 't' }

/** The words of a text, folded: its runs of letters and digits ("IMG_0042.JPG": img, 0042, jpg). */
export function words(text: string): string[] {
  return fold(text).match(/[\p{L}\p{N}]+/gu) ?? []
}

/** Corporate words a camera's make carries that nobody searches by. */
const MAKE_SUFFIX = /[\s,]+(corporation|corp\.?|co\.?,?\s*ltd\.?|company|inc\.?|ltd\.?|gmbh|ag|imaging|optical|digital|electric|photo)\.?$/i

/**
 * The camera as one text: make and model, the make left out when the model starts with it
 * ("Canon" + "Canon EOS 5D": "Canon EOS 5D"; "NIKON CORPORATION" + "NIKON D750": "NIKON D750";
 * "Apple" + "iPhone 12": "Apple iPhone 12"). Null when neither is known.
 */
export function cameraText(camera: Pick<CameraFacts, 'make' | 'model'> | undefined | null): string | null {
  let make = camera?.make?.trim() ?? ''
  const model = camera?.model?.trim() ?? ''
  for (let before = ''; before !== make; ) {
    before = make
    make = make.replace(MAKE_SUFFIX, '')
  }
  if (make === '') return model === '' ? null : model
  if (model === '') return make
  const brand = fold(make).split(/\s+/)[0]!
  return fold(model).startsWith(brand) ? model : `${make} ${model}`
}

/** A photo or a video, by its media type. */
export const kindOf = (type: string): MediaKind => (/^video\//i.test(type) ? 'video' : 'photo')

/** What searchEntry reads of a photo's metadata. */
export type SearchMetadata = Pick<
  AssetMetadata,
  'name' | 'type' | 'modified' | 'captured' | 'capturedSource' | 'capturedOffset' | 'camera' | 'location' | 'favourite' | 'description'
>

/**
 * A photo's entry from its metadata and when it was uploaded (its manifest's timestamp, RFC
 * 3339 or ms): the date taken as taken.ts reads it (`options`: the viewer's zone, which a date
 * from a modification or upload time is shown in).
 */
export function searchEntry(assetId: string, albumId: string, metadata: SearchMetadata, uploaded: string | number, options: TakenOptions = {}): SearchEntry {
  return {
    assetId,
    albumId,
    name: metadata.name,
    taken: metadataTaken(metadata, uploaded, options).local,
    camera: cameraText(metadata.camera),
    place: metadata.location ?? null,
    favourite: metadata.favourite === true,
    kind: kindOf(metadata.type),
    description: metadata.description ?? null,
  }
}

// ---------------------------------------------------------------------------------------------
// Queries

/** A date a query names, as a half-open range of `SearchEntry.taken` ([from, to)), or a month of any year. */
export type DateTerm =
  | { readonly label: string; readonly from: number; readonly to: number; readonly month?: undefined }
  | { readonly label: string; readonly month: number; readonly from?: undefined; readonly to?: undefined }

/** A query as parseQuery understood it. */
export interface SearchQuery {
  /** The words that must each match something of a photo (its name, camera, album or place), folded; a quoted phrase is one, its words one space apart. */
  readonly words: readonly string[]
  /** Dates it names: a photo matches when it was taken in any of them (none: any date). */
  readonly dates: readonly DateTerm[]
  /** Favourites only. */
  readonly favourites: boolean
  /** Photos only, or videos only; null: both. */
  readonly kind: MediaKind | null
}

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december']
const MONTH_NAMES = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December']
/** A month's number (1 to 12) by its English name or first three letters ("sept" too); 0 for anything else. */
function monthOf(word: string): number {
  if (word.length >= 3) {
    const at = MONTHS.findIndex((name) => name === word || name.slice(0, 3) === word)
    if (at >= 0) return at + 1
  }
  return word === 'sept' ? 9 : 0
}

const FAVOURITE_WORDS = new Set(['favourite', 'favourites', 'favorite', 'favorites', 'fav', 'favs', 'faves'])
const KIND_WORDS: Readonly<Record<string, MediaKind>> = {
  video: 'video',
  videos: 'video',
  movie: 'video',
  movies: 'video',
  photo: 'photo',
  photos: 'photo',
  picture: 'photo',
  pictures: 'photo',
  image: 'photo',
  images: 'photo',
}
/** Words that join a query's parts and name nothing themselves: "photos from July 2019", "taken in Paris". */
const FILLER = new Set(['in', 'on', 'at', 'from', 'of', 'the', 'during', 'taken', 'between', 'and', 'to', 'until', 'till', 'through', 'thru'])
/** What joins the two ends of a range ("2018 - 2019", "March to June 2019", "between 2018 and 2019"). */
const RANGE_WORDS = new Set(['to', 'until', 'till', 'through', 'thru', 'and'])

/** The earliest and latest year a query reads as one: any camera's, the oldest scans' included. */
const YEARS = { min: 1800, max: 2199 }

type Token =
  | { readonly kind: 'word'; readonly text: string }
  | { readonly kind: 'iso'; readonly text: string; readonly parts: readonly number[] }
  | { readonly kind: 'dash' }

/** A date of a query, as precise as it was given: a year; a month of a year; a day; a month of any year (year null). */
interface DatePoint {
  readonly year: number | null
  readonly month: number | null
  readonly day: number | null
}

const yearOf = (word: string | undefined): number | null => {
  if (word === undefined || !/^\d{4}$/.test(word)) return null
  const year = Number(word)
  return year >= YEARS.min && year <= YEARS.max ? year : null
}
const dayOf = (word: string | undefined): number | null => {
  const match = word === undefined ? null : /^(\d{1,2})(st|nd|rd|th)?$/.exec(word)
  const day = match === null ? 0 : Number(match[1])
  return day >= 1 && day <= 31 ? day : null
}
/** A real day (not 31 June). */
const realDay = (year: number, month: number, day: number): boolean => new Date(Date.UTC(year, month - 1, day)).getUTCDate() === day

/** The date that starts at `tokens[at]`, and the index after it; null when none does. */
function datePoint(tokens: readonly Token[], at: number): { point: DatePoint; next: number } | null {
  const token = tokens[at]
  if (token === undefined || token.kind === 'dash') return null
  if (token.kind === 'iso') {
    const [year, month, day] = token.parts as [number, number, number | undefined]
    if (year < YEARS.min || year > YEARS.max || month < 1 || month > 12 || (day !== undefined && !realDay(year, month, day))) return null
    return { point: { year, month, day: day ?? null }, next: at + 1 }
  }
  const word = (offset: number): string | undefined => {
    const next = tokens[at + offset]
    return next?.kind === 'word' ? next.text : undefined
  }
  const year = yearOf(token.text)
  if (year !== null) return { point: { year, month: null, day: null }, next: at + 1 }
  // 14 July 2019
  const leadingDay = dayOf(token.text)
  if (leadingDay !== null) {
    const month = monthOf(word(1) ?? '')
    const dayYear = yearOf(word(2))
    if (month > 0 && dayYear !== null && realDay(dayYear, month, leadingDay)) return { point: { year: dayYear, month, day: leadingDay }, next: at + 3 }
    return null
  }
  const month = monthOf(token.text)
  if (month === 0) return null
  // July 14 2019 (July 14, 2019: the comma is no token)
  const day = dayOf(word(1))
  const afterDay = yearOf(word(2))
  if (day !== null && afterDay !== null && realDay(afterDay, month, day)) return { point: { year: afterDay, month, day }, next: at + 3 }
  const monthYear = yearOf(word(1))
  if (monthYear !== null) return { point: { year: monthYear, month, day: null }, next: at + 2 }
  return { point: { year: null, month, day: null }, next: at + 1 }
}

/** The first moment of a point (a year-less one has its year by now) and the first after it. */
function span(point: DatePoint & { readonly year: number }): { from: number; to: number } {
  const { year, month, day } = point
  if (month === null) return { from: Date.UTC(year, 0, 1), to: Date.UTC(year + 1, 0, 1) }
  if (day === null) return { from: Date.UTC(year, month - 1, 1), to: Date.UTC(year, month, 1) }
  return { from: Date.UTC(year, month - 1, day), to: Date.UTC(year, month - 1, day + 1) }
}

function pointLabel(point: DatePoint): string {
  const month = point.month === null ? '' : MONTH_NAMES[point.month - 1]!
  if (point.year === null) return month
  if (point.month === null) return String(point.year)
  return point.day === null ? `${month} ${point.year}` : `${point.day} ${month} ${point.year}`
}

/** A range from `a` to `b`, inclusive: a year-less end takes the other's year (the year before or after when the months cross it); both year-less, the months between of any year. */
function rangeTerms(a: DatePoint, b: DatePoint): DateTerm[] {
  const label = `${pointLabel(a)} – ${pointLabel(b)}`
  if (a.year === null && b.year === null) {
    const months: DateTerm[] = []
    for (let month = a.month!; ; month = (month % 12) + 1) {
      months.push({ label: MONTH_NAMES[month - 1]!, month })
      if (month === b.month || months.length === 12) return months
    }
  }
  const startYear = a.year ?? (a.month! > (b.month ?? 12) ? b.year! - 1 : b.year!)
  const endYear = b.year ?? (b.month! < (a.month ?? 1) ? a.year! + 1 : a.year!)
  let start = span({ ...a, year: startYear })
  let end = span({ ...b, year: endYear })
  if (end.to <= start.from) [start, end] = [end, start] // typed backwards: "2019 to 2018"
  return [{ label, from: start.from, to: end.to }]
}

function dateTerm(point: DatePoint): DateTerm {
  if (point.year === null) return { label: MONTH_NAMES[point.month! - 1]!, month: point.month! }
  return { label: pointLabel(point), ...span({ ...point, year: point.year }) }
}

/** The phrases in quotes (an unclosed quote runs to the end), and the rest of the text. */
function quoted(text: string): { phrases: string[]; rest: string } {
  const phrases: string[] = []
  const rest = text.replace(/["“”„]([^"“”„]*)(?:["“”„]|$)/g, (_, phrase: string) => {
    const phraseWords = words(phrase)
    if (phraseWords.length > 0) phrases.push(phraseWords.join(' '))
    return ' '
  })
  return { phrases, rest }
}

/** The tokens of a query: ISO dates (2019-07-14, 2019-07, with / or . too), words, and dashes between dates. */
function tokensOf(text: string): Token[] {
  const tokens: Token[] = []
  for (const match of fold(text.replace(/[♥❤]/gu, ' favourites ')).matchAll(/(\d{4})[-/.](\d{1,2})(?:[-/.](\d{1,2}))?(?!\d)|[\p{L}\p{N}]+|[-–—]+|\.\./gu)) {
    const [whole, year, month, day] = match
    if (year !== undefined) tokens.push({ kind: 'iso', text: whole, parts: [Number(year), Number(month), ...(day === undefined ? [] : [Number(day)])] })
    else if (/^[-–—.]+$/.test(whole)) tokens.push({ kind: 'dash' })
    else tokens.push({ kind: 'word', text: whole })
  }
  return tokens
}

/**
 * Reads a query as a person types it (case and accents do not matter):
 *
 * - dates: "2019", "July 2019", "jul 2019", "2019-07", "2019-07-14", "14 July 2019", "July 14,
 *   2019", a month of any year ("July"), and ranges of any of them: "2018-2019", "2018 to 2019",
 *   "March 2019 - June 2019", "March to June 2019", "between 2018 and 2019", "June to August"
 *   (those months of every year). A photo matches when it was taken in any date the query names;
 * - "favourites" (favorites, favourite, fav): favourites only; "videos" (video, movies), "photos"
 *   (photo, pictures, images): only those;
 * - every other word must match the start of a word of the photo's name, description, camera,
 *   album or place (a word of three letters or more may match anywhere in one: "1234" finds
 *   IMG_1234.JPG);
 *   "a phrase in quotes" is one word, and is never read as a date or a keyword ("2019" finds a
 *   name with 2019 in it). Joining words ("in", "from", "taken", "the" ...) are left out.
 */
export function parseQuery(text: string): SearchQuery {
  const { phrases, rest } = quoted(text)
  const tokens = tokensOf(rest)
  const found: string[] = [...phrases]
  const dates: DateTerm[] = []
  let favourites = false
  const kinds = new Set<MediaKind>()
  for (let at = 0; at < tokens.length; ) {
    const token = tokens[at]!
    const start = datePoint(tokens, at)
    if (start !== null) {
      const joint = tokens[start.next]
      if (joint?.kind === 'dash' || (joint?.kind === 'word' && RANGE_WORDS.has(joint.text))) {
        const end = datePoint(tokens, start.next + 1)
        if (end !== null) {
          dates.push(...rangeTerms(start.point, end.point))
          at = end.next
          continue
        }
      }
      dates.push(dateTerm(start.point))
      at = start.next
      continue
    }
    at++
    if (token.kind === 'iso') found.push(...words(token.text)) // not a real date ("2019-13"): its numbers are words
    if (token.kind !== 'word') continue
    if (FAVOURITE_WORDS.has(token.text)) favourites = true
    else if (KIND_WORDS[token.text] !== undefined) kinds.add(KIND_WORDS[token.text]!)
    else if (!FILLER.has(token.text)) found.push(token.text)
  }
  return { words: [...new Set(found)], dates, favourites, kind: kinds.size === 1 ? [...kinds][0]! : null }
}

/** A query as one line for a person: `"beach", July 2019, favourites, videos`. */
export function describeQuery(query: SearchQuery): string {
  return [
    ...query.words.map((word) => `"${word}"`),
    ...query.dates.map((date) => date.label),
    ...(query.favourites ? ['favourites'] : []),
    ...(query.kind === null ? [] : [`${query.kind}s`]),
  ].join(', ')
}

// ---------------------------------------------------------------------------------------------
// The index

/** Words as a query reads them: each after a space, and one at the end (" canon eos 5d "). */
const spaced = (list: readonly string[]): string => (list.length === 0 ? '' : ['', ...list, ''].join(' '))

/**
 * A photo's name and description as one flat text (one join: see Item.name), `|` between them,
 * so that no phrase runs from one into the other.
 */
const textOf = (entry: SearchEntry): string =>
  entry.description === null ? spaced(words(entry.name)) : spaced([...words(entry.name), '|', ...words(entry.description)])

/** A photo as the index keeps it: its entry and what a query compares, worked out once. */
interface Item {
  readonly entry: SearchEntry
  /** The words of its name, then of its description, folded, each after a space: " trip img 0042 jpg | sunset at the pier ". */
  readonly name: string
  /** Its camera and place, numbered by the index (0: none): their words are matched once per query, not once per photo. */
  readonly camera: number
  readonly placeNumber: number
  readonly year: number
  /** 1 to 12; 0 without a date. */
  readonly month: number
  /** Its album, numbered by the index (a number compares faster than an id). */
  readonly album: number
  readonly place: Place | null
  live: boolean
}

/** Newest taken first, then undated ones; a tie by asset id, so the order is the same everywhere. */
function newestFirst(a: Item, b: Item): number {
  const at = a.entry.taken
  const bt = b.entry.taken
  if (at !== bt) {
    if (at === null) return 1
    if (bt === null) return -1
    return bt - at
  }
  return a.entry.assetId < b.entry.assetId ? -1 : a.entry.assetId > b.entry.assetId ? 1 : 0
}

/** The index's live items, newest first (its order patched or sorted first): what search and suggest go through. */
let orderedOf: (index: SearchIndex) => readonly Item[]
/** The same items' fields as columns, in the same order: what a query reads, side by side in memory. */
let columnsOf: (index: SearchIndex) => Columns
/** suggest's counts over every live item of the index, kept until its next change. */
let totalsOf: (index: SearchIndex) => Totals
/** The numbers the index gave the albums of its items, and the words of the cameras and places it numbered (by number; 0 is none). */
let numberedOf: (index: SearchIndex) => {
  readonly albums: ReadonlyMap<string, number>
  readonly cameras: readonly string[]
  readonly places: readonly string[]
}

/**
 * The fields a query compares, one typed array (or array) per field in the items' order: a pass
 * reads contiguous memory rather than following two objects per photo (a date query over 100,000
 * photos: 0.6 ms rather than 10 to 25: docs/benchmarks.md, "search").
 */
interface Columns {
  /** SearchEntry.taken; NaN when undated. */
  readonly taken: Float64Array
  readonly month: Uint8Array
  /** FAVOURITE | VIDEO. */
  readonly flags: Uint8Array
  readonly album: Uint32Array
  readonly camera: Uint32Array
  readonly place: Uint32Array
  /** Item.name. */
  readonly name: readonly string[]
}
const FAVOURITE = 1
const VIDEO = 2

function columnsFor(items: readonly Item[]): Columns {
  const columns = {
    taken: new Float64Array(items.length),
    month: new Uint8Array(items.length),
    flags: new Uint8Array(items.length),
    album: new Uint32Array(items.length),
    camera: new Uint32Array(items.length),
    place: new Uint32Array(items.length),
    name: items.map((item) => item.name),
  }
  items.forEach((item, i) => {
    columns.taken[i] = item.entry.taken ?? Number.NaN
    columns.month[i] = item.month
    columns.flags[i] = (item.entry.favourite ? FAVOURITE : 0) | (item.entry.kind === 'video' ? VIDEO : 0)
    columns.album[i] = item.album
    columns.camera[i] = item.camera
    columns.place[i] = item.placeNumber
  })
  return columns
}

/** Pending changes past which the order is sorted again whole rather than patched. */
const RESORT_AT = 4096

export interface SearchIndexOptions {
  /** Names positions (places.ts loadPlaces); without it a photo's position is not searched by name. */
  readonly places?: PlaceLookup | null
}

/**
 * Every photo search knows, kept up to date one photo at a time: put (a new photo, or a new
 * version of one: the same asset id replaces it) and remove. Each put works out what queries
 * compare (folded words, year and month, the place's names, looked up once per position to
 * 1/100 degree); the date order is patched on the next query, or sorted again after many changes.
 */
export class SearchIndex {
  readonly #items = new Map<string, Item>()
  readonly #places: PlaceLookup | null
  readonly #placeCache = new Map<string, Place | null>()
  readonly #cameraNumbers = new Map<string, number>()
  readonly #cameraTexts = ['']
  readonly #placeNumbers = new Map<string, number>()
  readonly #placeTexts = ['']
  readonly #albumNumbers = new Map<string, number>()
  /** Live items newest first, as of the last query; items removed since are still in it, not live. */
  #sorted: Item[] = []
  /** Items put since the order was last made. */
  #added: Item[] = []
  #removed = 0
  /** Counts for suggest over everything (no filter), until the next change. */
  #totals: Totals | null = null
  /** #sorted as columns, until the order changes. */
  #columns: Columns | null = null

  constructor(options: SearchIndexOptions = {}) {
    this.#places = options.places ?? null
  }

  /** How many photos the index holds. */
  get size(): number {
    return this.#items.size
  }

  /** Adds a photo, or replaces the one of its asset id. */
  put(entry: SearchEntry): void {
    this.remove(entry.assetId)
    const place = entry.place === null ? null : this.#placeOf(entry.place)
    const date = entry.taken === null ? null : new Date(entry.taken)
    const item: Item = {
      entry,
      // Joined, not concatenated: a flat string, which includes() reads as it is (a concatenation
      // is a tree that each query would walk).
      name: textOf(entry),
      camera: entry.camera === null ? 0 : this.#cameraNumber(entry.camera),
      placeNumber: place === null ? 0 : this.#placeNumber(place),
      year: date === null ? 0 : date.getUTCFullYear(),
      month: date === null ? 0 : date.getUTCMonth() + 1,
      album: this.#albumNumber(entry.albumId),
      place,
      live: true,
    }
    this.#items.set(entry.assetId, item)
    this.#added.push(item)
    this.#totals = null
  }

  /** put, for many: the same, said once. */
  putAll(entries: Iterable<SearchEntry>): void {
    for (const entry of entries) this.put(entry)
  }

  /** Removes a photo (deleted, or gone from the albums the account reads); false when it was not there. */
  remove(assetId: string): boolean {
    const item = this.#items.get(assetId)
    if (item === undefined) return false
    item.live = false
    this.#items.delete(assetId)
    this.#removed++
    this.#totals = null
    return true
  }

  get(assetId: string): SearchEntry | undefined {
    return this.#items.get(assetId)?.entry
  }

  /** Where a photo of the index was taken, by name; null without a position or a name for it. */
  placeOf(assetId: string): Place | null {
    return this.#items.get(assetId)?.place ?? null
  }

  *entries(): IterableIterator<SearchEntry> {
    for (const item of this.#items.values()) yield item.entry
  }

  #albumNumber(albumId: string): number {
    let number = this.#albumNumbers.get(albumId)
    if (number === undefined) {
      number = this.#albumNumbers.size
      this.#albumNumbers.set(albumId, number)
    }
    return number
  }

  #cameraNumber(camera: string): number {
    let number = this.#cameraNumbers.get(camera)
    if (number === undefined) {
      number = this.#cameraTexts.push(spaced(words(camera))) - 1
      this.#cameraNumbers.set(camera, number)
    }
    return number
  }

  /** One number per place by what it is called (positions a few metres apart are one place to a query). */
  #placeNumber(place: Place): number {
    const key = `${place.city}\t${place.region}\t${place.countryCode}`
    let number = this.#placeNumbers.get(key)
    if (number === undefined) {
      number = this.#placeTexts.push(spaced(placeNames(place).flatMap(words))) - 1
      this.#placeNumbers.set(key, number)
    }
    return number
  }

  #placeOf(point: GeoLocation): Place | null {
    if (this.#places === null) return null
    const key = `${Math.round(point.latitude * 100)},${Math.round(point.longitude * 100)}`
    let place = this.#placeCache.get(key)
    if (place === undefined) {
      place = this.#places(point)
      this.#placeCache.set(key, place)
    }
    return place
  }

  static {
    orderedOf = (index) => index.#ordered()
    columnsOf = (index) => {
      const items = index.#ordered()
      index.#columns ??= columnsFor(items)
      return index.#columns
    }
    numberedOf = (index) => ({ albums: index.#albumNumbers, cameras: index.#cameraTexts, places: index.#placeTexts })
    totalsOf = (index) => {
      index.#totals ??= countItems(index.#ordered(), columnsOf(index), null)
      return index.#totals
    }
  }

  /** The live items, newest first. */
  #ordered(): readonly Item[] {
    const added = this.#added.filter((item) => item.live)
    if (added.length === 0 && this.#removed === 0) return this.#sorted
    if (added.length + this.#removed > Math.max(RESORT_AT, this.#sorted.length / 8)) {
      this.#sorted = [...this.#items.values()].sort(newestFirst)
    } else {
      if (this.#removed > 0) this.#sorted = this.#sorted.filter((item) => item.live)
      for (const item of added) {
        let low = 0
        let high = this.#sorted.length
        while (low < high) {
          const middle = (low + high) >>> 1
          if (newestFirst(this.#sorted[middle]!, item) <= 0) low = middle + 1
          else high = middle
        }
        this.#sorted.splice(low, 0, item)
      }
    }
    this.#added = []
    this.#removed = 0
    this.#columns = null
    return this.#sorted
  }
}

/** A photo found: its entry, its album's and place's names. */
export interface SearchHit extends SearchEntry {
  /** The album's name, from the caller's map; null when it has none. */
  readonly album: string | null
  /** The place's name ("Paris, France"); null without a position, or where no place is near (places.ts mapLink shows it). */
  readonly placeName: string | null
}

export interface SearchResult {
  /** How many photos match. */
  readonly total: number
  /** The first `limit` of them, newest taken first (undated last). */
  readonly hits: readonly SearchHit[]
  readonly query: SearchQuery
}

export interface SearchOptions {
  /** Only this album's photos. */
  readonly albumId?: string
  /** Hits to give, at most (all unless given); `total` counts them all. */
  readonly limit?: number
  /** Photos to leave out whatever they match (those in the trash). */
  readonly exclude?: ReadonlySet<string>
}

/** Albums' names by album id, as the caller knows them (the index does not: an album can be renamed). */
export type AlbumNames = ReadonlyMap<string, string | null>

/** What a word is looked for: anywhere in a text for three letters or more, else at the start of a word (after a space). */
const needleOf = (word: string): string => (word.length >= 3 ? word : ` ${word}`)

/** A query made ready for a pass over the index: needles, and per word the albums whose name matches it. */
function matcher(index: SearchIndex, query: SearchQuery, albums: AlbumNames, options: SearchOptions): (at: number) => boolean {
  const needles = query.words.map(needleOf)
  const numbered = numberedOf(index)
  /** Per word, which of `texts` (by number) hold it. */
  const holding = (texts: readonly string[]): Uint8Array[] =>
    needles.map((needle) => {
      const found = new Uint8Array(texts.length)
      texts.forEach((text, number) => {
        if (text.includes(needle)) found[number] = 1
      })
      return found
    })
  // The albums' names come from the caller, by album id: numbered as the index numbered the ids.
  const albumTexts: string[] = []
  for (const [albumId, number] of numbered.albums) albumTexts[number] = spaced(words(albums.get(albumId) ?? ''))
  const inAlbum = holding(albumTexts)
  const inCamera = holding(numbered.cameras)
  const inPlace = holding(numbered.places)
  // Per word, whether any album, camera or place holds it at all: most words are only in names.
  const elsewhere = needles.map((_, w) => [inAlbum[w]!, inCamera[w]!, inPlace[w]!].some((found) => found.includes(1)))
  const items = orderedOf(index)
  const { taken, month, flags, album, camera, place, name } = columnsOf(index)
  // Flags a photo must have, and the value they must have then.
  const mask = (query.favourites ? FAVOURITE : 0) | (query.kind === null ? 0 : VIDEO)
  const wanted = (query.favourites ? FAVOURITE : 0) | (query.kind === 'video' ? VIDEO : 0)
  const ranges = query.dates.filter((date) => date.month === undefined)
  const from = Float64Array.from(ranges, (date) => date.from)
  const to = Float64Array.from(ranges, (date) => date.to)
  const months = new Uint8Array(13)
  for (const date of query.dates) if (date.month !== undefined) months[date.month] = 1
  const dated = query.dates.length > 0
  const onlyAlbum = options.albumId === undefined ? -1 : (numbered.albums.get(options.albumId) ?? -2)
  const { exclude } = options
  const excluding = exclude !== undefined && exclude.size > 0
  return (at) => {
    if ((flags[at]! & mask) !== wanted) return false
    if (onlyAlbum !== -1 && album[at] !== onlyAlbum) return false
    if (dated) {
      const when = taken[at]!
      if (Number.isNaN(when)) return false
      let inside = months[month[at]!] === 1
      for (let r = 0; !inside && r < from.length; r++) inside = when >= from[r]! && when < to[r]!
      if (!inside) return false
    }
    for (let w = 0; w < needles.length; w++) {
      if (elsewhere[w] && (inAlbum[w]![album[at]!] === 1 || inCamera[w]![camera[at]!] === 1 || inPlace[w]![place[at]!] === 1)) continue
      if (!name[at]!.includes(needles[w]!)) return false
    }
    return !excluding || !exclude.has(items[at]!.entry.assetId)
  }
}

const hitOf = (item: Item, albums: AlbumNames): SearchHit => ({
  ...item.entry,
  album: albums.get(item.entry.albumId) ?? null,
  placeName: item.place === null ? null : placeText(item.place),
})

/** The photos matching `query` (text, as parseQuery reads it, or read already), newest taken first, and how many there are. */
export function search(index: SearchIndex, albums: AlbumNames, query: string | SearchQuery, options: SearchOptions = {}): SearchResult {
  const parsed = typeof query === 'string' ? parseQuery(query) : query
  const matches = matcher(index, parsed, albums, options)
  const limit = options.limit ?? Number.POSITIVE_INFINITY
  const hits: SearchHit[] = []
  let total = 0
  const items = orderedOf(index)
  for (let at = 0; at < items.length; at++) {
    if (!matches(at)) continue
    total++
    if (hits.length < limit) hits.push(hitOf(items[at]!, albums))
  }
  return { total, hits, query: parsed }
}

// ---------------------------------------------------------------------------------------------
// Suggestions

/** What suggest counts, over the photos the rest of a query matches. */
interface Totals {
  readonly years: ReadonlyMap<number, number>
  /** By year * 100 + month. */
  readonly months: ReadonlyMap<number, number>
  /** By placeKeysOf's keys. */
  readonly places: ReadonlyMap<string, number>
  readonly cameras: ReadonlyMap<string, number>
  /** By album id. */
  readonly albums: ReadonlyMap<string, number>
  readonly favourites: number
  readonly videos: number
  readonly photos: number
}

/** A place's names as suggest counts them, each with what kind it is and the text to complete with: "c\tParis\tParis, France". */
function placeKeysOf(place: Place): string[] {
  return [
    ...(place.city === null ? [] : [`c\t${place.city}\t${place.city}, ${place.country}`]),
    ...(place.region === null || place.region === place.city ? [] : [`r\t${place.region}\t${place.region}, ${place.country}`]),
    `n\t${place.country}\t${place.country}`,
  ]
}

const bump = <K>(map: Map<K, number>, key: K, by = 1): void => {
  map.set(key, (map.get(key) ?? 0) + by)
}

/** Counts over the items `matches` takes (all for null): by month in a flat array, by place object, camera and album, then keyed as suggest reads them. */
function countItems(items: readonly Item[], columns: Columns, matches: ((at: number) => boolean) | null): Totals {
  const monthly = new Int32Array((YEARS.max - YEARS.min + 1) * 12)
  const byPlace = new Map<Place, number>()
  const cameras = new Map<string, number>()
  const byAlbum = new Map<number, number>()
  const albumIds = new Map<number, string>()
  let favourites = 0
  let videos = 0
  let counted = 0
  for (let at = 0; at < items.length; at++) {
    if (matches !== null && !matches(at)) continue
    counted++
    const item = items[at]!
    if (item.year >= YEARS.min && item.year <= YEARS.max) monthly[(item.year - YEARS.min) * 12 + item.month - 1]!++
    if (item.place !== null) bump(byPlace, item.place)
    if (item.entry.camera !== null) bump(cameras, item.entry.camera)
    const album = columns.album[at]!
    if (!albumIds.has(album)) albumIds.set(album, item.entry.albumId)
    bump(byAlbum, album)
    const flags = columns.flags[at]!
    if ((flags & FAVOURITE) !== 0) favourites++
    if ((flags & VIDEO) !== 0) videos++
  }
  const years = new Map<number, number>()
  const months = new Map<number, number>()
  monthly.forEach((count, slot) => {
    if (count === 0) return
    const year = YEARS.min + Math.floor(slot / 12)
    bump(years, year, count)
    months.set(year * 100 + (slot % 12) + 1, count)
  })
  const places = new Map<string, number>()
  for (const [place, count] of byPlace) for (const key of placeKeysOf(place)) bump(places, key, count)
  const albums = new Map([...byAlbum].map(([album, count]) => [albumIds.get(album)!, count]))
  return { years, months, places, cameras, albums, favourites, videos, photos: counted - videos }
}

export type SuggestionKind = 'date' | 'place' | 'camera' | 'album' | 'favourites' | 'kind'

export interface Suggestion {
  readonly kind: SuggestionKind
  /** What to show: "July 2019", "Paris, France", "Canon EOS 5D", an album's name, "Favourites", "Videos". */
  readonly label: string
  /** The whole query with the word being typed completed: what the search box holds once it is chosen. */
  readonly text: string
  /** Photos it finds together with the rest of the query. */
  readonly count: number
  /** For an album: its id (a screen may filter by it rather than search its name). */
  readonly albumId?: string
}

export interface SuggestOptions extends Omit<SearchOptions, 'limit'> {
  /** Suggestions at most (6 unless given). */
  readonly limit?: number
}

/** Suggestions of one kind at most, so that one kind (a year's twelve months) does not fill the list. */
const PER_KIND = 3
const KIND_ORDER: readonly SuggestionKind[] = ['date', 'place', 'album', 'camera', 'favourites', 'kind']

/** Starts a word of `text` (folded): the partial word being typed. */
const startsAWord = (text: string, partial: string): boolean => ` ${words(text).join(' ')}`.includes(` ${partial}`)

/**
 * Completions of the word being typed (the last of `text`; none after a space), best first:
 * months and years the photos were taken in ("jul" July 2019, July 2018, July; "20" 2019, 2020;
 * "July 20" July 2019), places, cameras, albums, favourites, videos and photos, each with the
 * number of photos it finds together with the rest of the query, most first, at most `limit`.
 */
export function suggest(index: SearchIndex, albums: AlbumNames, text: string, options: SuggestOptions = {}): Suggestion[] {
  const typed = /(\S+)$/.exec(text)
  if (typed === null) return []
  let head = text.slice(0, typed.index)
  const partial = words(typed[1]!).join(' ')
  if (partial === '') return []
  // "July 20": the month is part of what is completed.
  const lastHeadWord = /(\S+)\s+$/.exec(head)
  const headMonth = /^\d+$/.test(partial) && lastHeadWord !== null ? monthOf(fold(lastHeadWord[1]!)) : 0
  if (headMonth > 0) head = head.slice(0, lastHeadWord!.index)
  const rest = parseQuery(head)
  const unfiltered = head.trim() === '' && options.albumId === undefined && options.exclude === undefined
  const matches = unfiltered ? null : matcher(index, rest, albums, options)
  const totals = matches === null ? totalsOf(index) : countItems(orderedOf(index), columnsOf(index), matches)
  const prefix = head.trim() === '' ? '' : `${head.trimEnd()} `
  // A completion that would read as something else (an album "Trip 2019": a date) goes in quotes.
  const literal = (completion: string): string => {
    const read = parseQuery(completion)
    return read.dates.length > 0 || read.favourites || read.kind !== null || read.words.length !== words(completion).length ? `"${completion}"` : completion
  }
  const found: Suggestion[] = []
  const add = (kind: SuggestionKind, label: string, completion: string, count: number, albumId?: string): void => {
    if (count > 0) found.push({ kind, label, text: `${prefix}${completion}`, count, ...(albumId === undefined ? {} : { albumId }) })
  }
  if (headMonth > 0) {
    for (const [key, count] of totals.months) {
      const year = Math.floor(key / 100)
      const label = pointLabel({ year, month: headMonth, day: null })
      if (key % 100 === headMonth && String(year).startsWith(partial)) add('date', label, label, count)
    }
  } else if (/^\d+$/.test(partial)) {
    for (const [year, count] of totals.years) if (String(year).startsWith(partial)) add('date', String(year), String(year), count)
  } else if (partial.length >= 2) {
    const months = MONTHS.map((name, at) => (name.startsWith(partial) ? at + 1 : 0)).filter((m) => m > 0)
    for (const m of months) {
      let any = 0
      for (const [key, count] of totals.months) {
        if (key % 100 !== m) continue
        any += count
        const label = pointLabel({ year: Math.floor(key / 100), month: m, day: null })
        add('date', label, label, count)
      }
      if (any > 0) add('date', `${MONTH_NAMES[m - 1]!} (every year)`, MONTH_NAMES[m - 1]!, any)
    }
  }
  for (const [key, count] of totals.places) {
    const [, name, label] = key.split('\t') as [string, string, string]
    if (startsAWord(name, partial)) add('place', label, literal(name), count)
  }
  for (const [camera, count] of totals.cameras) if (startsAWord(camera, partial)) add('camera', camera, literal(camera), count)
  for (const [albumId, count] of totals.albums) {
    const name = albums.get(albumId)
    if (name !== undefined && name !== null && startsAWord(name, partial)) add('album', name, literal(name), count, albumId)
  }
  if (partial.length >= 2 && ['favourites', 'favorites'].some((word) => word.startsWith(partial)))
    add('favourites', 'Favourites', 'favourites', totals.favourites)
  if (partial.length >= 2 && ['videos', 'movies'].some((word) => word.startsWith(partial))) add('kind', 'Videos', 'videos', totals.videos)
  if (partial.length >= 2 && ['photos', 'pictures'].some((word) => word.startsWith(partial))) add('kind', 'Photos', 'photos', totals.photos)
  found.sort((a, b) => b.count - a.count || KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind) || a.label.localeCompare(b.label))
  const perKind = new Map<SuggestionKind, number>()
  const chosen: Suggestion[] = []
  const seen = new Set<string>()
  for (const suggestion of found) {
    if (chosen.length >= (options.limit ?? 6)) break
    if ((perKind.get(suggestion.kind) ?? 0) >= PER_KIND || seen.has(suggestion.text)) continue
    perKind.set(suggestion.kind, (perKind.get(suggestion.kind) ?? 0) + 1)
    seen.add(suggestion.text)
    chosen.push(suggestion)
  }
  return chosen
}
