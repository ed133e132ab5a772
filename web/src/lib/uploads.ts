// Uploads into an album (docs/decisions/0020-web-app.md, "The gallery"): each file (under its name
// in the album: a file from a folder by its path from it, lib/picked.ts, decision 0058) backed up by
// src/client's backupFile on this page (it fetches), its derivatives and capture time made in a
// worker, two files at a time. Each file's progress is what the library tells (UploadProgress:
// its stage, the bytes read and sent and those expected for its way of sending); this page
// counts nothing itself. The queue is kept in IndexedDB, each file until it is stored:
// after a reload, opening the album continues what is left. A file sent twice is harmless: its
// asset id follows from its content, so backupFile finds it stored (isStored) or the server
// refuses a second create and it counts as already there.
//
// The queue is sealed under the sign-in's storage key (lib/store.ts; decision 0031): a file's
// name, type, size and album as one sealed record, its bytes as sealed chunks of 1 MiB in one
// Blob. Signing out drops the queue: what it sealed could no longer be opened.
//
// Each file's upload session is kept with it (sealed) once open. A page closed or reloaded
// mid-upload leaves that session open at the server, its blobs perhaps all sent; the same file
// sent again declares the same original (its keys follow from its content), and the server pairs
// a manifest with the newest complete open session of that original (a tie broken at random):
// the new manifest could get the old session's thumbnail, which its metadata does not name, and
// the photo would not open. So a file's session left by an earlier page is ended before the file
// is sent again.
import { clear, createStore, del, entries, get, keys, set } from 'idb-keyval'
import { replaceFile } from '#photos/edits.ts'
import { describeVideo } from './video-poster.ts'
import { isVideo } from './video.ts'
import { IN_MEMORY_FILE_MAX, memorySource, type BackupResult, type FileSource, type MediaFacts, type UploadProgress } from '#photos/files.ts'
import { assetIdFor } from '#photos/format/ids.ts'
import { backupFile } from '#photos/upload.ts'
import type { AlbumModel } from './album.ts'
import { typeOf, type Picked } from './picked.ts'
import { inWorker } from './pool.ts'
import { decodedValue, encodedValue, type Sealed } from './sealed.ts'
import { openWithStorageKey, sealWithStorageKey } from './store.ts'

const queue = createStore('coffer-uploads', 'queue')

/** What a queued file's sealed record says of it. */
interface QueuedFacts {
  readonly albumId: string
  readonly name: string
  readonly type: string
  readonly size: number
  readonly lastModified: number
  readonly addedAt: number
}

/** A queued file as IndexedDB keeps it, under its id. */
interface Queued {
  readonly facts: Sealed
  /** The file's bytes: chunks of CHUNK bytes (the last one shorter), each its nonce then its ciphertext. */
  readonly body: Blob
  /** The id of the upload session its last try opened, sealed (absent before any). */
  readonly session?: Sealed
}

const CHUNK = 1 << 20
const NONCE_BYTES = 12
const TAG_BYTES = 16

const chunkName = (id: string, index: number): string => `${id}/${index}`
const sessionName = (id: string): string => `${id}/session`

/** The file's bytes sealed chunk by chunk: never more than a chunk of plaintext in memory at once. */
async function sealedBody(id: string, file: File): Promise<Blob> {
  const parts: Uint8Array<ArrayBuffer>[] = []
  for (let offset = 0, index = 0; offset < file.size; offset += CHUNK, index++) {
    const sealed = await sealWithStorageKey(chunkName(id, index), new Uint8Array(await file.slice(offset, offset + CHUNK).arrayBuffer()))
    parts.push(new Uint8Array(sealed.iv), new Uint8Array(sealed.data))
  }
  return new Blob(parts)
}

