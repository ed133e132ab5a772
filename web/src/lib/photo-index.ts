// The photo index (docs/decisions/0053-record-index-sealed-in-browser.md): the name, album and
// thumbnail of each photo this browser opened, kept so that the moderation record can still name
// a photo once the operator took it down and its files are withheld (lib/record-photos.ts).
// Its own IndexedDB database, 'coffer-photo-index', one record per photo beside a directory
// (lib/photo-index-records.ts), all sealed under the sign-in's storage key (lib/store.ts): after
// a sign-out nothing of it opens, and it is dropped then, at "forget this browser" (a sign-out)
// and at every sign-in (a new sign-in, perhaps of another account, never reads an earlier one's).
// Bounded: the most recent 2,000 photos and 32 MiB (photo-index-records.ts LIMITS).
//
// Off the gallery's path: the album page hands over what it already decrypted (remember), and
// the writes happen a second later, in one transaction for what arrived meanwhile, under a Web
// Lock so that two tabs never write the directory over each other. A write that fails (signed
// out meanwhile, the storage full) loses only what it carried; nothing is said of it (the app
// logs nothing in the browser).
import { clear, createStore, get, promisifyRequest } from 'idb-keyval'
import { Lru } from './lru.ts'
import { admit, DIRECTORY, LIMITS, newRecordKey, openDirectory, openPhoto, sealDirectory, sealedSize, sealPhoto, type Listed } from './photo-index-records.ts'
import { isSealed, type Sealed } from './sealed.ts'
import { openWithStorageKey, sealWithStorageKey } from './store.ts'

const db = createStore('coffer-photo-index', 'photos')
const LOCK = 'coffer-photo-index'
/** Writes wait this long, so that the tiles of a screen (and the next) go in one transaction. */
const WRITE_AFTER_MS = 1000

/** A photo the page opened, as the index is handed it. */
export interface SeenPhoto {
  readonly assetId: string
  readonly albumId: string
  /** The metadata blob hash of the version opened: a photo replaced since is kept again. */
  readonly version: string
  readonly name: string
  /** Its decrypted thumbnail (the 512-pixel one, never the preview), or null when it has none. */
  readonly thumbnail: Blob | null
}

/** A photo the index kept: its name and thumbnail as they were when this browser last opened it. */
export interface KeptPhoto {
  readonly albumId: string
  readonly name: string
  readonly thumbnail: Blob | null
}

/** Waiting to be written, by asset id (the latest wins). */
const waiting = new Map<string, SeenPhoto>()
/** Being written now: still answered from here until the write is done. */
let writing = new Map<string, SeenPhoto>()
/** What this page has handed over already (`asset@version`): seen again, it is not written again. */
const handed = new Lru<string, true>(LIMITS.photos)
let timer: ReturnType<typeof setTimeout> | null = null

/** Keeps a photo the page opened (later, in a batch). Never throws, never waits. */
export function rememberPhoto(photo: SeenPhoto): void {
  const key = `${photo.assetId}@${photo.version}`
  if (handed.get(key) !== undefined) return
  handed.set(key, true)
  waiting.delete(photo.assetId)
  waiting.set(photo.assetId, photo)
  // Bounded like the index: a page that opens photos faster than they are written drops the oldest.
  for (const assetId of waiting.keys()) {
    if (waiting.size <= LIMITS.photos) break
    waiting.delete(assetId)
  }
  timer ??= setTimeout(() => {
    timer = null
    void navigator.locks.request(LOCK, writeWaiting).catch(() => {})
  }, WRITE_AFTER_MS)
}

async function writeWaiting(): Promise<void> {
  if (waiting.size === 0) return
  writing = new Map(waiting)
  waiting.clear()
  try {
    await write([...writing.values()])
  } finally {
    writing = new Map()
  }
}

async function write(batch: readonly SeenPhoto[]): Promise<void> {
  const stored = await get<unknown>(DIRECTORY, db)
  const opened = isSealed(stored) ? await openDirectory(openWithStorageKey, stored) : null
  // No directory that opens: whatever is stored was sealed under an ended sign-in, and goes.
  const fresh = opened === null
  const listed = opened ?? []
  const versions = new Map(listed.map((l) => [l.assetId, l.version]))
  const touched: string[] = []
  const added: Listed[] = []
  const records = new Map<string, Sealed>()
  for (const photo of batch) {
    if (versions.get(photo.assetId) === photo.version) {
      touched.push(photo.assetId)
      continue
    }
    const thumbnail = photo.thumbnail === null ? null : { type: photo.thumbnail.type, bytes: new Uint8Array(await photo.thumbnail.arrayBuffer()) }
    const record = newRecordKey()
    const sealed = await sealPhoto(sealWithStorageKey, record, { assetId: photo.assetId, albumId: photo.albumId, name: photo.name, thumbnail })
    records.set(record, sealed)
    added.push({ assetId: photo.assetId, record, version: photo.version, size: sealedSize(sealed) })
  }
  const admitted = admit(listed, touched, added)
  const directory = await sealDirectory(sealWithStorageKey, admitted.listed)
  await db('readwrite', (store) => {
    if (fresh) store.clear()
    for (const record of admitted.evicted) store.delete(record)
    for (const record of admitted.written) store.put(records.get(record), record)
    store.put(directory, DIRECTORY)
    return promisifyRequest(store.transaction)
  })
}

/** The photos of `assetIds` the index keeps (those waiting to be written too); none once signed out. */
export async function keptPhotos(assetIds: readonly string[]): Promise<Map<string, KeptPhoto>> {
  const kept = new Map<string, KeptPhoto>()
  for (const assetId of assetIds) {
    const photo = waiting.get(assetId) ?? writing.get(assetId)
    if (photo !== undefined) kept.set(assetId, { albumId: photo.albumId, name: photo.name, thumbnail: photo.thumbnail })
  }
  const stored = await get<unknown>(DIRECTORY, db)
  const listed = isSealed(stored) ? await openDirectory(openWithStorageKey, stored) : null
  if (listed === null) return kept
  const wanted = new Set(assetIds.filter((assetId) => !kept.has(assetId)))
  for (const { assetId, record } of listed) {
    if (!wanted.has(assetId)) continue
    const sealed = await get<unknown>(record, db)
    // Gone when a write in another tab pushed it out since the directory was read.
    const photo = isSealed(sealed) ? await openPhoto(openWithStorageKey, record, sealed, assetId) : null
    if (photo !== null)
      kept.set(assetId, {
        albumId: photo.albumId,
        name: photo.name,
        thumbnail: photo.thumbnail === null ? null : new Blob([photo.thumbnail.bytes as Uint8Array<ArrayBuffer>], { type: photo.thumbnail.type }),
      })
  }
  return kept
}

/** Drops the index: what waits to be written, and every record (after a write in flight). */
export async function dropPhotoIndex(): Promise<void> {
  waiting.clear()
  writing = new Map()
  handed.clear()
  if (timer !== null) clearTimeout(timer)
  timer = null
  await navigator.locks.request(LOCK, () => clear(db))
}
