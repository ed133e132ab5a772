// Named albums (docs/client-format.md, "Albums"). The server knows an album by a UUID only; its
// name lives in the album itself, encrypted like everything else: the album's record is an
// asset with empty content, media type ALBUM_RECORD_TYPE and the album's name as its metadata
// name. The album id follows from the name and the asset id from the (empty) content
// (format/ids.ts), so every device finds both without asking anyone, and creating an album
// twice, or on two devices at once, makes one.
import { sha256 } from '@noble/hashes/sha2.js'
import type { CofferClient, Feed } from '../sdk/client.ts'
import { backupFile, restoreFile, type BackupTarget, type RestoredFile, type RestoreSource } from './files.ts'
import { albumIdFor, albumName, assetIdFor } from './format/ids.ts'

export const ALBUM_RECORD_TYPE = 'application/vnd.coffer.album'

/** An account's keys and client, as the album functions need them. */
export type Library = Omit<BackupTarget, 'albumId' | 'protocolVersion'> & Pick<RestoreSource, 'identityPublicKey' | 'verify'>

export interface NamedAlbum {
  readonly albumId: string
  /** null when the album has no readable record (made by another client, or its record is damaged). */
  readonly name: string | null
  readonly protocolVersion: string
}

const recordIdOf = (library: Library, albumId: string): Promise<string> => assetIdFor(library.masterKey, albumId, sha256(new Uint8Array(0)))

/** The album named `name`, provisioned and its record created when they are not yet. Answers its id. */
export async function openAlbum(library: Library, name: string): Promise<NamedAlbum> {
  const normalized = albumName(name)
  const albumId = await albumIdFor(library.masterKey, normalized)
  const { protocol_version: protocolVersion } = await library.client.provisionAlbum(albumId)
  await backupFile(
    { ...library, albumId, protocolVersion },
    { name: normalized, size: 0, type: ALBUM_RECORD_TYPE, modified: null, open: () => [new Uint8Array(0)] },
  )
  return { albumId, name: normalized, protocolVersion }
}

/** Every feed entry of an album, page by page, oldest first. */
export async function* feedEntries(client: CofferClient, albumId: string): AsyncGenerator<Feed['entries'][number]> {
  let after = 0
  for (;;) {
    const page = await client.feed(albumId, after, 1000)
    yield* page.entries
    if (page.entries.length === 0 || page.next_after === after) return
    after = page.next_after
  }
}

/** The live assets of an album: each asset's latest entry, when that is not a delete, in feed order. */
export async function liveEntries(client: CofferClient, albumId: string): Promise<Feed['entries'][number][]> {
  const latest = new Map<string, Feed['entries'][number]>()
  for await (const entry of feedEntries(client, albumId)) {
    latest.delete(entry.asset_id) // re-inserted below: a Map keeps insertion order, so the order is of the latest entries
    if (entry.action !== 'delete') latest.set(entry.asset_id, entry)
  }
  return [...latest.values()]
}

/** The latest feed entry of a live asset of the album, for restoreFile; null when it has none (or it was deleted). */
export async function findAssetEntry(client: CofferClient, albumId: string, assetId: string): Promise<Feed['entries'][number] | null> {
  return (await liveEntries(client, albumId)).find((entry) => entry.asset_id === assetId) ?? null
}

/** The account's albums with their names, read from their records. */
export async function namedAlbums(library: Library): Promise<NamedAlbum[]> {
  const { albums } = await library.client.listAlbums()
  return Promise.all(
    albums.map(async (album) => {
      const recordId = await recordIdOf(library, album.album_id)
      let name: string | null = null
      for await (const entry of feedEntries(library.client, album.album_id)) {
        if (entry.asset_id !== recordId) continue
        const record = await restoreFile({ ...library, albumId: album.album_id }, entry).catch(() => null)
        if (record?.metadata.type === ALBUM_RECORD_TYPE) name = record.metadata.name
        break
      }
      return { albumId: album.album_id, name, protocolVersion: album.protocol_version }
    }),
  )
}

/** The album named `name` among the account's, or null. */
export async function findAlbum(library: Library, name: string): Promise<NamedAlbum | null> {
  const albumId = await albumIdFor(library.masterKey, albumName(name))
  const { albums } = await library.client.listAlbums()
  const found = albums.find((a) => a.album_id === albumId)
  return found === undefined ? null : { albumId, name: albumName(name), protocolVersion: found.protocol_version }
}

/**
 * Assets albumFiles opens ahead of the one it yields: opening one is a signature check on this
 * thread and a download of its metadata blob, and the downloads of the next ones overlap it.
 */
const OPEN_AHEAD = 8

/**
 * An album's photos and videos (its record left out), each opened: metadata read, bytes on
 * demand. In feed order; up to OPEN_AHEAD opened ahead (a failure is thrown when its turn comes).
 */
export async function* albumFiles(library: Library, albumId: string): AsyncGenerator<RestoredFile> {
  const recordId = await recordIdOf(library, albumId)
  const entries = (await liveEntries(library.client, albumId)).filter((entry) => entry.asset_id !== recordId)
  const open = (entry: (typeof entries)[number]): Promise<RestoredFile> => {
    const opening = restoreFile({ ...library, albumId }, entry)
    opening.catch(() => {}) // handled when its turn comes; not an unhandled rejection meanwhile
    return opening
  }
  const opened = entries.slice(0, OPEN_AHEAD).map(open)
  for (let i = 0; i < entries.length; i++) {
    const ahead = entries[i + OPEN_AHEAD]
    if (ahead !== undefined) opened.push(open(ahead))
    yield await opened[i]!
  }
}