/** The queued file, opened; null when it no longer opens (sealed under an ended sign-in). */
async function openedFile(id: string, queued: Queued): Promise<{ readonly file: File; readonly facts: QueuedFacts } | null> {
  const factBytes = await openWithStorageKey(id, queued.facts)
  if (factBytes === null) return null
  const facts = decodedValue<QueuedFacts>(factBytes)
  const parts: Uint8Array<ArrayBuffer>[] = []
  const step = NONCE_BYTES + CHUNK + TAG_BYTES
  for (let offset = 0, index = 0; offset < queued.body.size; offset += step, index++) {
    const piece = new Uint8Array(await queued.body.slice(offset, offset + step).arrayBuffer())
    const plain = await openWithStorageKey(chunkName(id, index), { iv: piece.subarray(0, NONCE_BYTES), data: piece.subarray(NONCE_BYTES) })
    if (plain === null) return null
    parts.push(new Uint8Array(plain))
  }
  const file = new File(parts, facts.name, { type: facts.type, lastModified: facts.lastModified })
  return file.size === facts.size ? { file, facts } : null
}

/** Drops every queued upload (signed out, or the account deleted: they can never be opened or sent); answers how many there were. */
export async function dropQueuedUploads(): Promise<number> {
  const count = (await keys(queue)).length
  await clear(queue)
  return count
}

export interface UploadItem {
  readonly id: string
  readonly name: string
  readonly size: number
  /** Where its upload is, as the library last told (null before it starts, and when it starts again). */
  readonly progress: UploadProgress | null
  readonly state: 'waiting' | 'sending' | 'stored' | 'present' | 'failed'
  readonly error?: unknown
}

/** Files sent at once. */
const PARALLEL = 2

/** What a FileSource states of its file besides its bytes. */
export type SourceFacts = Pick<FileSource, 'name' | 'type' | 'modified'>

/** A File's name (in the album), media type and modification time as a FileSource states them. */
const factsOf = (file: File, name: string): SourceFacts => ({
  name,
  type: typeOf({ name, type: file.type }),
  modified: file.lastModified > 0 ? file.lastModified : null,
})

/** A Blob (a File, or bytes gathered from a zip entry) as backupFile reads it: streamed, from `start`, as often as its way of sending needs. */
function blobFileSource(blob: Blob, facts: SourceFacts): FileSource {
  return {
    ...facts,
    size: blob.size,
    async *open(start = 0) {
      // Through the reader: ReadableStream is not async iterable in every browser.
      const reader = blob.slice(start).stream().getReader()
      try {
        for (;;) {
          const { done, value } = await reader.read()
          if (done) return
          yield value
        }
      } finally {
        await reader.cancel().catch(() => {})
      }
    },
  }
}

/**
 * The describe option of backupFile and replaceFile: a photo's derivatives and capture time, made
 * in a worker; a video's length, size and poster frame, read by the page's player (video-poster.ts).
 */
const describeIn = (file: Blob, type: string) => (): Promise<MediaFacts> => (isVideo(type) ? describeVideo(file) : inWorker((worker) => worker.describe(file)))

/** What backupFile and replaceFile are given for a file: its bytes, and how it is described. */
export interface Sending {
  readonly source: FileSource
  readonly describe: () => Promise<MediaFacts>
}

/**
 * A photo (up to IN_MEMORY_FILE_MAX) read once, whole: both encryption passes and the worker's
 * derivatives use that read (the worker gets a Blob of the bytes in memory, not the file again);
 * its keys then follow from its content, so the same photo in two albums is stored once
 * (decision 0030).
 */
export function sendingHeld(bytes: Uint8Array<ArrayBuffer>, facts: SourceFacts): Sending {
  return { source: memorySource(bytes, facts), describe: describeIn(new Blob([bytes], { type: facts.type }), facts.type) }
}

/** A larger file (a long video), streamed: read once, sent in parts as it is read (decision 0034). */
export const sendingStreamed = (blob: Blob, facts: SourceFacts): Sending => ({ source: blobFileSource(blob, facts), describe: describeIn(blob, facts.type) })

