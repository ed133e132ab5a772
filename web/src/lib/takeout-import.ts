// Importing a Google Takeout export from the browser (issue 42, decision 0071; docs/web.md,
// "Importing from Google Takeout"), as `coffer-photos import takeout` does it
// (src/cli/photos/import.ts): every zip the person picks is listed first (a sidecar may be in
// another archive than its photo), matched and grouped by the client library's planTakeout; each
// photo is then stored once, with the date, place, caption and favourite mark its sidecar gives
// (takeoutFacts), in the library's album when a copy of it is in a year folder, else in its first
// album, and added to its other albums without being sent again (organise.ts copyToAlbum, given
// the content hash its upload just learned).
//
// Memory: a zip is read where it lies, never whole. Listing reads its end records and central
// directory a window at a time (zip-reader.ts over blobSource: File.slice); an entry is read from
// its own range, inflated as it is pulled. A photo or video of up to IN_MEMORY_FILE_MAX is
// gathered into one buffer, as a picked photo is read (lib/uploads.ts sendingHeld); a larger one
// into a Blob built a few MiB at a time, which the browser keeps out of the page's memory (Chromium
// pages a large Blob to disk), and streamed from it. PHOTOS_AT_ONCE photos are read at a time, so
// the page holds at most that many photos' bytes whatever the size of the export.
//
// Nothing of the export is kept in the browser: a reload or a closed tab ends the import, and
// picking the same zips again continues it. Each photo's keys and id follow from its content, so
// a photo stored before is found in its album (`present`) and not sent again; a large one is
// hashed before it is sent (hashFirst) for that. The upload sessions an import opens are kept,
// sealed, until they end, and those a closed page left open are ended before the next import
// sends anything (the server would pair a new manifest with the newest complete session of the
// same original: lib/uploads.ts says why).
import { clear, createStore, del, entries, set } from 'idb-keyval'
import { openAlbum, livePositions, type Library } from '#photos/albums.ts'
import { IN_MEMORY_FILE_MAX } from '#photos/files.ts'
import { assetIdFor } from '#photos/format/ids.ts'
import { mediaTypeOfName } from '#photos/media-types.ts'
import { copyToAlbum } from '#photos/organise.ts'
import { localZone } from '#photos/taken.ts'
import { planTakeout, readSidecar, storedName, takeoutFacts, type ExportFile, type TakeoutPhoto, type TakeoutPlan } from '#photos/takeout-import.ts'
import type { SidecarVia, TakeoutSidecar } from '#photos/takeout.ts'
import { backupFile } from '#photos/upload.ts'
import { blobSource, openZip } from '#photos/zip-reader.ts'
import { fromHex } from '#sdk/bytes.ts'
import type { Feed } from '#sdk/client.ts'
import { albumMadeHere } from './album.ts'
import { openWithStorageKey, sealWithStorageKey } from './store.ts'
import type { Sealed } from './sealed.ts'
import { sendingHeld, sendingStreamed, type Sending, type SourceFacts, type UploadItem } from './uploads.ts'

/** Photos read and sent at once: each holds its bytes (up to IN_MEMORY_FILE_MAX) while it goes, as the album's uploads do. */
const PHOTOS_AT_ONCE = 2

/** Sidecars read at once while the export is planned: each a small entry, two reads of the zip. */
const SIDECARS_AT_ONCE = 8

/** A larger entry is gathered into its Blob this many bytes at a time: what the page holds of it. */
const GATHER_BYTES = 8 << 20

/** How often the planning's progress is told (a sidecar read takes a fraction of a millisecond). */
const PROGRESS_MS = 100

/** How a photo met its sidecar, read when the export is planned: a photo in Google Photos' trash is left out. */
export type SidecarOutcome = SidecarVia | 'none' | 'unreadable' | 'trashed'

/** A zip of the export, as the person picked it. */
export interface TakeoutArchive {
  readonly name: string
  readonly size: number
}

