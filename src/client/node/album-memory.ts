// What this device remembers of each album's history (../history.ts AlbumMemoryStore), in the
// config folder's state.sqlite beside the sync state: the head of its last passing check, the
// entries through it, and its writes since. On the sync state's own connection while a backup
// runs (a write per file); a command that keeps none opens the file per call.
import { closeSync, openSync } from 'node:fs'
import { DatabaseSync } from 'node:sqlite'
import { EMPTY_HEAD, type AlbumHandOver, type HandedOverAlbum } from '../format/album-chain.ts'
import type { AlbumMemory, AlbumMemoryStore, OwnWrite } from '../history.ts'

const SCHEMA = `
CREATE TABLE IF NOT EXISTS album_heads (
  album_id TEXT PRIMARY KEY,
  seq INTEGER NOT NULL,
  count INTEGER NOT NULL,
  digest BLOB NOT NULL,
  checked_at INTEGER NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS album_entries (
  album_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  manifest_hash TEXT NOT NULL,
  PRIMARY KEY (album_id, seq)
) STRICT;
CREATE TABLE IF NOT EXISTS album_own_writes (
  album_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  manifest_hash TEXT NOT NULL,
  asset_id TEXT NOT NULL,
  action TEXT NOT NULL,
  PRIMARY KEY (album_id, seq, manifest_hash)
) STRICT;
`

/** The album memory on an open connection (node/state.ts's, which keeps one open while a command runs): its tables made when missing. */
export function albumMemoryOn(db: DatabaseSync): AlbumMemoryStore {
  db.exec(SCHEMA)
  const headOf = db.prepare('SELECT seq, count, digest FROM album_heads WHERE album_id = ?')
  const writesOf = db.prepare('SELECT seq, manifest_hash, asset_id, action FROM album_own_writes WHERE album_id = ? ORDER BY seq')
  const entriesOf = db.prepare('SELECT seq, manifest_hash FROM album_entries WHERE album_id = ?')
  const addEntry = db.prepare('INSERT OR REPLACE INTO album_entries (album_id, seq, manifest_hash) VALUES (?, ?, ?)')
  const setHead = db.prepare(
    `INSERT INTO album_heads (album_id, seq, count, digest, checked_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (album_id) DO UPDATE SET seq = excluded.seq, count = excluded.count, digest = excluded.digest, checked_at = excluded.checked_at`,
  )
  const dropWrites = db.prepare('DELETE FROM album_own_writes WHERE album_id = ? AND seq <= ?')
  // Two writes the server answered with one position are both kept: the check finds at most one there.
  const addWrite = db.prepare('INSERT OR IGNORE INTO album_own_writes (album_id, seq, manifest_hash, asset_id, action) VALUES (?, ?, ?, ?, ?)')
  const heads = db.prepare('SELECT album_id, seq, count, digest FROM album_heads')
  const allWrites = db.prepare('SELECT album_id, seq, manifest_hash, asset_id, action FROM album_own_writes ORDER BY album_id, seq')
  const adoptHead = db.prepare('INSERT OR IGNORE INTO album_heads (album_id, seq, count, digest, checked_at) VALUES (?, ?, ?, ?, ?)')
  const inTransaction = (steps: () => void): void => {
    db.exec('BEGIN IMMEDIATE')
    try {
      steps()
      db.exec('COMMIT')
    } catch (error) {
      db.exec('ROLLBACK')
      throw error
    }
  }
  return {
    async load(albumId): Promise<AlbumMemory | null> {
      const head = headOf.get(albumId) as { seq: number; count: number; digest: Uint8Array } | undefined
      const writes = writesOf.all(albumId) as { seq: number; manifest_hash: string; asset_id: string; action: string }[]
      if (head === undefined && writes.length === 0) return null
      const ownWrites: OwnWrite[] = writes.map((row) => ({ seq: row.seq, manifestHash: row.manifest_hash, assetId: row.asset_id, action: row.action }))
      const entries = entriesOf.all(albumId) as { seq: number; manifest_hash: string }[]
      return {
        head: head === undefined ? EMPTY_HEAD : { ...head, digest: new Uint8Array(head.digest) },
        checkedEntries: new Map(entries.map((row) => [row.seq, row.manifest_hash])),
        ownWrites,
      }
    },
    async checked(albumId, head, entries) {
      inTransaction(() => {
        // Entries up to the head checked before are the same (the check compared their digest): only the new ones are added.
        for (const [seq, hash] of entries) addEntry.run(albumId, seq, hash)
        setHead.run(albumId, head.seq, head.count, head.digest, Date.now())
        dropWrites.run(albumId, head.seq)
      })
    },
    async wrote(albumId, write) {
      addWrite.run(albumId, write.seq, write.manifestHash, write.assetId, write.action)
    },
    async handOver(): Promise<AlbumHandOver> {
      const albums = new Map<string, { head: HandedOverAlbum['head']; writes: OwnWrite[] }>()
      const albumOf = (albumId: string) => albums.get(albumId) ?? albums.set(albumId, { head: EMPTY_HEAD, writes: [] }).get(albumId)!
      for (const row of heads.all() as { album_id: string; seq: number; count: number; digest: Uint8Array }[])
        albumOf(row.album_id).head = { seq: row.seq, count: row.count, digest: new Uint8Array(row.digest) }
      for (const row of allWrites.all() as { album_id: string; seq: number; manifest_hash: string; asset_id: string; action: string }[])
        albumOf(row.album_id).writes.push({ seq: row.seq, manifestHash: row.manifest_hash, assetId: row.asset_id, action: row.action })
      return albums
    },
    async adopt(albums) {
      inTransaction(() => {
        for (const [albumId, { head, writes }] of albums) {
          // This device's own memory of an album, if any, stays: what it checked itself.
          if (head.seq > 0) adoptHead.run(albumId, head.seq, head.count, head.digest, Date.now())
          for (const write of writes) addWrite.run(albumId, write.seq, write.manifestHash, write.assetId, write.action)
        }
      })
    },
  }
}

/**
 * The album memory in the SQLite database `file` (the config folder's state.sqlite) for a
 * command that keeps no connection open: each call opens the file and closes it again.
 */
export function albumMemoryFile(file: string): AlbumMemoryStore {
  const withStore = async <T>(use: (store: AlbumMemoryStore) => Promise<T>): Promise<T> => {
    closeSync(openSync(file, 'a', 0o600)) // private before SQLite creates it, as node/state.ts does
    const db = new DatabaseSync(file)
    try {
      db.exec('PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 5000;')
      return await use(albumMemoryOn(db))
    } finally {
      db.close()
    }
  }
  return {
    load: (albumId) => withStore((store) => store.load(albumId)),
    checked: (albumId, head, entries) => withStore((store) => store.checked(albumId, head, entries)),
    wrote: (albumId, write) => withStore((store) => store.wrote(albumId, write)),
    handOver: () => withStore((store) => store.handOver()),
    adopt: (albums) => withStore((store) => store.adopt(albums)),
  }
}
