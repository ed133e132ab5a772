// The Photos screen's timeline (docs/decisions/0055-date-index-sealed-in-browser.md): every live
// photo of every album of the account, newest first by date taken (src/client/taken.ts), each
// with its day and month, as a TileSource the grid draws (Grid.tsx).
//
// Each album is an AlbumModel (lib/album.ts): it reads the album's feed and loads the tiles, in
// batches per album. The dates come from the date index (lib/date-index.ts): an album the index
// knows starts from it (its photos' positions and dates, the feed read on from where the index
// is current to), so a second opening orders everything at once and opens only what changed
// since. What the index lacks (a new or replaced photo) has its metadata opened here, a feed
// page at a time in the gallery's workers (AlbumModel.openEntries), which also keeps them for
// the tiles; the index is written as the dates come in, and once all are read.
//
// A photo in several albums (copied, decision 0061) is one original: it is placed once, under the
// first album that holds it, and albumsOf names every album that does. The Favourites screen is
// the same timeline, its favourites only.
import { cameraText, kindOf } from '#photos/search.ts'
import { metadataTaken } from '#photos/taken.ts'
import type { DatedAsset, Library } from '#photos/albums.ts'
import { linkTo } from '../app/router.ts'
import { AlbumModel, type Entry, type Tile } from './album.ts'
import { readDateIndex, writeDateIndex } from './date-index.ts'
import { AlbumDates, type DatedPhoto } from './date-index-records.ts'
import { dayOf, monthOfDay } from './format.ts'
import { byDateTaken, dayOfTaken, type Placed } from './timeline-order.ts'
import { trashedNow } from './trash.ts'

/** Metadata opened together while reading dates: about what the batch endpoint serves in one request. */
const OPEN_BATCH = 100
/** The order is made again at most this often while dates come in. */
const REORDER_MS = 300
/** While dates come in, the index is written at most this often. */
const WRITE_MS = 5000

const LOADING: Tile = { kind: 'loading' }

interface TimelineAlbum {
  readonly model: AlbumModel
  readonly dates: AlbumDates
  /** Photos whose metadata did not open (withheld, refused): placed at their upload time, read again at the next opening. */
  readonly unread: Map<string, Placed>
}

export interface Progress {
  /** Dates read (metadata opened) in this opening. */
  readonly read: number
  /** Photos found without a date in the index so far, those read included. */
  readonly toRead: number
}

export interface TimelineOptions {
  /** Only the photos marked favourite (the Favourites screen); every photo unless given. */
  readonly favourites?: boolean
  /** Only the photos a search found (the Search screen: setFound); every photo unless given. */
  readonly search?: boolean
}

export class Timeline {
  /** TileSource's: the timeline has no album of its own (tiles lead through hrefOf). */
  readonly albumId = ''
  readonly library: Library
  /** The screen's route: its photos open under it (the Search screen's, under its query too). */
  readonly route: 'photos' | 'favourites' | 'search'
  /** The Search screen's query and the photos it found (setFound): only those are placed. */
  #query = ''
  #found: ReadonlySet<string> = new Set()
  /** Each original placed (its hash): the albums' photos that are it, the one shown first. */
  #holders = new Map<string, { readonly albumId: string; readonly assetId: string }[]>()
  /** Each photo placed: its original's hash ('' when not known). */
  #originalOf = new Map<string, string>()
  readonly #albums = new Map<string, TimelineAlbum>()
  /** Each photo's album. */
  readonly #albumOf = new Map<string, string>()
  #ids: readonly string[] = []
  /** Photos left out of ids: a delete waiting for its undo window. */
  readonly #hidden = new Set<string>()
  /** The photos in Recently deleted (lib/trash.ts): left out. */
  #trashed: ReadonlySet<string> = new Set()
  #months = new Int32Array(0)
  #days = new Int32Array(0)
  #read = 0
  #toRead = 0
  #progress: Progress = { read: 0, toRead: 0 }
  #opened = false
  #done = false
  #error: unknown = null
  #closed = false
  #reorderTimer: ReturnType<typeof setTimeout> | null = null
  #lastReorder = 0
  #lastWrite = 0
  /** Feed pages and albums gone seen so far: a read that saw none changed nothing. */
  #moves = 0
  #refreshing: Promise<void> = Promise.resolve()
  readonly #listeners = new Set<() => void>()

  constructor(library: Library, options: TimelineOptions = {}) {
    this.library = library
    this.route = options.search === true ? 'search' : options.favourites === true ? 'favourites' : 'photos'
  }