/** An export read and planned: what an import is started from. */
export interface TakeoutReading {
  readonly archives: readonly TakeoutArchive[]
  readonly plan: TakeoutPlan
  /** How each of `plan.photos` (same index) met its sidecar. */
  readonly sidecars: readonly SidecarOutcome[]
}

export type ReadingProgress =
  | { readonly step: 'listing'; readonly archive: string }
  | { readonly step: 'sidecars'; readonly read: number; readonly total: number }

/** How a photo meets its sidecar, and what the sidecar says: null when it has none or it could not be read (the photo keeps its own EXIF date). */
async function sidecarOf(photo: TakeoutPhoto): Promise<{ readonly outcome: SidecarOutcome; readonly sidecar: TakeoutSidecar | null }> {
  try {
    const reading = await readSidecar(photo)
    if (reading === null) return { outcome: 'none', sidecar: null }
    if ('error' in reading) return { outcome: 'unreadable', sidecar: null }
    return { outcome: reading.sidecar.trashed ? 'trashed' : photo.via!, sidecar: reading.sidecar }
  } catch {
    // The entry itself did not read (its CRC, or the file changed on disk since it was picked).
    return { outcome: 'unreadable', sidecar: null }
  }
}

/** Runs `work` for 0..count-1, `limit` at a time. */
async function eachAtOnce(count: number, limit: number, work: (index: number) => Promise<void>): Promise<void> {
  let next = 0
  const lane = async (): Promise<void> => {
    while (next < count) await work(next++)
  }
  await Promise.all(Array.from({ length: Math.min(limit, count) }, lane))
}

/**
 * Lists the zips (their directories only), plans the export from all of them at once, and reads
 * each photo's sidecar to learn which are in Google Photos' trash. Throws, naming the zip, when
 * one is not a zip that can be read.
 */
export async function readTakeout(zips: readonly File[], onProgress: (progress: ReadingProgress) => void): Promise<TakeoutReading> {
  const files: ExportFile[] = []
  for (const zip of zips) {
    onProgress({ step: 'listing', archive: zip.name })
    const archive = await openZip(blobSource(zip)).catch((error: unknown) => {
      const why = `${zip.name} is not a zip file that can be read (${(error as Error).message})`
      throw new Error(`${why}. Choose the zip files of the export as Google Takeout made them.`, { cause: error })
    })
    for (const entry of archive.entries)
      if (!entry.directory)
        files.push({
          path: entry.name,
          size: entry.size,
          modified: entry.modified,
          identity: `crc32:${entry.crc32.toString(16).padStart(8, '0')}`,
          open: () => archive.stream(entry),
        })
  }
  const plan = await planTakeout(files)
  const sidecars: SidecarOutcome[] = new Array(plan.photos.length)
  let read = 0
  let told = 0
  await eachAtOnce(plan.photos.length, SIDECARS_AT_ONCE, async (index) => {
    sidecars[index] = (await sidecarOf(plan.photos[index]!)).outcome
    read++
    if (read === plan.photos.length || performance.now() - told > PROGRESS_MS) {
      told = performance.now()
      onProgress({ step: 'sidecars', read, total: plan.photos.length })
    }
  })
  return { archives: zips.map((zip) => ({ name: zip.name, size: zip.size })), plan, sidecars }
}

/** What an import of the reading would do: the screen's plan, before anything is sent. */
export interface TakeoutSummary {
  /** Photos and videos to store (those in the trash left out), and their bytes. */
  readonly photos: number
  readonly bytes: number
  /** The albums they go into, the library's first when some photo goes there. */
  readonly albums: readonly string[]
  readonly withSidecar: number
  readonly withoutSidecar: number
  readonly unreadableSidecars: number
  readonly trashed: number
  /** Files of the export that are not photos (takeout.ts's reasons, the trash's added by the import), by reason. */
  readonly skipped: ReadonlyMap<string, number>
  /** JSON files no photo claims: a sidecar whose photo is in a zip not picked, or an album's metadata in a language not known. */
  readonly unmatched: number
}

