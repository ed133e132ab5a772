// One album as the gallery shows it (docs/decisions/0020-web-app.md, "The gallery"). What is
// held is bounded whatever the album's size:
// - the order of its live photos: each asset's id and latest feed position, read page by page
//   from the feed (a delete removes an asset, a replace moves it to where it was rewritten);
// - a window of feed entries (their manifests): the last ones read, and the aligned windows of
//   positions read again when a tile scrolled into view needs one;
// - an LRU of opened assets (metadata and file key) and one of decrypted thumbnails as object
//   URLs, revoked when they fall out and when the album closes.
// The page fetches; the workers (lib/pool.ts) check signatures and decrypt. The screen comes
// first: its tiles top to bottom, then the rows drawn ahead, then the feed's next page. Tiles
// load in batches (docs/decisions/0029-blob-batches.md): their metadata blobs in one request,
// then their thumbnails in one, each tile showing a placeholder until its thumbnail is drawn.
// Each photo opened with its thumbnail is handed to the photo index (lib/photo-index.ts), which
// keeps its name and thumbnail sealed for the moderation record, should it be taken down.
import { toHex } from '#sdk/bytes.ts'
import { CofferProblem, type BlobRefusal, type CofferClient, type DownloadedBlobs, type Feed } from '#sdk/client.ts'
import { albumRecordId, recordOf, STREAM_PAGE, type AlbumRecord, type Library } from '#photos/albums.ts'
import { derivativeBlob, type OpenedAsset } from '#photos/files.ts'
import type { AlbumKeys, SharedKeys } from './album-keys.ts'
import { AlbumTamperedError } from '#photos/tampering.ts'
import { Lru } from './lru.ts'
import { rememberPhoto } from './photo-index.ts'
import { inWorker, transfer, warmPool } from './pool.ts'
import { monthOf } from './format.ts'
import { trashedNow } from './trash.ts'

export type Entry = Feed['entries'][number]

/**
 * Where the check of the album's history stands (src/client/history.ts; docs/decisions/0065-album-chain.md):
 * not yet made, passed, or the server found rewriting it. A check that could not finish (the
 * network) stays `checking` and is made again at the next opening: it is never a warning.
 */
export type HistoryState =
  | { readonly state: 'checking' }
  | { readonly state: 'trusted'; readonly entries: number }
  | { readonly state: 'tampered'; readonly error: AlbumTamperedError }

/** How an album starts when its order is already known (the Photos screen's date index, lib/timeline.ts), and who reads its feed pages. */
export interface AlbumStart {
  /** The feed position the known order is current to: the scan reads on from there. */
  readonly through: number
  /** Each live asset's latest feed position, in feed order. */
  readonly positions: Iterable<readonly [assetId: string, seq: number]>
}

export interface AlbumOptions {
  readonly start?: AlbumStart
  /**
   * Told each feed page's entries of photos (the album's record left out) once the order holds
   * them, before the next page is read; the scan waits for it. `through`: the page's last position.
   */
  readonly onPage?: (entries: readonly Entry[], through: number) => Promise<void>
  /**
   * Check the album's history once its feed was read (the album page: it warns). The Photos
   * screen's models do not: it would verify every photo's signature of every album at its first
   * opening, in the workers its thumbnails need, with nowhere to say what it found.
   */
  readonly checkHistory?: boolean
  /** An album others write into or shared with this account: the keys its assets open with besides the account's own (lib/sharing.ts). */
  readonly shared?: SharedKeys
}

/**
 * An album read through a public link (the link page, web/src/link): its client in link mode,
 * the keys of its envelope, the record it leaves out and the name it states. Nothing of an
 * account: no trash, no history check, no photo index.
 */
export interface LinkedAlbum {
  readonly client: CofferClient
  readonly keys: AlbumKeys
  readonly recordId: string | null
  readonly name: string
}

export type Tile =
  | { readonly kind: 'loading' }
  /** Opened (its name known), its thumbnail still on the way. */
  | { readonly kind: 'opened'; readonly asset: OpenedAsset }
  /** `thumbnail` is an object URL, or null when the asset has no thumbnail. */
  | { readonly kind: 'ready'; readonly asset: OpenedAsset; readonly thumbnail: string | null }
  | { readonly kind: 'withheld' }
  | { readonly kind: 'failed'; readonly error: unknown }

