// coffer-photos' search index (../search-sync.ts) kept in the config folder's state.sqlite,
// sealed (decision 0070): per album a header (where the index stands in the feed, the album's
// name and record entries) and its photos in chunks of up to CHUNK_ENTRIES, each row AES-256-GCM
// under a key derived from the account's master key, as the resume points and stored originals'
// keys are (format/resume.ts): HKDF-SHA256(master key, salt empty, "coffer/v1/search-index"), a
// random nonce per seal, the album id and the row's place as associated data (a row opens only
// where it was written). What is in plain: album ids (the server knows them; backed_up holds them
// too), how many chunks each album has and their sizes. Names, dates, places, cameras, favourite
// marks, captions, even asset ids: sealed. A refresh rewrites the header and the chunks it changed, in one
// transaction. A row that does not open (another account's, a damaged file) drops that album's
// index, which the next search builds again from the feed.
import { closeSync, openSync } from 'node:fs'
import { DatabaseSync } from 'node:sqlite'
import { concatBytes, utf8 } from '../../sdk/bytes.ts'
import { randomBytes } from '../format/bytes.ts'
import { GCM_NONCE_BYTES, hkdfSha256, KEY_BYTES } from '../format/keys.ts'
import { primitives, type AesGcm } from '../format/primitives.ts'
import type { AlbumIndexState, AlbumRefresh, IndexedAsset } from '../search-sync.ts'

export const SEARCH_INDEX_INFO = 'coffer/v1/search-index'
/**
 * The first byte of every sealed row: the layout below, version 2 (1 had no descriptions: an
 * index of version 1 does not open, so it is built again from the feeds, captions included).
 */
const SEALED_VERSION = 0x02
/** Photos per sealed chunk: a change reseals about 200 KB, and a library of 100,000 is 100 rows. */
export const CHUNK_ENTRIES = 1000

const SCHEMA = `
CREATE TABLE IF NOT EXISTS search_albums (
  album_id TEXT PRIMARY KEY,
  sealed BLOB NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS search_chunks (
  album_id TEXT NOT NULL,
  chunk INTEGER NOT NULL,
  sealed BLOB NOT NULL,
  PRIMARY KEY (album_id, chunk)
) STRICT;
`

/** An album's index as stored: where it stands, and its photos by chunk (a chunk may be empty). */
export interface StoredAlbumIndex {
  readonly state: AlbumIndexState
  readonly chunks: readonly (readonly IndexedAsset[])[]
}

export interface SearchStore {
  /** The albums the store has an index of. */
  albumIds(): string[]
  /** An album's index; null when there is none, or it does not open (then it is dropped). */
  load(albumId: string): Promise<StoredAlbumIndex | null>
  /** Applies a refresh to the album's index (`stored`, null for none) and writes what changed: the header and the chunks touched. Answers the new index. */
  update(albumId: string, stored: StoredAlbumIndex | null, refresh: AlbumRefresh): Promise<StoredAlbumIndex>
  /** Forgets an album's index (an album the account no longer reads). */
  drop(albumId: string): void
  close(): void
}

/** A photo as a chunk holds it, with short keys (a chunk is a JSON array of these). */
interface StoredAsset {
  a: string
  v: string
  u: number
  n: string
  t: string
  m: number | null
  c: number | null
  s?: IndexedAsset['metadata']['capturedSource']
  o?: number | null
  k?: [string | null, string | null]
  l?: [number, number]
  f?: 1
  d?: string
}