const homeOf = (photo: TakeoutPhoto, libraryAlbum: string): string => (photo.inLibrary ? libraryAlbum : photo.albums[0]!)

export function summaryOf(reading: TakeoutReading, libraryAlbum: string): TakeoutSummary {
  const kept = reading.plan.photos.filter((_, index) => reading.sidecars[index] !== 'trashed')
  const count = (...outcomes: SidecarOutcome[]) => reading.sidecars.filter((outcome) => outcomes.includes(outcome)).length
  const skipped = new Map<string, number>()
  for (const { reason } of reading.plan.skipped) skipped.set(reason, (skipped.get(reason) ?? 0) + 1)
  const albums = new Set<string>(kept.some((photo) => photo.inLibrary) ? [libraryAlbum] : [])
  for (const photo of kept) for (const album of photo.albums) albums.add(album)
  return {
    photos: kept.length,
    bytes: kept.reduce((sum, photo) => sum + photo.file.size, 0),
    albums: [...albums],
    withSidecar: count('own', 'edited', 'live'),
    withoutSidecar: count('none'),
    unreadableSidecars: count('unreadable'),
    trashed: count('trashed'),
    skipped,
    unmatched: reading.plan.unmatched.length,
  }
}

export interface TakeoutImportOptions {
  /** The album for the photos of the year folders (TAKEOUT_LIBRARY_ALBUM unless named). */
  readonly libraryAlbum: string
  /** Keep the place Google Photos had for each photo (decision 0071: on unless the person says no). */
  readonly location: boolean
}

/** A photo added to one of its other albums that did not go in. */
export interface FailedCopy {
  readonly name: string
  readonly album: string
  readonly error: unknown
}

/** Where the whole import is: the screen's report once it is done or stopped. */
export interface TakeoutProgress {
  readonly state: 'importing' | 'stopping' | 'stopped' | 'done'
  /** Photos stored by this import, those its albums held already, those that failed. */
  readonly imported: number
  readonly present: number
  readonly failed: number
  readonly sentBytes: number
  /** Photos added to a further album, those it held already, those that failed (each also in failedCopies). */
  readonly copies: { readonly added: number; readonly present: number; readonly failed: number }
  readonly failedCopies: readonly FailedCopy[]
}

/** An album the import writes into: its id, the assets it holds (backupFile's isStored, and a copy's check), and how far its feed was read. */
interface ImportAlbum {
  readonly albumId: string
  readonly live: Set<string>
  /** A feed position every entry this import writes from now on comes after: where the last read of the feed ended. */
  through: number
}

/** Feed entries read at once when looking for a photo just stored: those written since the last look (a few). */
const NEW_ENTRIES_PAGE = 64

const sessions = createStore('coffer-takeout-import', 'sessions')

/** The entry's bytes in one buffer, checked against the size its zip states. */
async function entryBytes(file: ExportFile): Promise<Uint8Array<ArrayBuffer>> {
  const whole = new Uint8Array(file.size)
  let at = 0
  for await (const piece of file.open()) {
    if (at + piece.length > whole.length) throw new Error(`${file.path}: longer than its zip says`)
    whole.set(piece, at)
    at += piece.length
  }
  if (at !== whole.length) throw new Error(`${file.path}: shorter than its zip says`)
  return whole
}

/** The entry's bytes as a Blob, gathered GATHER_BYTES at a time: the page holds a piece, the browser the rest. */
async function entryBlob(file: ExportFile, type: string): Promise<Blob> {
  let blob = new Blob([], { type })
  let pieces: Uint8Array<ArrayBuffer>[] = []
  let held = 0
  for await (const piece of file.open()) {
    // The reader's pieces are views of ArrayBuffers it made (never shared memory).
    pieces.push(piece as Uint8Array<ArrayBuffer>)
    held += piece.length
    if (held >= GATHER_BYTES) {
      blob = new Blob([blob, ...pieces], { type })
      pieces = []
      held = 0
    }
  }
  return new Blob([blob, ...pieces], { type })
}

