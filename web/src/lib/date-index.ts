// The date index (docs/decisions/0055-date-index-sealed-in-browser.md): each album's photos with
// their date taken and feed position, so that the Photos screen (lib/timeline.ts) orders every
// photo of the account without opening every photo's metadata at each opening. Its own IndexedDB
// database, 'coffer-dates': a sealed directory and sealed chunks of up to 5,000 photos
// (lib/date-index-records.ts), all under the sign-in's storage key (lib/store.ts) as the photo
// index is: after a sign-out nothing of it opens, and it is dropped then, at "forget this
// browser" and at every sign-in (app/session.tsx).
//
// Writes go under a Web Lock, so that two tabs never write the directory over each other; a tab
// that finds an album already further on in the stored directory leaves it (another tab read
// more of its feed). A write that fails (signed out meanwhile, the storage full) loses only what
// it carried: the next opening reads those photos' dates again.
import { clear, createStore, get, getMany, promisifyRequest } from 'idb-keyval'
import { AlbumDates, DIRECTORY, openChunk, openDirectory, sealChunk, sealDirectory, type ListedAlbum } from './date-index-records.ts'
import { isSealed } from './sealed.ts'
import { openWithStorageKey, sealWithStorageKey } from './store.ts'

const db = createStore('coffer-dates', 'dates')
const LOCK = 'coffer-dates'

async function directory(): Promise<Map<string, ListedAlbum> | null> {
  const stored = await get<unknown>(DIRECTORY, db)
  return isSealed(stored) ? openDirectory(openWithStorageKey, stored) : null
}

/**
 * Every album's dates as this browser kept them; an album whose chunks do not all open (written
 * over by another tab meanwhile, or sealed under an ended sign-in) is left out: read again.
 */
export async function readDateIndex(): Promise<Map<string, AlbumDates>> {
  const albums = new Map<string, AlbumDates>()
  const listed = await directory().catch(() => null)
  if (listed === null) return albums
  for (const [albumId, album] of listed) {
    try {
      const keys = album.chunks.map(([key]) => key)
      const stored = await getMany<unknown>(keys, db)
      const chunks = await Promise.all(
        keys.map(async (key, i) => [key, isSealed(stored[i]) ? await openChunk(openWithStorageKey, key, stored[i]) : null] as const),
      )
      if (chunks.every(([, photos]) => photos !== null))
        albums.set(albumId, new AlbumDates(album.through, chunks as [string, NonNullable<(typeof chunks)[number][1]>][]))
    } catch {
      // A chunk that does not decode: the album's dates are read again.
    }
  }
  return albums
}

/** Writes what changed of these albums' dates, and the directory (every album listed as it now is); albums gone from the account go. */
export async function writeDateIndex(albums: ReadonlyMap<string, AlbumDates>, live: ReadonlySet<string> | null = null): Promise<void> {
  await navigator.locks.request(LOCK, async () => {
    const stored = (await directory().catch(() => null)) ?? new Map<string, ListedAlbum>()
    const fresh = stored.size === 0
    const next = new Map(stored)
    const sealed: [string, unknown][] = []
    const deleted: string[] = []
    for (const [albumId, dates] of albums) {
      const theirs = stored.get(albumId)
      const { changed, emptied } = dates.takeChanges()
      // Another tab read further: its dates stay (ours are read again at the next opening).
      if (theirs !== undefined && theirs.through > dates.through) continue
      for (const [key, photos] of changed) sealed.push([key, await sealChunk(sealWithStorageKey, key, photos)])
      deleted.push(...emptied)
      next.set(albumId, dates.listed())
    }
    if (live !== null)
      for (const [albumId, album] of next) {
        if (live.has(albumId)) continue
        next.delete(albumId)
        deleted.push(...album.chunks.map(([key]) => key))
      }
    const sealedDirectory = await sealDirectory(sealWithStorageKey, next)
    await db('readwrite', (store) => {
      // No directory that opens: whatever is stored was sealed under an ended sign-in, and goes.
      if (fresh) store.clear()
      for (const key of deleted) store.delete(key)
      for (const [key, value] of sealed) store.put(value, key)
      store.put(sealedDirectory, DIRECTORY)
      return promisifyRequest(store.transaction)
    })
  })
}

/** Drops the index (after a write in flight). */
export async function dropDateIndex(): Promise<void> {
  await navigator.locks.request(LOCK, () => clear(db))
}