  /** The Search screen's route parts: its query after 'search'. */
  get routeParts(): readonly string[] {
    return this.route === 'search' && this.#query !== '' ? ['search', this.#query] : [this.route]
  }

  /** The Search screen: the photos `query` found, the only ones placed from now on. */
  setFound(query: string, found: ReadonlySet<string>): void {
    this.#query = query
    this.#found = found
    this.#reorder()
    this.#tell()
  }

  /** Every photo whose date was read, with its album (those in Recently deleted left out): what search indexes. */
  *dated(): Iterable<readonly [albumId: string, photo: DatedPhoto]> {
    for (const [albumId, { dates }] of this.#albums) for (const photo of dates.photos()) if (!this.#trashed.has(photo.assetId)) yield [albumId, photo]
  }

  /** The albums' names as read from their records so far (null: unnamed or not read). */
  albumNames(): Map<string, string | null> {
    return new Map([...this.#albums].map(([albumId, { model }]) => [albumId, model.name ?? null] as const))
  }

  /** The photos, newest first. */
  get ids(): readonly string[] {
    return this.#ids
  }

  /** Each photo's month (lib/format.ts monthOf's numbering), same index as ids. */
  get months(): Int32Array {
    return this.#months
  }

  /** Each photo's day (lib/format.ts dayOf), same index as ids. */
  get days(): Int32Array {
    return this.#days
  }

  get progress(): Progress {
    return this.#progress
  }

  /** True once the index was read (what it knows is in ids). */
  get opened(): boolean {
    return this.#opened
  }

  /** True once every album's feed was read and every date found. */
  get done(): boolean {
    return this.#done
  }

  get error(): unknown {
    return this.#error
  }

  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  #tell(): void {
    for (const listener of this.#listeners) listener()
  }

  /** Reads the index, shows what it knows, then reads every album's feed on from there. */
  open(): Promise<void> {
    this.#refreshing = this.#refreshing.then(async () => {
      try {
        const [{ albums }, kept, trashed] = await Promise.all([this.library.client.listAlbums(), readDateIndex(), trashedNow(this.library)])
        if (this.#closed) return
        this.#trashed = trashed
        for (const { album_id: albumId } of albums) if (!this.#albums.has(albumId)) this.#add(albumId, kept.get(albumId))
        this.#reorder()
        this.#opened = true
        this.#tell()
        await this.#readAll(new Set(albums.map((album) => album.album_id)))
      } catch (error) {
        this.#error = error
        this.#tell()
      }
    })
    return this.#refreshing
  }

  /** Reads what every album's feed gained since (new albums too). */
  refresh(): Promise<void> {
    this.#refreshing = this.#refreshing.then(async () => {
      try {
        const { albums } = await this.library.client.listAlbums()
        if (this.#closed) return
        for (const { album_id: albumId } of albums) if (!this.#albums.has(albumId)) this.#add(albumId, undefined)
        await this.#readAll(new Set(albums.map((album) => album.album_id)))
      } catch (error) {
        this.#error = error
        this.#tell()
      }
    })
    return this.#refreshing
  }

  #add(albumId: string, kept: AlbumDates | undefined): void {
    const dates = kept ?? new AlbumDates()
    const unread = new Map<string, Placed>()
    const positions = function* (): Iterable<readonly [string, number]> {
      for (const photo of dates.photos()) yield [photo.assetId, photo.seq]
    }
    const model = new AlbumModel(this.library, albumId, {
      ...(kept === undefined ? {} : { start: { through: kept.through, positions: positions() } }),
      onPage: (entries, through) => this.#page(albumId, entries, through),
    })
    for (const photo of dates.photos()) this.#albumOf.set(photo.assetId, albumId)
    this.#albums.set(albumId, { model, dates, unread })
  }

  async #readAll(live: ReadonlySet<string>): Promise<void> {
    const movesBefore = this.#moves
    for (const [albumId, album] of this.#albums) {
      if (live.has(albumId)) continue
      // An album gone from the account (deleted on another device): its photos go.
      for (const photo of album.dates.photos()) this.#albumOf.delete(photo.assetId)
      for (const assetId of album.unread.keys()) this.#albumOf.delete(assetId)
      album.model.close()
      this.#albums.delete(albumId)
      this.#moves++
    }
    // Two albums at a time: one's metadata decrypts while the other's feed is read.
    const queue = [...this.#albums.values()]
    const next = async (): Promise<void> => {
      for (let album = queue.shift(); album !== undefined && !this.#closed; album = queue.shift()) {
        await album.model.refresh()
        if (album.model.scanError !== null) this.#error = album.model.scanError
      }
    }
    await Promise.all([next(), next()])
    if (this.#closed) return
    // The albums' scans read it just now: the same list.
    const trashed = await trashedNow(this.library)
    if (trashed.size !== this.#trashed.size || [...trashed].some((id) => !this.#trashed.has(id))) {
      this.#trashed = trashed
      this.#moves++
    }
    // A poll that found nothing new changes nothing: no new order, so no new layout and no rows drawn again mid-scroll.
    if (this.#done && this.#moves === movesBefore) return
    this.#done = true
    this.#reorder()
    this.#tell()
    await this.#write(live)
  }

  /** A feed page of an album: deleted photos go, those the index holds at this version move, the others have their dates read. */
  async #page(albumId: string, entries: readonly Entry[], through: number): Promise<void> {
    const album = this.#albums.get(albumId)
    if (album === undefined || this.#closed) return
    this.#moves++
    const { dates, model, unread } = album
    const toOpen: Entry[] = []
    for (const entry of entries) {
      unread.delete(entry.asset_id)
      if (entry.action === 'delete') {
        dates.remove(entry.asset_id)
        this.#albumOf.delete(entry.asset_id)
        continue
      }
      this.#albumOf.set(entry.asset_id, albumId)
      const held = dates.get(entry.asset_id)
      if (held !== undefined && held.version === (entry.metadata_blob_hash ?? '')) dates.put({ ...held, seq: entry.sync_seq })
      else {
        // Placed at its upload time until its date is read (shown among the photos found so far).
        unread.set(entry.asset_id, { assetId: entry.asset_id, day: dayOf(Date.parse(entry.applied_at)), at: Date.parse(entry.applied_at) })
        toOpen.push(entry)
      }
    }
    this.#toRead += toOpen.length
    this.#changed()
    for (let i = 0; i < toOpen.length && !this.#closed; i += OPEN_BATCH) {
      const batch = toOpen.slice(i, i + OPEN_BATCH)
      const opened = await model.openEntries(batch)
      batch.forEach((entry, k) => {
        const result = opened[k]!
        if (result.status === 'rejected') return // left unread: placed at its upload time, read again next time
        const taken = metadataTaken(result.value.metadata, result.value.envelope.timestamp)
        unread.delete(entry.asset_id)
        dates.put({
          assetId: entry.asset_id,
          seq: entry.sync_seq,
          version: entry.metadata_blob_hash ?? '',
          at: taken.at,
          local: taken.local,
          source: taken.source,
          original: result.value.envelope.ciphertext_hash,
          favourite: result.value.metadata.favourite === true,
          name: result.value.metadata.name,
          camera: cameraText(result.value.metadata.camera),
          place: result.value.metadata.location ?? null,
          video: kindOf(result.value.metadata.type) === 'video',
          description: result.value.metadata.description ?? null,
        } satisfies DatedPhoto)
      })
      this.#read += batch.length
      this.#changed()
    }
    dates.through = through
    if (!this.#closed && performance.now() - this.#lastWrite > WRITE_MS) await this.#write(null)
  }

  async #write(live: ReadonlySet<string> | null): Promise<void> {
    this.#lastWrite = performance.now()
    const albums = new Map([...this.#albums].map(([albumId, album]) => [albumId, album.dates] as const))
    // A write that fails (signed out meanwhile, the storage full) loses what it carried: those dates are read again next time.
    await writeDateIndex(albums, live).catch(() => {})
  }

  /** The order is made again soon (at most every REORDER_MS while dates come in). */
  #changed(): void {
    this.#progress = { read: this.#read, toRead: this.#toRead }
    if (this.#reorderTimer !== null) return
    const wait = Math.max(0, this.#lastReorder + REORDER_MS - performance.now())
    this.#reorderTimer = setTimeout(() => {
      this.#reorderTimer = null
      if (this.#closed) return
      this.#reorder()
      this.#tell()
    }, wait)
  }

  /** Every photo placed, newest first: each original once (its other albums' photos are its holders). */
  #reorder(): void {
    this.#lastReorder = performance.now()
    const placed: Placed[] = []
    const holders = new Map<string, { albumId: string; assetId: string }[]>()
    const originalOf = new Map<string, string>()
    const favourites = this.route === 'favourites'
    const searching = this.route === 'search'
    for (const [albumId, { dates, unread }] of this.#albums) {
      for (const photo of dates.photos()) {
        // In Recently deleted, or hidden while its delete is sent: a copy in another album may still place the original.
        if (
          (favourites && !photo.favourite) ||
          (searching && !this.#found.has(photo.assetId)) ||
          this.#trashed.has(photo.assetId) ||
          this.#hidden.has(photo.assetId)
        )
          continue
        const held = photo.original === '' ? undefined : holders.get(photo.original)
        originalOf.set(photo.assetId, photo.original)
        if (held !== undefined) {
          held.push({ albumId, assetId: photo.assetId })
          continue
        }
        if (photo.original !== '') holders.set(photo.original, [{ albumId, assetId: photo.assetId }])
        placed.push({ assetId: photo.assetId, day: dayOfTaken(photo.at, photo.local), at: photo.at })
      }
      // Not read yet: its favourite mark and original are not known, nor what a search would find in it.
      if (!favourites && !searching)
        for (const photo of unread.values()) if (!this.#trashed.has(photo.assetId) && !this.#hidden.has(photo.assetId)) placed.push(photo)
    }
    this.#holders = holders
    this.#originalOf = originalOf
    placed.sort(byDateTaken)
    this.#ids = placed.map((photo) => photo.assetId)
    this.#days = Int32Array.from(placed, (photo) => photo.day)
    this.#months = this.#days.map(monthOfDay)
  }

  /** An album's photos with their dates taken (the wall clock, else the moment) as known so far: one not read yet at its upload time. */
  datedPhotos(albumId: string): DatedAsset[] {
    const album = this.#albums.get(albumId)
    if (album === undefined) return []
    const photos: DatedAsset[] = []
    for (const photo of album.dates.photos()) photos.push({ assetId: photo.assetId, taken: photo.local ?? photo.at })
    for (const photo of album.unread.values()) photos.push({ assetId: photo.assetId, taken: photo.at })
    return photos
  }

  /** Leaves photos out of ids (a delete waiting for its undo window), or puts them back. */
  hide(assetIds: readonly string[], hidden: boolean): void {
    for (const id of assetIds) {
      if (hidden) this.#hidden.add(id)
      else this.#hidden.delete(id)
    }
    this.#reorder()
    this.#tell()
  }

  /** The album a photo is in, or undefined. */
  albumOf(assetId: string): string | undefined {
    return this.#albumOf.get(assetId)
  }

  /** The albums that hold this photo (its original), the one it is shown from first; [its album] when only one does, [] when it is not placed. */
  albumsOf(assetId: string): readonly string[] {
    const original = this.#originalOf.get(assetId)
    const held = original === undefined || original === '' ? undefined : this.#holders.get(original)
    if (held !== undefined) return held.map((holder) => holder.albumId)
    const albumId = this.#albumOf.get(assetId)
    return albumId === undefined ? [] : [albumId]
  }

  /** The album's model (its photo view opens through it). */
  modelOf(albumId: string): AlbumModel | undefined {
    return this.#albums.get(albumId)?.model
  }

  /** The photo before or after this one on the timeline, or null at either end. */
  neighbour(assetId: string, step: -1 | 1): string | null {
    const index = this.#ids.indexOf(assetId)
    return index < 0 ? null : (this.#ids[index + step] ?? null)
  }

  // --- TileSource ---------------------------------------------------------------------------

  tile(assetId: string): Tile {
    const albumId = this.#albumOf.get(assetId)
    return albumId === undefined ? LOADING : (this.#albums.get(albumId)?.model.tile(assetId) ?? LOADING)
  }

  watch(assetId: string, listener: (tile: Tile) => void, ahead = false): () => void {
    const albumId = this.#albumOf.get(assetId)
    const model = albumId === undefined ? undefined : this.#albums.get(albumId)?.model
    return model === undefined ? () => {} : model.watch(assetId, listener, ahead)
  }

  hrefOf(assetId: string): string {
    const albumId = this.#albumOf.get(assetId)
    return albumId === undefined ? linkTo(...this.routeParts) : linkTo(...this.routeParts, albumId, assetId)
  }

  /** Ends the timeline: every album's model closed, nothing more read. */
  close(): void {
    this.#closed = true
    if (this.#reorderTimer !== null) clearTimeout(this.#reorderTimer)
    for (const { model } of this.#albums.values()) model.close()
    this.#listeners.clear()
  }
}