/** The import of this page, if any: the screen shows it again when opened again, until it is let go. */
let current: TakeoutImport | null = null

export const currentTakeoutImport = (): TakeoutImport | null => current

/** Starts importing the reading into the account; answers the import (also currentTakeoutImport()). */
export function startTakeoutImport(library: Library, reading: TakeoutReading, options: TakeoutImportOptions): TakeoutImport {
  current = new TakeoutImport(library, reading, options)
  return current
}

/** Lets a finished (or stopped) import go: the screen starts from the zips again. */
export function forgetTakeoutImport(): void {
  if (current?.progress.state === 'stopped' || current?.progress.state === 'done') current = null
}

/**
 * The sign-in ended: the import stops (its client can no longer write) and is let go, and the
 * upload sessions imports kept are forgotten (sealed under a key that is gone; the server lets
 * them expire).
 */
export async function endTakeoutImport(): Promise<void> {
  current?.stop()
  current = null
  await clear(sessions)
}

type ItemState = UploadItem['state']

type Entry = Feed['entries'][number]

export class TakeoutImport {
  readonly reading: TakeoutReading
  readonly options: TakeoutImportOptions
  readonly summary: TakeoutSummary
  readonly #library: Library
  /** The photos to store (the trash left out), and their list items (same index). */
  readonly #photos: readonly TakeoutPhoto[]
  readonly #items: UploadItem[]
  /** The items as last told: a copy, so that a screen sees a new list when it changed. */
  #shown: readonly UploadItem[]
  readonly #counts: Record<ItemState, number> = { waiting: 0, sending: 0, stored: 0, present: 0, failed: 0 }
  /** Indexes of the photos waiting, in turn. */
  readonly #waiting: number[]
  /** The photos this import stored (a photo tried again after a failed copy is `present` the second time). */
  readonly #stored = new Set<number>()
  #running = 0
  #stopping = false
  #sentBytes = 0
  readonly #copies = { added: 0, present: 0, failed: 0 }
  #failedCopies: FailedCopy[] = []
  #progress: TakeoutProgress
  readonly #albums = new Map<string, Promise<ImportAlbum>>()
  /** The upload session each photo has open, under the key it is kept (sealed) by: ended before the photo is tried again. */
  readonly #sessions = new Map<number, { readonly key: string; readonly uploadId: string }>()
  readonly #listeners = new Set<() => void>()
  #notifyTimer: ReturnType<typeof setTimeout> | null = null
  /** Ends the sessions a closed page left open, once, before the first photo is sent. */
  readonly #leftEnded: Promise<void>

  constructor(library: Library, reading: TakeoutReading, options: TakeoutImportOptions) {
    this.#library = library
    this.reading = reading
    this.options = options
    this.summary = summaryOf(reading, options.libraryAlbum)
    this.#photos = reading.plan.photos.filter((_, index) => reading.sidecars[index] !== 'trashed')
    this.#items = this.#photos.map((photo, index) => ({ id: String(index), name: storedName(photo), size: photo.file.size, progress: null, state: 'waiting' }))
    this.#counts.waiting = this.#items.length
    this.#shown = [...this.#items]
    this.#waiting = this.#photos.map((_, index) => index)
    this.#progress = this.#tally()
    this.#leftEnded = this.#endLeftSessions()
    this.#pump()
  }

  /** Each photo as the upload panel lists it. */
  get items(): readonly UploadItem[] {
    return this.#shown
  }

  get progress(): TakeoutProgress {
    return this.#progress
  }

  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  /** Stops starting photos: those in flight finish, the rest wait for resume(). */
  stop(): void {
    this.#stopping = true
    this.#changed()
  }

  /** Goes on after a stop (the zips are still this page's to read). */
  resume(): void {
    this.#stopping = false
    this.#pump()
  }