/** A blob a batch answered without its bytes, with the code the single download would have answered. */
class RefusedBlob extends Error {
  readonly code: string
  constructor(refusal: BlobRefusal) {
    super(
      refusal.code === 'error.moderation.taken_down'
        ? 'This photo was taken down by the operator and cannot be shown.'
        : 'This photo is no longer in the album.',
    )
    this.code = refusal.code
  }
}

/** The operator took the asset down: its blobs answer 451. */
export const takenDown = (error: unknown): boolean =>
  (error instanceof CofferProblem || error instanceof RefusedBlob) && error.code === 'error.moderation.taken_down'

/**
 * Feed entries asked for when a visible tile's entry is no longer held: the window of positions
 * it falls in (aligned, so that the tiles around it share the read).
 */
const WINDOW = 64
/**
 * Tiles loaded together: their metadata blobs in one request, then their thumbnails in one. A
 * screen at desktop width holds about this many.
 */
const BATCH_TILES = 48
/** Batches loading at once: the next screen's requests go while the last one's blobs decrypt. */
const BATCHES = 2
/**
 * The feed's next page waits for the tiles on screen to load, for at most this long: the first
 * screen's requests and work go first, and the scan still moves on while someone keeps scrolling.
 */
const SCAN_YIELD_MS = 1000
/** Feed entries (manifests) held: a few screens' worth. */
const ENTRIES_HELD = 512
/** Opened assets (metadata and file key, about 1 KiB each) held. */
const OPENED_HELD = 2000
/** Tiles held, their thumbnails' object URLs included: several screens' worth, so a scroll back finds them. */
const THUMBNAILS_HELD = 400

const LOADING: Tile = { kind: 'loading' }

const failedTile = (error: unknown): Tile => (takenDown(error) ? { kind: 'withheld' } : { kind: 'failed', error })

/** The hash of an entry's metadata blob. */
function metadataHashOf(entry: Entry): string {
  if (entry.metadata_blob_hash === undefined) throw new Error('This photo has no metadata to open.')
  return entry.metadata_blob_hash
}

/** A blob of a batch download, or its refusal as an error. */
function blobOf(got: DownloadedBlobs, hash: string): Uint8Array {
  const bytes = got.blobs.get(hash)
  if (bytes === undefined) throw new RefusedBlob(got.refused.get(hash) ?? { status: 404, code: 'error.not_found' })
  return bytes
}

/** The hash of an opened asset's thumbnail, or null when it has none. */
function thumbnailHashOf(asset: OpenedAsset): string | null {
  const thumbnail = derivativeBlob(asset, 'thumbnail')
  return thumbnail === undefined ? null : toHex(thumbnail.hash)
}

/**
 * The names of the albums made in this page, by id: the album opens under its name at once,
 * before its record comes back from the server and is decrypted.
 */
const namesMadeHere = new Map<string, string>()

/** Remembers the name of an album this page just made (the next AlbumModel of it starts with it). */
export function albumMadeHere(albumId: string, name: string): void {
  namesMadeHere.set(albumId, name)
}

export class AlbumModel {
  readonly albumId: string
  readonly #library: Library | null
  readonly #client: CofferClient
  readonly #keys: AlbumKeys
  readonly #recordId: Promise<string>
  /** Live assets in feed order: id → latest sync_seq (Map keeps insertion order). */
  readonly #order = new Map<string, number>()
  /** Each live asset's month (lib/format.ts monthOf) of its latest entry's server time, applied_at. */
  readonly #monthOf = new Map<string, number>()
  #through = 0
  #ids: readonly string[] = []
  #months = new Int32Array(0)
  readonly #hidden = new Set<string>()
  /** The photos in Recently deleted (lib/trash.ts), read at each scan: left out of `ids` too. */
  #trashed: ReadonlySet<string> = new Set()
  #name: string | null | undefined
  #cover: string | null = null
  /** The record's entries met by the scan, in feed order: its name and cover are read from them (recordOf). */
  readonly #recordEntries: Entry[] = []
  /** Reads of the record started: only the latest one's answer is kept. */
  #recordReads = 0
  /** The scan met the album's record: its name is being read or was read. */
  #recordSeen = false
  #scanned = false
  #history: HistoryState = { state: 'checking' }
  #historyChecked = false
  #scanning: Promise<void> = Promise.resolve()
  #scanError: unknown = null
  #closed = false
  readonly #listeners = new Set<() => void>()
  readonly #onPage: AlbumOptions['onPage']
  readonly #checksHistory: boolean