function stored(asset: IndexedAsset): StoredAsset {
  const { metadata } = asset
  return {
    a: asset.assetId,
    v: asset.version,
    u: asset.uploaded,
    n: metadata.name,
    t: metadata.type,
    m: metadata.modified,
    c: metadata.captured,
    ...(metadata.capturedSource === undefined ? {} : { s: metadata.capturedSource }),
    ...(metadata.capturedOffset === undefined ? {} : { o: metadata.capturedOffset }),
    ...(metadata.camera === undefined ? {} : { k: [metadata.camera.make ?? null, metadata.camera.model ?? null] }),
    ...(metadata.location === undefined ? {} : { l: [metadata.location.latitude, metadata.location.longitude] }),
    ...(metadata.favourite === true ? { f: 1 as const } : {}),
    ...(metadata.description === undefined ? {} : { d: metadata.description }),
  }
}

function indexed(row: StoredAsset): IndexedAsset {
  const [make, model] = row.k ?? [null, null]
  return {
    assetId: row.a,
    version: row.v,
    uploaded: row.u,
    metadata: {
      name: row.n,
      type: row.t,
      modified: row.m,
      captured: row.c,
      ...(row.s === undefined ? {} : { capturedSource: row.s }),
      ...(row.o === undefined ? {} : { capturedOffset: row.o }),
      ...(row.k === undefined ? {} : { camera: { ...(make === null ? {} : { make }), ...(model === null ? {} : { model }) } }),
      ...(row.l === undefined ? {} : { location: { latitude: row.l[0], longitude: row.l[1] } }),
      ...(row.f === 1 ? { favourite: true } : {}),
      ...(row.d === undefined ? {} : { description: row.d }),
    },
  }
}

/** What the header row holds: the state, and how many chunk rows there are. */
interface Header extends AlbumIndexState {
  readonly chunks: number
}

/** Associated data of a row: the label, the album and the row's place ("header", or the chunk's number). */
const aad = (albumId: string, place: string): Uint8Array =>
  concatBytes(utf8(SEARCH_INDEX_INFO), new Uint8Array([0]), utf8(albumId), new Uint8Array([0]), utf8(place))

async function sealJson(cipher: AesGcm, albumId: string, place: string, value: unknown): Promise<Uint8Array> {
  const nonce = randomBytes(GCM_NONCE_BYTES)
  return concatBytes(new Uint8Array([SEALED_VERSION]), nonce, await cipher.seal(nonce, aad(albumId, place), utf8(JSON.stringify(value))))
}

/** The value sealJson sealed at this place; null when it does not open. */
async function openJson<T>(cipher: AesGcm, albumId: string, place: string, sealed: Uint8Array): Promise<T | null> {
  if (sealed.length < 1 + GCM_NONCE_BYTES || sealed[0] !== SEALED_VERSION) return null
  const json = await cipher.open(sealed.subarray(1, 1 + GCM_NONCE_BYTES), aad(albumId, place), sealed.subarray(1 + GCM_NONCE_BYTES))
  if (json === null) return null
  try {
    return JSON.parse(new TextDecoder().decode(json)) as T
  } catch {
    return null
  }
}