  /** Tries the failed photos again: one stored meanwhile is found in its album (nothing sent), and the copies it lacks are made. */
  retry(): void {
    const failed = this.#items.flatMap((item, index) => (item.state === 'failed' ? [index] : []))
    const names = new Set(failed.map((index) => this.#items[index]!.name))
    this.#failedCopies = this.#failedCopies.filter((copy) => !names.has(copy.name))
    for (const index of failed) this.#update(index, { state: 'waiting', progress: null })
    this.#waiting.push(...failed)
    this.resume()
  }

  #tally(): TakeoutProgress {
    const left = this.#waiting.length > 0
    return {
      state: this.#running > 0 ? (this.#stopping ? 'stopping' : 'importing') : left ? (this.#stopping ? 'stopped' : 'importing') : 'done',
      imported: this.#stored.size,
      present: this.#counts.stored + this.#counts.present - this.#stored.size,
      failed: this.#counts.failed,
      sentBytes: this.#sentBytes,
      copies: { ...this.#copies },
      failedCopies: this.#failedCopies,
    }
  }

  /** Told ten times a second at most: the library tells each 64 KiB piece, and an export has thousands of photos. */
  #changed(): void {
    this.#notifyTimer ??= setTimeout(() => {
      this.#notifyTimer = null
      this.#shown = [...this.#items]
      this.#progress = this.#tally()
      for (const listener of this.#listeners) listener()
    }, 100)
  }