/** What backupFile and replaceFile are given for a picked file: held (sendingHeld) up to IN_MEMORY_FILE_MAX, else streamed. */
async function sending(file: File, name = file.name): Promise<Sending> {
  const facts = factsOf(file, name)
  return file.size > IN_MEMORY_FILE_MAX ? sendingStreamed(file, facts) : sendingHeld(new Uint8Array(await file.arrayBuffer()), facts)
}

/** Stores a new version of a photo (replaceFile); `onProgress` is told where it is. */
export async function replacePhoto(model: AlbumModel, assetId: string, file: File, onProgress?: (progress: UploadProgress) => void): Promise<BackupResult> {
  const { source, describe } = await sending(file)
  return replaceFile({ ...model.library, albumId: model.albumId }, assetId, source, { describe, ...(onProgress === undefined ? {} : { onProgress }) })
}

/** An album's uploads: what this page added, and what a page before it left unfinished. */
export class Uploads {
  readonly #model: AlbumModel
  #items: UploadItem[] = []
  readonly #files = new Map<string, Picked>()
  #adding = 0
  readonly #listeners = new Set<() => void>()
  #running = 0
  #closed = false
  /**
   * By asset id (it follows from the content): when the last file of this page sending that
   * content is done. Copies go one after another: the server pairs a manifest with an open upload
   * session of its original, so two copies' sessions open at once could be taken for one another
   * (the photo would get the other's thumbnail); the later copy then finds the photo stored.
   */
  readonly #lastOfContent = new Map<string, Promise<void>>()

  constructor(model: AlbumModel) {
    this.#model = model
  }

  get items(): readonly UploadItem[] {
    return this.#items
  }

  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  #notify(): void {
    for (const listener of this.#listeners) listener()
  }

  #progressTimer: ReturnType<typeof setTimeout> | null = null

