// The date index's records (lib/date-index.ts keeps them in IndexedDB;
// docs/decisions/0055-date-index-sealed-in-browser.md). Pure: no IndexedDB here, so Node (the
// tests) encodes, seals, opens and updates with the same code.
//
// What it keeps, per album: the feed position it is current to (`through`), and for each live
// photo its asset id, its feed position (sync_seq: a tile opens from it without the whole feed
// read), its version (the metadata blob hash: a later entry of the same version needs no second
// opening), its date taken (src/client/taken.ts: `at`, the wall-clock `local` when known,
// and the source), its original's hash (a photo in two albums is one original: the Photos
// screen shows it once), its favourite mark, and what search needs of it (lib/search-screen.ts;
// decision 0070): its name, its camera, its place when its metadata has one, and whether it is a
// video. No thumbnail.
//
// - The directory ('directory', sealed under the name `dates`): JSON, {v: 1, albums: {<album
//   id>: {through, chunks: [[record key, count], ...]}}}.
// - A chunk (a random record key, sealed under the name `dates/<key>`): up to CHUNK photos of one
//   album, in the binary layout of encodeChunk below. An album's photos fill its chunks in the
//   order they were read; a photo replaced or deleted leaves its chunk (written again), a new or
//   replaced one joins the album's last chunk. So a feed page's worth of changes seals one or two
//   chunks again, not the album's every date; a million photos are 200 chunks of about 400 KB.
import { randomBytes, uuidBytes } from '#photos/format/bytes.ts'
import { fromHex, toHex } from '#sdk/bytes.ts'
import type { GeoLocation } from '#photos/format/metadata.ts'
import type { TakenSource } from '#photos/taken.ts'
import { decodedValue, encodedValue, type Sealed } from './sealed.ts'
import type { Open, Seal } from './photo-index-records.ts'

export type { Open, Seal }

/** A photo's date as the index keeps it, and what search reads of it. */
export interface DatedPhoto {
  readonly assetId: string
  /** The feed position of its latest entry. */
  readonly seq: number
  /** The metadata blob hash of that entry (64 hex digits), or '' when it has none. */
  readonly version: string
  /** The date taken, ms since the epoch (taken.ts `at`). */
  readonly at: number
  /** The wall clock the photo was taken at, as if it were UTC (taken.ts `local`): what it is grouped by; null in none written today. */
  readonly local: number | null
  readonly source: TakenSource
  /** The original's ciphertext hash (64 hex digits; the envelope's ciphertext_hash), or '' when not known. */
  readonly original: string
  /** The metadata marks it a favourite. */
  readonly favourite: boolean
  /** Its name as stored ("trip/IMG_0001.jpg"). */
  readonly name: string
  /** Make and model as one text (src/client/search.ts cameraText), or null. */
  readonly camera: string | null
  /** Where it was taken, when its metadata says (only coffer-photos records it, and only when asked). */
  readonly place: GeoLocation | null
  readonly video: boolean
  /** The person's caption (metadata version 5: an import's), or null. */
  readonly description: string | null
}

/** Photos a chunk holds at most. */
export const CHUNK = 5000
export const DIRECTORY = 'directory'
const DIRECTORY_NAME = 'dates'
const chunkName = (key: string): string => `dates/${key}`
// 2: each photo's original and favourite mark (decision 0061); 3: its name, camera, place and
// kind, for search (decision 0070); 4: its description, for search. An index of an earlier
// format is read again from the feeds.
const FORMAT = 4

/** The sources by their code in a chunk: never reordered, only appended to. */
export const SOURCES: readonly TakenSource[] = ['exif-original', 'exif-digitized', 'exif-modified', 'gps', 'exif', 'file-name', 'file-modified', 'uploaded']

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const HASH = /^[0-9a-f]{64}$/
const encoder = new TextEncoder()
const decoder = new TextDecoder()
/** A photo's flags byte. */
const FAVOURITE = 1
const VIDEO = 2
const PLACE = 4
/** An id's kind byte: a UUID as its 16 bytes; otherwise its UTF-8 length (1 to 255) and bytes. */
const ID_UUID = 0