  #update(index: number, change: Partial<UploadItem>): void {
    const before = this.#items[index]!
    const after = { ...before, ...change }
    this.#counts[before.state]--
    this.#counts[after.state]++
    this.#items[index] = after
    this.#changed()
  }

  #pump(): void {
    while (!this.#stopping && this.#running < PHOTOS_AT_ONCE && this.#waiting.length > 0) {
      const index = this.#waiting.shift()!
      this.#running++
      this.#update(index, { state: 'sending' })
      void this.#importPhoto(index)
        .then(
          (state) => this.#update(index, { state }),
          (error: unknown) => this.#update(index, { state: 'failed', error }),
        )
        .finally(() => {
          this.#running--
          this.#pump()
        })
    }
    this.#changed()
  }

  /** The album of this name (found by its name, or made), with the assets it holds. */
  #album(name: string): Promise<ImportAlbum> {
    let opening = this.#albums.get(name)
    if (opening === undefined) {
      opening = (async () => {
        const album = await openAlbum(this.#library, name)
        if (album.name !== null) albumMadeHere(album.albumId, album.name)
        const { latest, through } = await livePositions(this.#library.client, album.albumId)
        return { albumId: album.albumId, live: new Set(latest.keys()), through }
      })()
      // Opened again by the next photo that needs it (the network may be back).
      opening.catch(() => this.#albums.delete(name))
      this.#albums.set(name, opening)
    }
    return opening
  }

  /** Stores one photo in its album and adds it to its others; answers how it went (a failed copy throws, naming the album). */
  async #importPhoto(index: number): Promise<'stored' | 'present'> {
    await this.#leftEnded
    await this.#endSession(index, true)
    const photo = this.#photos[index]!
    const name = this.#items[index]!.name
    const home = await this.#album(homeOf(photo, this.options.libraryAlbum))
    const { sidecar } = await sidecarOf(photo)
    const facts: SourceFacts = { name, type: mediaTypeOfName(photo.file.path), modified: photo.file.modified }
    const sending: Sending =
      photo.file.size <= IN_MEMORY_FILE_MAX ? sendingHeld(await entryBytes(photo.file), facts) : sendingStreamed(await entryBlob(photo.file, facts.type), facts)
    // Its feed entry will come after this: a copy into its other albums then reads only what came since.
    const storedAfter = home.through
    const result = await backupFile({ ...this.#library, albumId: home.albumId }, sending.source, {
      isStored: (assetId) => home.live.has(assetId),
      // Hashed before it is sent: a large photo an import before this one stored is then not sent again.
      hashFirst: () => true,
      describe: async () => takeoutFacts(await sending.describe(), sidecar, { location: this.options.location, zone: localZone }),
      onUploadOpened: (uploadId) => this.#sessionOpened(index, uploadId),
      onProgress: (progress) => this.#update(index, { progress }),
    })
    await this.#endSession(index, false)
    home.live.add(result.assetId)
    if (result.status === 'stored') this.#stored.add(index)
    this.#sentBytes += result.sentBytes
    await this.#copyToOthers(photo, name, home, fromHex(result.contentHash), result.assetId, storedAfter)
    return result.status
  }

  /**
   * The live feed entry of an asset written after position `after`, read from there (a few
   * entries: what this import wrote since); null when there is none there (the photo was stored
   * before this import: copyToAlbum then finds it in the whole feed).
   */
  async #entryAfter(album: ImportAlbum, after: number, assetId: string): Promise<Entry | null> {
    let found: Entry | null = null
    for (let at = after; ; ) {
      const page = await this.#library.client.feed(album.albumId, at, NEW_ENTRIES_PAGE)
      for (const entry of page.entries) if (entry.asset_id === assetId) found = entry.action === 'delete' ? null : entry
      if (page.entries.length === 0 || page.next_after === at) return found
      at = page.next_after
      album.through = Math.max(album.through, at)
    }
  }

  /** The photo into each of its albums but the one it is stored in, nothing of it sent again. */
  async #copyToOthers(photo: TakeoutPhoto, name: string, home: ImportAlbum, content: Uint8Array, assetId: string, storedAfter: number): Promise<void> {
    const failed: FailedCopy[] = []
    let entry: Entry | null | undefined
    for (const albumName of photo.albums) {
      if (albumName === homeOf(photo, this.options.libraryAlbum)) continue
      try {
        const album = await this.#album(albumName)
        if (album.live.has(await assetIdFor(this.#library.masterKey, album.albumId, content))) {
          this.#copies.present++
          continue
        }
        entry ??= await this.#entryAfter(home, storedAfter, assetId)
        const copied = await copyToAlbum(this.#library, home.albumId, assetId, album.albumId, { contentSha256: content, ...(entry === null ? {} : { entry }) })
        album.live.add(copied.assetId)
        this.#copies[copied.status === 'stored' ? 'added' : 'present']++
      } catch (error) {
        this.#copies.failed++
        failed.push({ name, album: albumName, error })
      }
    }
    if (failed.length === 0) return
    this.#failedCopies = [...this.#failedCopies, ...failed]
    throw new Error(`Stored, but not added to ${failed.map((copy) => `"${copy.album}"`).join(', ')}. Try it again.`, { cause: failed[0]!.error })
  }

  /** Keeps the session a photo's upload opened (sealed), in place of one an earlier round of it opened. */
  async #sessionOpened(index: number, uploadId: string): Promise<void> {
    await this.#endSession(index, false)
    const key = crypto.randomUUID()
    this.#sessions.set(index, { key, uploadId })
    await set(key, await sealWithStorageKey(key, new TextEncoder().encode(uploadId)), sessions)
  }

  /**
   * Forgets the session kept for a photo: when its upload ended (stored, or the library ended it),
   * or, `abort`, before the photo is tried again after a failure that may have left it open.
   */
  async #endSession(index: number, abort: boolean): Promise<void> {
    const kept = this.#sessions.get(index)
    if (kept === undefined) return
    this.#sessions.delete(index)
    // Already ended (committed, aborted or expired): the server answers 404, which is as good.
    if (abort) await this.#library.client.abortUploadSession(kept.uploadId).catch(() => {})
    await del(kept.key, sessions)
  }

  /** Ends the upload sessions kept by an import of a page before this one (those still open; the server answers 404 for the others). */
  async #endLeftSessions(): Promise<void> {
    for (const [key, sealed] of await entries<string, Sealed>(sessions)) {
      const uploadId = await openWithStorageKey(key, sealed)
      if (uploadId !== null) await this.#library.client.abortUploadSession(new TextDecoder().decode(uploadId)).catch(() => {})
      await del(key, sessions)
    }
  }
}