  /** Progress alone is told at most ten times a second (the library tells it for every 64 KiB piece). */
  #update(id: string, change: Partial<UploadItem>, progressOnly = false): void {
    this.#items = this.#items.map((item) => (item.id === id ? { ...item, ...change } : item))
    if (!progressOnly) this.#notify()
    else
      this.#progressTimer ??= setTimeout(() => {
        this.#progressTimer = null
        this.#notify()
      }, 100)
  }

  #enqueue(id: string, picked: Picked): void {
    this.#files.set(id, picked)
    this.#items = [...this.#items, { id, name: picked.name, size: picked.file.size, progress: null, state: 'waiting' }]
  }

  /** Whether files are still being read into the queue (a folder being walked): more may come. */
  get adding(): boolean {
    return this.#adding > 0
  }

  /** Continues the files a page before this one left in the queue for this album (those that no longer open are dropped). */
  async resume(): Promise<void> {
    const left: { id: string; picked: Picked; addedAt: number }[] = []
    for (const [id, queued] of await entries<string, Queued>(queue)) {
      const opened = await openedFile(id, queued)
      if (opened === null) await del(id, queue)
      else if (opened.facts.albumId === this.#model.albumId)
        left.push({ id, picked: { file: opened.file, name: opened.facts.name }, addedAt: opened.facts.addedAt })
    }
    left.sort((a, b) => a.addedAt - b.addedAt)
    for (const queued of left) if (!this.#files.has(queued.id)) this.#enqueue(queued.id, queued.picked)
    this.#pump()
  }

  /**
   * Queues files (kept sealed in IndexedDB until stored) as they come, each starting as soon as
   * it is queued: a folder being walked is streamed in, not listed first (lib/picked.ts).
   */
  async add(files: Iterable<Picked> | AsyncIterable<Picked>): Promise<void> {
    const now = Date.now()
    let n = 0
    this.#adding++
    this.#notify()
    try {
      for await (const { file, name } of files) {
        if (this.#closed) return
        const id = crypto.randomUUID()
        const facts: QueuedFacts = {
          albumId: this.#model.albumId,
          name,
          type: typeOf({ name, type: file.type }),
          size: file.size,
          lastModified: file.lastModified,
          addedAt: now + n++,
        }
        const queued: Queued = { facts: await sealWithStorageKey(id, encodedValue(facts)), body: await sealedBody(id, file) }
        await set(id, queued, queue)
        this.#enqueue(id, { file, name })
        this.#pump()
      }
    } finally {
      this.#adding--
      this.#notify()
    }
  }

  /** Sends the failed files again. */
  retry(): void {
    for (const item of this.#items) if (item.state === 'failed') this.#update(item.id, { state: 'waiting', progress: null })
    this.#pump()
  }

  /** Drops a failed file from the queue. */
  async remove(id: string): Promise<void> {
    await del(id, queue)
    this.#files.delete(id)
    this.#items = this.#items.filter((item) => item.id !== id)
    this.#notify()
  }

  /** Forgets the finished files of the list (the queue holds only unfinished ones). */
  clearFinished(): void {
    this.#items = this.#items.filter((item) => item.state !== 'stored' && item.state !== 'present')
    this.#notify()
  }

  #pump(): void {
    for (;;) {
      if (this.#closed || this.#running >= PARALLEL) return
      const next = this.#items.find((item) => item.state === 'waiting')
      if (next === undefined) {
        this.#notify()
        return
      }
      this.#running++
      this.#update(next.id, { state: 'sending' })
      void this.#send(next.id).finally(() => {
        this.#running--
        this.#pump()
      })
    }
  }

  /** Ends the upload session an earlier try of this file left open (a page closed or reloaded), if any: see the top of the file. */
  async #endLeftSession(id: string): Promise<void> {
    const queued = await get<Queued>(id, queue)
    if (queued?.session === undefined) return
    const uploadId = await openWithStorageKey(sessionName(id), queued.session)
    // Already ended (committed, aborted or expired): the server answers 404, which is as good.
    if (uploadId !== null) await this.#model.library.client.abortUploadSession(new TextDecoder().decode(uploadId)).catch(() => {})
    await set(id, { facts: queued.facts, body: queued.body }, queue)
  }

  /** Keeps the id of the session this try opened with the queued file. */
  async #sessionOpened(id: string, uploadId: string): Promise<void> {
    const queued = await get<Queued>(id, queue)
    if (queued !== undefined) await set(id, { ...queued, session: await sealWithStorageKey(sessionName(id), new TextEncoder().encode(uploadId)) }, queue)
  }

  async #send(id: string): Promise<void> {
    const { file, name } = this.#files.get(id)!
    const target = { ...this.#model.library, albumId: this.#model.albumId }
    let stage: UploadProgress['stage'] | null = null
    let sent = () => {}
    const done = new Promise<void>((resolve) => (sent = resolve))
    let content: string | null = null
    try {
      await this.#endLeftSession(id)
      const { source, describe } = await sending(file, name)
      const result = await backupFile(target, source, {
        assetIdOf: async (contentSha256) => {
          const assetId = await assetIdFor(target.masterKey, target.albumId, contentSha256)
          const before = this.#lastOfContent.get(assetId)
          content = assetId
          this.#lastOfContent.set(assetId, done)
          await before
          return assetId
        },
        isStored: (assetId) => this.#model.holds(assetId),
        onUploadOpened: (uploadId) => this.#sessionOpened(id, uploadId),
        describe,
        // A new stage is drawn at once, the bytes within one ten times a second at most.
        onProgress: (progress) => {
          this.#update(id, { progress }, progress.stage === stage)
          stage = progress.stage
        },
      })
      await del(id, queue)
      this.#update(id, { state: result.status })
      this.#files.delete(id)
      if (result.status === 'stored') await this.#model.refresh()
    } catch (error) {
      this.#update(id, { state: 'failed', error })
    } finally {
      // The next copy of this content (if any) goes now: it finds the photo stored (the album refreshed above).
      sent()
      if (content !== null && this.#lastOfContent.get(content) === done) this.#lastOfContent.delete(content)
    }
  }

  /** Stops starting files (those in flight finish; what is left waits in the queue for the next visit). */
  close(): void {
    this.#closed = true
    this.#listeners.clear()
  }
}