function uuidText(bytes: Uint8Array): string {
  const hex = toHex(bytes)
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/**
 * A chunk's plaintext: format (1 byte, FORMAT), count (u32, big-endian), then each photo:
 *   id      kind (1 byte: 0, then the UUID's 16 bytes; n in 1..255, then n bytes of UTF-8)
 *   seq     f64 (big-endian, as every number here)
 *   version length (1 byte: 32, or 0 for none), then the hash's bytes
 *   at      f64
 *   local   f64 (NaN: none)
 *   source  1 byte, its index in SOURCES
 *   original length (1 byte: 32, or 0 for none), then the hash's bytes
 *   flags   1 byte: 1 for a favourite, 2 for a video, 4 when a place follows
 *   name    length (u16), then its UTF-8
 *   camera  length (u16, 0 for none), then its UTF-8
 *   place   (when flagged) latitude, longitude: f64 each
 *   description length (u16, 0 for none), then its UTF-8 (at most 4,096 code units: 12 KiB)
 * About 140 bytes a photo, and its caption.
 */
export function encodeChunk(photos: Iterable<DatedPhoto>): Uint8Array {
  const list = [...photos]
  const parts: Uint8Array[] = []
  let size = 5
  for (const photo of list) {
    const id = UUID.test(photo.assetId) ? uuidBytes(photo.assetId) : new TextEncoder().encode(photo.assetId)
    if (!UUID.test(photo.assetId) && (id.length === 0 || id.length > 255)) throw new Error(`an asset id the date index cannot keep: ${photo.assetId}`)
    const version = HASH.test(photo.version) ? fromHex(photo.version) : new Uint8Array(0)
    const source = SOURCES.indexOf(photo.source)
    if (source < 0) throw new Error(`a date source the date index does not know: ${photo.source}`)
    const original = HASH.test(photo.original) ? fromHex(photo.original) : new Uint8Array(0)
    const name = encoder.encode(photo.name)
    const camera = encoder.encode(photo.camera ?? '')
    const description = encoder.encode(photo.description ?? '')
    if (name.length > 0xffff || camera.length > 0xffff || description.length > 0xffff)
      throw new Error('a name, camera or description the date index cannot keep')
    const part = new Uint8Array(
      1 +
        (UUID.test(photo.assetId) ? 16 : id.length) +
        8 +
        1 +
        version.length +
        8 +
        8 +
        1 +
        1 +
        original.length +
        1 +
        2 +
        name.length +
        2 +
        camera.length +
        (photo.place === null ? 0 : 16) +
        2 +
        description.length,
    )
    const view = new DataView(part.buffer)
    let at = 0
    part[at++] = UUID.test(photo.assetId) ? ID_UUID : id.length
    part.set(id, at)
    at += id.length
    view.setFloat64(at, photo.seq)
    at += 8
    part[at++] = version.length
    part.set(version, at)
    at += version.length
    view.setFloat64(at, photo.at)
    at += 8
    view.setFloat64(at, photo.local ?? Number.NaN)
    at += 8
    part[at++] = source
    part[at++] = original.length
    part.set(original, at)
    at += original.length
    part[at++] = (photo.favourite ? FAVOURITE : 0) | (photo.video ? VIDEO : 0) | (photo.place === null ? 0 : PLACE)
    view.setUint16(at, name.length)
    part.set(name, at + 2)
    at += 2 + name.length
    view.setUint16(at, camera.length)
    part.set(camera, at + 2)
    at += 2 + camera.length
    if (photo.place !== null) {
      view.setFloat64(at, photo.place.latitude)
      view.setFloat64(at + 8, photo.place.longitude)
      at += 16
    }
    view.setUint16(at, description.length)
    part.set(description, at + 2)
    parts.push(part)
    size += part.length
  }
  const out = new Uint8Array(size)
  out[0] = FORMAT
  new DataView(out.buffer).setUint32(1, list.length)
  let at = 5
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}

/** The photos of a chunk's plaintext; throws on a format it does not know or bytes cut short. */
export function decodeChunk(bytes: Uint8Array): DatedPhoto[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (bytes[0] !== FORMAT) throw new Error(`a date index chunk of an unknown format: ${bytes[0]}`)
  const count = view.getUint32(1)
  const photos: DatedPhoto[] = []
  let at = 5
  const take = (n: number): Uint8Array => {
    if (at + n > bytes.length) throw new Error('a date index chunk cut short')
    const part = bytes.subarray(at, at + n)
    at += n
    return part
  }
  const number = (): number => {
    take(8)
    return view.getFloat64(at - 8)
  }
  const text = (): string => {
    take(2)
    return decoder.decode(take(view.getUint16(at - 2)))
  }
  for (let i = 0; i < count; i++) {
    const kind = take(1)[0]!
    const assetId = kind === ID_UUID ? uuidText(take(16)) : new TextDecoder().decode(take(kind))
    const seq = number()
    const version = toHex(take(take(1)[0]!))
    const taken = number()
    const local = number()
    const source = SOURCES[take(1)[0]!]
    if (source === undefined) throw new Error('a date index chunk with an unknown date source')
    const original = toHex(take(take(1)[0]!))
    const flags = take(1)[0]!
    const name = text()
    const camera = text()
    const place = (flags & PLACE) === 0 ? null : { latitude: number(), longitude: number() }
    const description = text()
    photos.push({
      assetId,
      seq,
      version,
      at: taken,
      local: Number.isNaN(local) ? null : local,
      source,
      original,
      favourite: (flags & FAVOURITE) !== 0,
      name,
      camera: camera === '' ? null : camera,
      place,
      video: (flags & VIDEO) !== 0,
      description: description === '' ? null : description,
    })
  }
  if (at !== bytes.length) throw new Error('a date index chunk with bytes after its photos')
  return photos
}

export const sealChunk = (seal: Seal, key: string, photos: Iterable<DatedPhoto>): Promise<Sealed> => seal(chunkName(key), encodeChunk(photos))

/** A chunk's photos; null when it does not open (another sign-in's key, another key's record, altered). */
export async function openChunk(open: Open, key: string, sealed: Sealed): Promise<DatedPhoto[] | null> {
  const plaintext = await open(chunkName(key), sealed)
  return plaintext === null ? null : decodeChunk(plaintext)
}

/** An album in the directory: the feed position its dates are current to, and its chunks with how many photos each holds. */
export interface ListedAlbum {
  readonly through: number
  readonly chunks: readonly (readonly [key: string, count: number])[]
}

export type Directory = ReadonlyMap<string, ListedAlbum>

export const sealDirectory = (seal: Seal, directory: Directory): Promise<Sealed> =>
  seal(DIRECTORY_NAME, encodedValue({ v: FORMAT, albums: Object.fromEntries(directory) }))

/** The directory; null when it does not open (sealed under an ended sign-in) or is of an unknown format. */
export async function openDirectory(open: Open, sealed: Sealed): Promise<Map<string, ListedAlbum> | null> {
  const plaintext = await open(DIRECTORY_NAME, sealed)
  if (plaintext === null) return null
  const value = decodedValue<{ v: number; albums: Record<string, ListedAlbum> }>(plaintext)
  return value.v === FORMAT ? new Map(Object.entries(value.albums)) : null
}

/** A new record key: 16 random bytes in hex. */
export const newChunkKey = (): string => toHex(randomBytes(16))

interface Chunk {
  readonly key: string
  readonly photos: Map<string, DatedPhoto>
}

/**
 * One album's dates in memory, as chunks: what changed since the last write is known, so a write
 * seals only the chunks that changed (and the directory).
 */
export class AlbumDates {
  through: number
  readonly #chunks: Chunk[] = []
  readonly #chunkOf = new Map<string, Chunk>()
  readonly #dirty = new Set<Chunk>()
  /** Chunks emptied since the last write: their records go. */
  #emptied: string[] = []
  readonly #capacity: number

  constructor(through = 0, chunks: readonly (readonly [key: string, photos: readonly DatedPhoto[]])[] = [], capacity = CHUNK) {
    this.through = through
    this.#capacity = capacity
    for (const [key, photos] of chunks) {
      const chunk: Chunk = { key, photos: new Map(photos.map((p) => [p.assetId, p])) }
      this.#chunks.push(chunk)
      for (const assetId of chunk.photos.keys()) this.#chunkOf.set(assetId, chunk)
    }
  }

  get size(): number {
    return this.#chunkOf.size
  }

  get(assetId: string): DatedPhoto | undefined {
    return this.#chunkOf.get(assetId)?.photos.get(assetId)
  }

  *photos(): Iterable<DatedPhoto> {
    for (const chunk of this.#chunks) yield* chunk.photos.values()
  }

  /** A photo at its latest position: in place when only its position moved, else moved to the last chunk. */
  put(photo: DatedPhoto): void {
    const held = this.#chunkOf.get(photo.assetId)
    if (held !== undefined && held.photos.get(photo.assetId)?.version === photo.version) {
      held.photos.set(photo.assetId, photo)
      this.#dirty.add(held)
      return
    }
    if (held !== undefined) this.remove(photo.assetId)
    let last = this.#chunks.at(-1)
    if (last === undefined || last.photos.size >= this.#capacity) {
      last = { key: newChunkKey(), photos: new Map() }
      this.#chunks.push(last)
    }
    last.photos.set(photo.assetId, photo)
    this.#chunkOf.set(photo.assetId, last)
    this.#dirty.add(last)
  }

  remove(assetId: string): void {
    const chunk = this.#chunkOf.get(assetId)
    if (chunk === undefined) return
    chunk.photos.delete(assetId)
    this.#chunkOf.delete(assetId)
    if (chunk.photos.size > 0) {
      this.#dirty.add(chunk)
      return
    }
    this.#chunks.splice(this.#chunks.indexOf(chunk), 1)
    this.#dirty.delete(chunk)
    this.#emptied.push(chunk.key)
  }

  /** The directory's entry for the album as it now is. */
  listed(): ListedAlbum {
    return { through: this.through, chunks: this.#chunks.map((chunk) => [chunk.key, chunk.photos.size] as const) }
  }

  /** What a write seals (the chunks changed since the last one) and deletes (the chunks emptied); forgotten as taken. */
  takeChanges(): { readonly changed: readonly (readonly [key: string, photos: readonly DatedPhoto[]])[]; readonly emptied: readonly string[] } {
    const changed = [...this.#dirty].map((chunk) => [chunk.key, [...chunk.photos.values()]] as const)
    const emptied = this.#emptied
    this.#dirty.clear()
    this.#emptied = []
    return { changed, emptied }
  }
}