  readonly #entries = new Lru<string, Entry>(ENTRIES_HELD)
  readonly #pages = new Map<number, Promise<void>>()
  readonly #opened = new Lru<string, Promise<OpenedAsset>>(OPENED_HELD)
  /** Settled tiles by asset id and position; a thumbnail's object URL is revoked when its tile falls out. */
  readonly #tiles = new Lru<string, Tile>(THUMBNAILS_HELD, (tile) => {
    if (tile.kind === 'ready' && tile.thumbnail !== null) URL.revokeObjectURL(tile.thumbnail)
  })
  readonly #tileListeners = new Map<string, Set<(tile: Tile) => void>>()
  /**
   * Tiles wanted on screen, loaded in the order they appeared: top to bottom. A tile scrolled
   * away before its turn is skipped, so a fast scroll does not wait for the rows it passed.
   */
  readonly #wanted: string[] = []
  /** Tiles just off screen (drawn ahead of a scroll): loaded only while no tile on screen waits or loads. */
  readonly #ahead: string[] = []
  /** Of the batches in flight, those taken from #wanted. */
  #onScreenInFlight = 0
  #batchesInFlight = 0
  /** A pump is queued for the end of the current task. */
  #pumpQueued = false
  /** Tiles being loaded, by asset id and position. */
  readonly #inFlight = new Set<string>()
  /** Told when the last tile in flight settled with none left waiting (the scan's next page). */
  readonly #whenIdle = new Set<() => void>()

  /** An album of the account's library, or one read through a public link (`LinkedAlbum`). */
  constructor(source: Library | LinkedAlbum, albumId: string, options: AlbumOptions = {}) {
    warmPool() // the workers load while the feed's first page is read
    this.albumId = albumId
    this.#client = source.client
    if ('keys' in source) {
      this.#library = null
      this.#keys = source.keys
      this.#recordId = Promise.resolve(source.recordId ?? '')
      this.#name = source.name
      this.#recordSeen = true
    } else {
      this.#library = source
      this.#keys = { masterKey: source.masterKey, albumId, identityPublicKey: source.identityPublicKey, ...options.shared }
      this.#recordId = source.albumRecordId?.(albumId) ?? albumRecordId(source.masterKey, albumId)
      this.#name = namesMadeHere.get(albumId)
    }
    this.#onPage = options.onPage
    this.#checksHistory = options.checkHistory === true
    if (options.start !== undefined) {
      this.#through = options.start.through
      for (const [assetId, seq] of options.start.positions) this.#order.set(assetId, seq)
      // The record was met before `through` (its name is not read: what starts this way shows none).
      this.#recordSeen = true
      this.#changed()
    }
  }

  /** The account's library the album is read from; a linked album has none (its page never asks). */
  get library(): Library {
    if (this.#library === null) throw new Error('an album read through a link belongs to no library here')
    return this.#library
  }

  // --- the album's order ----------------------------------------------------------------

  /** The photos to show, in feed order (those waiting to be deleted, and those in Recently deleted, left out). */
  get ids(): readonly string[] {
    return this.#ids
  }

  /**
   * The month of each of `ids` (same index): when the server applied its latest entry, known for
   * every photo before any is opened (docs/decisions/0032-grid-of-a-million.md, "Months").
   */
  get months(): Int32Array {
    return this.#months
  }

  /** The album's name from its record; null when it has none that opens, undefined until read. */
  get name(): string | null | undefined {
    return this.#name
  }

  /** The cover the record names (it may have been deleted since), or null. */
  get cover(): string | null {
    return this.#cover
  }

  /** True once the whole feed was read at least once. */
  get scanned(): boolean {
    return this.#scanned
  }

  get scanError(): unknown {
    return this.#scanError
  }

  /** The album's history as checked once the feed was first read through (what the album page warns about). */
  get history(): HistoryState {
    return this.#history
  }

  /** Checks the album's history once per opening, after its feed was read and its first screen drawn; signatures are checked in the workers. */
  async #checkHistory(): Promise<void> {
    const history = this.#library?.history
    if (this.#historyChecked || history === undefined || !this.#checksHistory) return
    this.#historyChecked = true
    try {
      const head = await history.check(this.albumId, this.#name ?? null)
      this.#history = { state: 'trusted', entries: head.count }
    } catch (error) {
      if (!(error instanceof AlbumTamperedError)) return
      this.#history = { state: 'tampered', error }
    }
    if (!this.#closed) this.#changed()
  }

  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  #changed(): void {
    this.#ids = [...this.#order.keys()].filter((id) => !this.#hidden.has(id) && !this.#trashed.has(id))
    this.#months = Int32Array.from(this.#ids, (id) => this.#monthOf.get(id) ?? -1)
    for (const listener of this.#listeners) listener()
  }

  /** True when the album holds a live asset of this id (backupFile's isStored). */
  holds(assetId: string): boolean {
    return this.#order.has(assetId)
  }

  /** Reads what the feed gained since the last read; one read at a time. */
  refresh(): Promise<void> {
    this.#scanning = this.#scanning.then(() => this.#scan())
    return this.#scanning
  }

  async #scan(): Promise<void> {
    if (this.#closed) return
    const recordId = await this.#recordId
    try {
      // First, so that a photo in the trash is never drawn while the feed's pages come in.
      if (this.#library !== null) this.#trashed = await trashedNow(this.#library)
      for (;;) {
        const page = await this.#client.feed(this.albumId, this.#through, STREAM_PAGE)
        for (const entry of page.entries) {
          this.#order.delete(entry.asset_id) // re-inserted below: the order is of the latest entries
          this.#monthOf.delete(entry.asset_id)
          if (entry.asset_id === recordId) {
            this.#recordSeen = true
            this.#recordEntries.push(entry)
            void this.#readRecord()
          } else if (entry.action !== 'delete') {
            this.#order.set(entry.asset_id, entry.sync_seq)
            this.#monthOf.set(entry.asset_id, monthOf(entry.applied_at))
            this.#entries.set(entry.asset_id, entry)
          }
        }
        if (this.#onPage !== undefined && page.entries.length > 0)
          await this.#onPage(
            page.entries.filter((entry) => entry.asset_id !== recordId),
            page.next_after,
          )
        this.#scanError = null
        if (page.entries.length === 0 || page.next_after === this.#through) break
        this.#through = page.next_after
        if (this.#closed) return
        this.#changed()
        await this.#tilesLoaded()
        if (this.#closed) return
      }
      // No record: no name. A record met is still being read (its reader sets the name).
      if (!this.#recordSeen) this.#name = null
      this.#scanned = true
      void this.#checkHistory()
    } catch (error) {
      this.#scanError = error
    }
    this.#changed()
  }

  /** Resolves once the tiles asked for after the last change are loaded, or after SCAN_YIELD_MS. */
  #tilesLoaded(): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer)
        this.#whenIdle.delete(done)
        resolve()
      }
      const timer = setTimeout(done, SCAN_YIELD_MS)
      // Looked at once the change is drawn and its tiles watched (a hidden page draws no frame: the timer then).
      requestAnimationFrame(() =>
        setTimeout(() => {
          if (this.#inFlight.size === 0) done()
          else this.#whenIdle.add(done)
        }, 0),
      )
    })
  }

  /** Reads the name and cover from the record's entries met so far (recordOf: the latest verified version). */
  async #readRecord(): Promise<void> {
    const read = ++this.#recordReads
    if (this.#library === null) return
    const record = await recordOf(this.#library, this.albumId, [...this.#recordEntries]).catch(() => null)
    if (read === this.#recordReads) this.#applyRecord(record)
  }

  /** The record as written here (a rename, a new cover): a read of older entries still in flight is dropped. */
  recordChanged(record: AlbumRecord): void {
    this.#recordReads++
    this.#applyRecord(record)
  }

  #applyRecord(record: AlbumRecord | null): void {
    this.#name = record?.name ?? null
    this.#cover = record?.cover ?? null
    this.#changed()
  }

  /** Leaves assets out of `ids` (a delete waiting for its undo window), or puts them back. */
  hide(assetIds: readonly string[], hidden: boolean): void {
    for (const id of assetIds) {
      if (hidden) this.#hidden.add(id)
      else this.#hidden.delete(id)
    }
    this.#changed()
  }

  /** The feed position of the asset's latest write (a replace moves it), or null when it is not in the album. */
  positionOf(assetId: string): number | null {
    return this.#order.get(assetId) ?? null
  }

  /** The photo before or after this one, or null at either end. */
  neighbour(assetId: string, step: -1 | 1): string | null {
    const index = this.#ids.indexOf(assetId)
    return index < 0 ? null : (this.#ids[index + step] ?? null)
  }

  // --- opening assets --------------------------------------------------------------------

  #keyOf(assetId: string): string | null {
    const seq = this.#order.get(assetId)
    return seq === undefined ? null : `${assetId}@${seq}`
  }

  /** The feed entry at a live asset's latest position: held, or its page read again. */
  async #entryOf(assetId: string): Promise<Entry> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const seq = this.#order.get(assetId)
      if (seq === undefined) throw new Error('This photo is no longer in the album.')
      const held = this.#entries.get(assetId)
      if (held?.sync_seq === seq) return held
      const start = Math.floor((seq - 1) / WINDOW) * WINDOW
      await (this.#pages.get(start) ?? this.#readPage(start))
    }
    throw new Error('This photo is no longer in the album.')
  }

  /** Reads the WINDOW entries after `start` again: every position in (start, start + WINDOW] is among them. */
  #readPage(start: number): Promise<void> {
    const reading = this.#client.feed(this.albumId, start, WINDOW).then((page) => {
      for (const entry of page.entries) if (this.#order.get(entry.asset_id) === entry.sync_seq) this.#entries.set(entry.asset_id, entry)
    })
    this.#pages.set(start, reading)
    return reading.finally(() => this.#pages.delete(start))
  }

  /** An entry opened in a worker: its signature checked, its metadata decrypted. */
  async #open(entry: Entry): Promise<OpenedAsset> {
    return this.#openWith(entry, await this.#client.downloadBlob(metadataHashOf(entry)))
  }

  #openWith(entry: Entry, metadataBlob: Uint8Array): Promise<OpenedAsset> {
    return inWorker((worker) =>
      worker.openAsset(this.#keys, { asset_id: entry.asset_id, manifest_cbor: entry.manifest_cbor }, transfer(metadataBlob, [metadataBlob.buffer])),
    )
  }

  /** A live asset, opened (kept in the LRU). Throws a CofferProblem error.moderation.taken_down when the operator took it down. */
  opened(assetId: string): Promise<OpenedAsset> {
    const key = this.#keyOf(assetId)
    if (key === null) return Promise.reject(new Error('This photo is no longer in the album.'))
    let opening = this.#opened.get(key)
    if (opening === undefined) {
      opening = this.#entryOf(assetId).then((entry) => this.#open(entry))
      opening.catch(() => this.#opened.delete(key))
      this.#opened.set(key, opening)
    }
    return opening
  }

  /**
   * Live assets opened together, kept in the LRU as opened() keeps them: those not held have
   * their entries read, then their metadata blobs fetched in one batch (the SDK splits past 100)
   * and opened in the workers side by side.
   */
  openAll(assetIds: readonly string[]): Map<string, Promise<OpenedAsset>> {
    const opening = new Map<string, Promise<OpenedAsset>>()
    const toRead: string[] = []
    for (const assetId of assetIds) {
      const key = this.#keyOf(assetId)
      const held = key === null ? undefined : this.#opened.get(key)
      if (key === null || held !== undefined) opening.set(assetId, held ?? this.opened(assetId))
      else toRead.push(assetId)
    }
    if (toRead.length === 0) return opening
    const read = (async () => {
      const entries = await Promise.allSettled(toRead.map((assetId) => this.#entryOf(assetId)))
      const hashes = entries.flatMap((entry) =>
        entry.status === 'fulfilled' && entry.value.metadata_blob_hash !== undefined ? [entry.value.metadata_blob_hash] : [],
      )
      return { entries, blobs: await this.#client.downloadBlobs(hashes) }
    })()
    toRead.forEach((assetId, i) => {
      const key = this.#keyOf(assetId)!
      const opened = read.then(({ entries, blobs }) => {
        const entry = entries[i]!
        if (entry.status === 'rejected') throw entry.reason
        return this.#openWith(entry.value, blobOf(blobs, metadataHashOf(entry.value)))
      })
      opened.catch(() => this.#opened.delete(key))
      this.#opened.set(key, opened)
      opening.set(assetId, opened)
    })
    return opening
  }

  /**
   * Feed entries of live assets opened together (the Photos screen reading dates): their
   * metadata blobs in one batch (the SDK splits past 100), opened in the workers side by side,
   * and kept in the LRU as opened() keeps them when they are the asset's latest entry.
   */
  async openEntries(entries: readonly Entry[]): Promise<PromiseSettledResult<OpenedAsset>[]> {
    const held = entries.map((entry) => this.#opened.get(`${entry.asset_id}@${entry.sync_seq}`))
    const hashes = entries.flatMap((entry, i) => (held[i] === undefined && entry.metadata_blob_hash !== undefined ? [entry.metadata_blob_hash] : []))
    const blobs = hashes.length === 0 ? null : await this.#client.downloadBlobs(hashes)
    return Promise.allSettled(
      entries.map((entry, i) => {
        const kept = held[i]
        if (kept !== undefined) return kept
        const opening = (async () => this.#openWith(entry, blobOf(blobs!, metadataHashOf(entry))))()
        const key = `${entry.asset_id}@${entry.sync_seq}`
        if (this.#order.get(entry.asset_id) === entry.sync_seq) {
          opening.catch(() => this.#opened.delete(key))
          this.#opened.set(key, opening)
        }
        return opening
      }),
    )
  }

  /** A derivative's plaintext ("thumbnail", "preview"), decrypted in a worker; null when the asset has none. */
  async derivative(asset: OpenedAsset, kind: string): Promise<Blob | null> {
    const blob = derivativeBlob(asset, kind)
    if (blob === undefined) {
      if (kind === 'thumbnail') this.#seen(asset, null)
      return null
    }
    const opened = await this.#openDerivative(asset, kind, await this.#client.downloadBlob(toHex(blob.hash)))
    if (kind === 'thumbnail') this.#seen(asset, opened)
    return opened
  }

  /** A photo opened here with its thumbnail (null: it has none), for the photo index. */
  #seen(asset: OpenedAsset, thumbnail: Blob | null): void {
    if (this.#closed || this.#library === null) return
    const version = asset.envelope.metadata_blob_hash
    if (typeof version === 'string') rememberPhoto({ assetId: asset.assetId, albumId: this.albumId, version, name: asset.metadata.name, thumbnail })
  }

  #openDerivative(asset: OpenedAsset, kind: string, sealed: Uint8Array): Promise<Blob> {
    return inWorker((worker) => worker.openDerivative(asset, kind, transfer(sealed, [sealed.buffer]), derivativeBlob(asset, kind)?.type ?? ''))
  }

  /** Bytes start..end (inclusive) of the original's ciphertext, as stored: what a video plays from (lib/video.ts). */
  originalCiphertext(asset: OpenedAsset, start: number, end: number): Promise<Uint8Array> {
    return this.#client.downloadBlob(asset.envelope.ciphertext_hash, { start, end })
  }

  /** The original, decrypted in a worker and checked against its manifest. */
  async original(asset: OpenedAsset): Promise<Blob> {
    const ciphertext = await this.#client.downloadBlob(asset.envelope.ciphertext_hash)
    return inWorker((worker) => worker.openOriginal(asset, transfer(ciphertext, [ciphertext.buffer])))
  }

  // --- tiles -----------------------------------------------------------------------------

  /** A tile as it is now, from what is held. */
  tile(assetId: string): Tile {
    const key = this.#keyOf(assetId)
    return (key === null ? undefined : this.#tiles.get(key)) ?? LOADING
  }

  /**
   * Watches a tile on screen, or just off it (`ahead`): it is loaded (soon; those on screen first)
   * and `listener` told when it changes. Answers the unwatch.
   */
  watch(assetId: string, listener: (tile: Tile) => void, ahead = false): () => void {
    let listeners = this.#tileListeners.get(assetId)
    if (listeners === undefined) {
      listeners = new Set()
      this.#tileListeners.set(assetId, listeners)
    }
    listeners.add(listener)
    if (this.tile(assetId).kind === 'loading') {
      ;(ahead ? this.#ahead : this.#wanted).push(assetId)
      // After the current task's other watches (a drawn screen watches all its tiles in one go): one batch for them all.
      if (!this.#pumpQueued) {
        this.#pumpQueued = true
        queueMicrotask(() => {
          this.#pumpQueued = false
          this.#pump()
        })
      }
    }
    return () => {
      listeners.delete(listener)
      if (listeners.size === 0) this.#tileListeners.delete(assetId)
    }
  }

  #pump(): void {
    while (this.#batchesInFlight < BATCHES) {
      const onScreen = this.#wanted.length > 0
      const queue = onScreen ? this.#wanted : this.#onScreenInFlight === 0 ? this.#ahead : undefined
      if (queue === undefined || queue.length === 0) break
      const batch = new Map<string, string>()
      while (batch.size < BATCH_TILES && queue.length > 0) {
        const assetId = queue.shift()!
        const key = this.#keyOf(assetId)
        // Scrolled away before its turn, loading, or loaded meanwhile: skipped.
        if (key === null || !this.#tileListeners.has(assetId) || this.#inFlight.has(key) || this.tile(assetId).kind !== 'loading') continue
        batch.set(assetId, key)
      }
      if (batch.size === 0) continue
      for (const key of batch.values()) this.#inFlight.add(key)
      this.#batchesInFlight++
      if (onScreen) this.#onScreenInFlight++
      void this.#loadTiles(batch).finally(() => {
        for (const key of batch.values()) this.#inFlight.delete(key)
        this.#batchesInFlight--
        if (onScreen) this.#onScreenInFlight--
        this.#pump()
      })
    }
    if (this.#inFlight.size === 0) for (const idle of [...this.#whenIdle]) idle()
  }

  /**
   * A batch of tiles (asset id → tile key): opened together (openAll), each shown as opened at
   * once, then their thumbnails fetched in one batch and decrypted in the workers.
   */
  async #loadTiles(batch: ReadonlyMap<string, string>): Promise<void> {
    const waiting = new Map<string, { asset: OpenedAsset; hash: string }>()
    await Promise.all(
      [...this.openAll([...batch.keys()])].map(async ([assetId, opening]) => {
        const key = batch.get(assetId)!
        try {
          const asset = await opening
          const hash = thumbnailHashOf(asset)
          if (hash === null) {
            this.#seen(asset, null)
            return this.#show(assetId, key, { kind: 'ready', asset, thumbnail: null })
          }
          waiting.set(assetId, { asset, hash })
          this.#show(assetId, key, { kind: 'opened', asset })
        } catch (error) {
          this.#show(assetId, key, failedTile(error))
        }
      }),
    )
    if (waiting.size === 0 || this.#closed) return
    let thumbnails: DownloadedBlobs
    try {
      thumbnails = await this.#client.downloadBlobs([...waiting.values()].map(({ hash }) => hash))
    } catch (error) {
      for (const assetId of waiting.keys()) this.#show(assetId, batch.get(assetId)!, failedTile(error))
      return
    }
    await Promise.all(
      [...waiting].map(async ([assetId, { asset, hash }]) => {
        const key = batch.get(assetId)!
        try {
          const thumbnail = await this.#openDerivative(asset, 'thumbnail', blobOf(thumbnails, hash))
          this.#seen(asset, thumbnail)
          if (!this.#closed) this.#show(assetId, key, { kind: 'ready', asset, thumbnail: URL.createObjectURL(thumbnail) })
        } catch (error) {
          this.#show(assetId, key, failedTile(error))
        }
      }),
    )
  }

  /** Holds the tile as it now is and tells those watching it. */
  #show(assetId: string, key: string, tile: Tile): void {
    if (this.#closed) return
    this.#tiles.set(key, tile)
    for (const listener of this.#tileListeners.get(assetId) ?? []) listener(tile)
  }

  /** Ends the album: object URLs revoked, nothing more read. */
  close(): void {
    this.#closed = true
    this.#tiles.clear()
    this.#listeners.clear()
    this.#tileListeners.clear()
    for (const idle of [...this.#whenIdle]) idle()
  }
}
