// Uploads into an album (docs/decisions/0020-web-app.md, "The gallery"): each file backed up by
// src/client's backupFile on this page (it fetches), its derivatives and capture time made in a
// worker, two files at a time. The queue is kept in IndexedDB (a File is storable there), each
// file until it is stored: after a reload, opening the album continues what is left. A file
// sent twice is harmless: its asset id follows from its content, so backupFile finds it stored
// (isStored) or the server refuses a second create and it counts as already there.
import { createStore, del, entries, set } from 'idb-keyval'
import { replaceFile } from '../../../src/client/edits.ts'
import { backupFile, type BackupResult, type FileSource, type MediaFacts } from '../../../src/client/files.ts'
import type { AlbumModel } from './album.ts'
import { inWorker } from './pool.ts'

const queue = createStore('coffer-uploads', 'queue')

interface Queued {
  readonly id: string
  readonly userId: string
  readonly albumId: string
  readonly file: File
  readonly addedAt: number
}

/** Drops the account's queued uploads (it was deleted: they can never be sent). */
export async function dropQueuedUploadsOf(userId: string): Promise<void> {
  for (const [key, item] of await entries<IDBValidKey, Queued>(queue)) if (item.userId === userId) await del(key, queue)
}

export interface UploadItem {
  readonly id: string
  readonly name: string
  readonly size: number
  /** Bytes read so far by backupFile's two passes over the file (2 × size when done). */
  readonly read: number
  readonly state: 'waiting' | 'sending' | 'stored' | 'present' | 'failed'
  readonly error?: unknown
}

/** Files sent at once. */
const PARALLEL = 2

/** A File as backupFile reads it: twice, each read counted for the progress. */
export function fileSource(file: File, onRead: (bytes: number) => void): FileSource {
  return {
    name: file.name,
    size: file.size,
    type: file.type === '' ? 'application/octet-stream' : file.type,
    modified: file.lastModified > 0 ? file.lastModified : null,
    async *open() {
      // Through the reader: ReadableStream is not async iterable in every browser.
      const reader = file.stream().getReader()
      try {
        for (;;) {
          const { done, value } = await reader.read()
          if (done) return
          onRead(value.length)
          yield value
        }
      } finally {
        await reader.cancel().catch(() => {})
      }
    },
  }
}

/** The describe option of backupFile and replaceFile: the file's derivatives and capture time, made in a worker. */
export const describeIn = (file: File) => (): Promise<MediaFacts> => inWorker((worker) => worker.describe(file))

/** Stores a new version of a photo (replaceFile), its progress told as bytes read. */
export function replacePhoto(model: AlbumModel, assetId: string, file: File, onRead: (bytes: number) => void = () => {}): Promise<BackupResult> {
  return replaceFile({ ...model.library, albumId: model.albumId }, assetId, fileSource(file, onRead), { describe: describeIn(file) })
}

/** An album's uploads: what this page added, and what a page before it left unfinished. */
export class Uploads {
  readonly #model: AlbumModel
  readonly #userId: string
  #items: UploadItem[] = []
  readonly #files = new Map<string, File>()
  readonly #listeners = new Set<() => void>()
  #running = 0
  #closed = false

  constructor(model: AlbumModel, userId: string) {
    this.#model = model
    this.#userId = userId
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

  /** Progress alone is told at most ten times a second (a file is read in 64 KiB pieces). */
  #update(id: string, change: Partial<UploadItem>, progressOnly = false): void {
    this.#items = this.#items.map((item) => (item.id === id ? { ...item, ...change } : item))
    if (!progressOnly) this.#notify()
    else
      this.#progressTimer ??= setTimeout(() => {
        this.#progressTimer = null
        this.#notify()
      }, 100)
  }

  #enqueue(id: string, file: File): void {
    this.#files.set(id, file)
    this.#items = [...this.#items, { id, name: file.name, size: file.size, read: 0, state: 'waiting' }]
  }

  /** Continues the files a page before this one left in the queue for this album. */
  async resume(): Promise<void> {
    const left = (await entries<string, Queued>(queue)).map(([, queued]) => queued).filter((q) => q.userId === this.#userId && q.albumId === this.#model.albumId)
    left.sort((a, b) => a.addedAt - b.addedAt)
    for (const queued of left) if (!this.#files.has(queued.id)) this.#enqueue(queued.id, queued.file)
    this.#pump()
  }

  /** Queues files (kept in IndexedDB until stored) and starts sending. */
  async add(files: readonly File[]): Promise<void> {
    const now = Date.now()
    for (const [n, file] of files.entries()) {
      const queued: Queued = { id: crypto.randomUUID(), userId: this.#userId, albumId: this.#model.albumId, file, addedAt: now + n }
      await set(queued.id, queued, queue)
      this.#enqueue(queued.id, file)
    }
    this.#pump()
  }

  /** Sends the failed files again. */
  retry(): void {
    for (const item of this.#items) if (item.state === 'failed') this.#update(item.id, { state: 'waiting', read: 0 })
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
      if (next === undefined) return this.#notify()
      this.#running++
      this.#update(next.id, { state: 'sending' })
      void this.#send(next.id).finally(() => {
        this.#running--
        this.#pump()
      })
    }
  }

  async #send(id: string): Promise<void> {
    const file = this.#files.get(id)!
    let read = 0
    const target = { ...this.#model.library, albumId: this.#model.albumId }
    try {
      const result = await backupFile(
        target,
        fileSource(file, (bytes) => {
          read += bytes
          this.#update(id, { read }, true)
        }),
        { isStored: (assetId) => this.#model.holds(assetId), describe: describeIn(file) },
      )
      await del(id, queue)
      this.#update(id, { state: result.status, read: 2 * file.size })
      this.#files.delete(id)
      if (result.status === 'stored') await this.#model.refresh()
    } catch (error) {
      this.#update(id, { state: 'failed', error })
    }
  }

  /** Stops starting files (those in flight finish; what is left waits in the queue for the next visit). */
  close(): void {
    this.#closed = true
    this.#listeners.clear()
  }
}