/** Opens the search index in the state database at `file` (created 0600 when missing), sealed under `masterKey`. */
export async function openSearchStore(file: string, masterKey: Uint8Array): Promise<SearchStore> {
  if (masterKey.length !== KEY_BYTES) throw new TypeError(`master key: expected ${KEY_BYTES} bytes`)
  const cipher = await primitives().aesGcm(await hkdfSha256(masterKey, new Uint8Array(0), utf8(SEARCH_INDEX_INFO), KEY_BYTES))
  closeSync(openSync(file, 'a', 0o600)) // private before SQLite creates it, as node/state.ts
  const db = new DatabaseSync(file)
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;')
  db.exec(SCHEMA)
  const albums = db.prepare('SELECT album_id FROM search_albums ORDER BY album_id')
  const header = db.prepare('SELECT sealed FROM search_albums WHERE album_id = ?')
  const chunksOf = db.prepare('SELECT chunk, sealed FROM search_chunks WHERE album_id = ? ORDER BY chunk')
  const saveHeader = db.prepare('INSERT INTO search_albums (album_id, sealed) VALUES (?, ?) ON CONFLICT (album_id) DO UPDATE SET sealed = excluded.sealed')
  const saveChunk = db.prepare(
    'INSERT INTO search_chunks (album_id, chunk, sealed) VALUES (?, ?, ?) ON CONFLICT (album_id, chunk) DO UPDATE SET sealed = excluded.sealed',
  )
  const dropChunk = db.prepare('DELETE FROM search_chunks WHERE album_id = ? AND chunk = ?')
  const dropChunks = db.prepare('DELETE FROM search_chunks WHERE album_id = ?')
  const dropHeader = db.prepare('DELETE FROM search_albums WHERE album_id = ?')
  const drop = (albumId: string): void => {
    db.exec('BEGIN IMMEDIATE')
    try {
      dropChunks.run(albumId)
      dropHeader.run(albumId)
      db.exec('COMMIT')
    } catch (error) {
      db.exec('ROLLBACK')
      throw error
    }
  }

  return {
    albumIds: () => (albums.all() as { album_id: string }[]).map((row) => row.album_id),
    async load(albumId) {
      const row = header.get(albumId) as { sealed: Uint8Array } | undefined
      if (row === undefined) return null
      const head = await openJson<Header>(cipher, albumId, 'header', row.sealed)
      const chunks: IndexedAsset[][] = head === null ? [] : Array.from({ length: head.chunks }, () => [])
      let whole = head !== null
      for (const chunk of chunksOf.all(albumId) as { chunk: number; sealed: Uint8Array }[]) {
        const rows = whole && chunk.chunk < chunks.length ? await openJson<StoredAsset[]>(cipher, albumId, String(chunk.chunk), chunk.sealed) : null
        if (rows === null) {
          whole = false
          break
        }
        chunks[chunk.chunk] = rows.map(indexed)
      }
      if (!whole) {
        drop(albumId)
        return null
      }
      const { chunks: _count, ...state } = head!
      return { state, chunks }
    },
    async update(albumId, before, refresh) {
      const chunks = (before?.chunks ?? []).map((chunk) => [...chunk])
      const where = new Map<string, number>()
      chunks.forEach((chunk, at) => {
        for (const asset of chunk) where.set(asset.assetId, at)
      })
      const touched = new Set<number>()
      for (const assetId of refresh.removed) {
        const at = where.get(assetId)
        if (at === undefined) continue
        chunks[at] = chunks[at]!.filter((asset) => asset.assetId !== assetId)
        where.delete(assetId)
        touched.add(at)
      }
      for (const asset of refresh.put) {
        let at = where.get(asset.assetId)
        if (at !== undefined) chunks[at] = chunks[at]!.map((kept) => (kept.assetId === asset.assetId ? asset : kept))
        else {
          // New photos fill the last chunk, then start another: a change seals one or two chunks, not the album.
          at = chunks.length > 0 && chunks.at(-1)!.length < CHUNK_ENTRIES ? chunks.length - 1 : chunks.push([]) - 1
          chunks[at]!.push(asset)
          where.set(asset.assetId, at)
        }
        touched.add(at)
      }
      const sealedChunks = await Promise.all(
        [...touched].map(async (at) => [at, chunks[at]!.length === 0 ? null : await sealJson(cipher, albumId, String(at), chunks[at]!.map(stored))] as const),
      )
      const sealedHeader = await sealJson(cipher, albumId, 'header', { ...refresh.state, chunks: chunks.length } satisfies Header)
      db.exec('BEGIN IMMEDIATE')
      try {
        for (const [at, sealed] of sealedChunks) {
          if (sealed === null) dropChunk.run(albumId, at)
          else saveChunk.run(albumId, at, sealed)
        }
        saveHeader.run(albumId, sealedHeader)
        db.exec('COMMIT')
      } catch (error) {
        db.exec('ROLLBACK')
        throw error
      }
      return { state: refresh.state, chunks }
    },
    drop,
    close() {
      db.close()
    },
  }
}
