// The sync engine's state store (../sync.ts SyncState) in a node:sqlite database: which file
// this device backed up as which asset, which upload sessions are open, the resume points
// (sealed) of uploads inside a file that a later run continues, and the keys (sealed) of the
// originals it sent under keys of their own, which another file of that content reuses. Every write is its
// own committed statement, so a crash or kill of the process loses at most the file in flight,
// which the next run then finds by its content. WAL at synchronous=NORMAL: a power loss may also
// lose the last few commits, which costs the same (the files are found again by content; an
// upload session whose record was lost waits for its expiry), and it saves three fsyncs per file
// on the event loop (decision 0017).
import { closeSync, openSync } from 'node:fs'
import { DatabaseSync } from 'node:sqlite'
import type { AlbumMemoryStore } from '../history.ts'
import type { SyncState } from '../sync.ts'
import { albumMemoryOn } from './album-memory.ts'

const SCHEMA = `
CREATE TABLE IF NOT EXISTS backed_up (
  album_id TEXT NOT NULL,
  path TEXT NOT NULL,
  size INTEGER NOT NULL,
  modified INTEGER,
  content_hash TEXT NOT NULL,
  asset_id TEXT NOT NULL,
  recorded_at INTEGER NOT NULL,
  identity TEXT,
  content_mac TEXT,
  version TEXT,
  PRIMARY KEY (album_id, path)
) STRICT;
CREATE INDEX IF NOT EXISTS backed_up_by_asset ON backed_up (album_id, asset_id);
CREATE TABLE IF NOT EXISTS deep_checked (
  blob_hash TEXT PRIMARY KEY,
  checked_at INTEGER NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS stored_originals (
  content_hash TEXT NOT NULL,
  chunk_size INTEGER NOT NULL,
  size INTEGER NOT NULL,
  sealed BLOB NOT NULL,
  PRIMARY KEY (content_hash, chunk_size)
) STRICT;
CREATE INDEX IF NOT EXISTS stored_originals_by_size ON stored_originals (size);
CREATE TABLE IF NOT EXISTS open_uploads (
  upload_id TEXT PRIMARY KEY,
  opened_at INTEGER NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS pending_uploads (
  album_id TEXT NOT NULL,
  path TEXT NOT NULL,
  size INTEGER NOT NULL,
  modified INTEGER,
  identity TEXT,
  upload_id TEXT NOT NULL,
  sealed BLOB NOT NULL,
  saved_at INTEGER NOT NULL,
  PRIMARY KEY (album_id, path)
) STRICT;
`

/** How long a pending upload's record is kept: well past the server's session lifetime (UPLOAD_SESSION_TTL_S, a day by default). */
const PENDING_UPLOAD_KEPT_MS = 7 * 24 * 3600 * 1000

/** What the store recorded of a file this device backed up (free-up reads it). */
export interface BackedUpFile {
  readonly albumId: string
  /** Relative to the folder backed up, "/" between names. */
  readonly path: string
  readonly size: number
  readonly modified: number | null
  /** SHA-256 of the plaintext, hex. */
  readonly contentHash: string
  readonly assetId: string
  readonly recordedAt: number
  /** The file's device and inode numbers when it was backed up (null in records older than them). */
  readonly identity: string | null
  /** The content's keyed hash (format/content.ts), hex; null in records older than it. */
  readonly contentMac: string | null
  /** The asset's version (its original's ciphertext hash) this device last wrote or saw at this path; null in records older than it. */
  readonly version: string | null
}

/** The sync state, and the albums' histories as this device checked them (album-memory.ts), on one connection. */
export interface SqliteSyncState extends SyncState, AlbumMemoryStore {
  /** The record of `path` backed up to the album; null when this device has none. */
  backedUpFile(albumId: string, path: string): BackedUpFile | null
  /** When the server's deep scan last found the blob intact (free-up), ms since the epoch; null when never. */
  deepCheckedAt(blobHash: string): number | null
  /** Records that the server's deep scan found these blobs intact at `at`. */
  rememberDeepCheck(blobHashes: readonly string[], at: number): void
  close(): void
}

/** Opens (or creates) the state database at `file`. */
export function openSyncState(file: string): SqliteSyncState {
  closeSync(openSync(file, 'a', 0o600)) // made private before SQLite creates it (its -wal and -shm files take its mode)
  const db = new DatabaseSync(file)
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;')
  const columns = new Set((db.prepare("SELECT name FROM pragma_table_info('backed_up')").all() as { name: string }[]).map((row) => row.name))
  // A store made before the local index knew identities and keyed hashes gains their columns.
  if (columns.size > 0 && !columns.has('identity'))
    db.exec('ALTER TABLE backed_up ADD COLUMN identity TEXT; ALTER TABLE backed_up ADD COLUMN content_mac TEXT;')
  // ... and the version it saw (decision 0047): null, any version, until the next write or match records it.
  if (columns.size > 0 && !columns.has('version')) db.exec('ALTER TABLE backed_up ADD COLUMN version TEXT;')
  db.exec(SCHEMA)
  // A pending upload of a file no run came back to: its session expired long ago (a day, by default).
  db.prepare('DELETE FROM pending_uploads WHERE saved_at < ?').run(Date.now() - PENDING_UPLOAD_KEPT_MS)
  // A record without an identity (made before identities were kept) matches on path, size and mtime alone, once: the match records the identity.
  const known = db.prepare(
    'SELECT asset_id, identity FROM backed_up WHERE album_id = ? AND path = ? AND size = ? AND modified IS ? AND (identity IS ? OR identity IS NULL)',
  )
  const learnIdentity = db.prepare('UPDATE backed_up SET identity = ? WHERE album_id = ? AND path = ?')
  const shared = db.prepare('SELECT COUNT(*) AS n FROM backed_up WHERE album_id = ? AND asset_id = ? AND path <> ?')
  const sharedPaths = (albumId: string, assetId: string, path: string): number => (shared.get(albumId, assetId, path) as { n: number }).n
  const remember = db.prepare(
    `INSERT INTO backed_up (album_id, path, size, modified, content_hash, asset_id, recorded_at, identity, content_mac, version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (album_id, path) DO UPDATE SET size = excluded.size, modified = excluded.modified, content_hash = excluded.content_hash,
       asset_id = excluded.asset_id, recorded_at = excluded.recorded_at, identity = excluded.identity, content_mac = excluded.content_mac,
       version = excluded.version`,
  )
  const opened = db.prepare('INSERT OR IGNORE INTO open_uploads (upload_id, opened_at) VALUES (?, ?)')
  const ended = db.prepare('DELETE FROM open_uploads WHERE upload_id = ?')
  const open = db.prepare('SELECT upload_id FROM open_uploads WHERE upload_id NOT IN (SELECT upload_id FROM pending_uploads) ORDER BY opened_at')
  const pending = db.prepare('SELECT size, modified, identity, upload_id, sealed FROM pending_uploads WHERE album_id = ? AND path = ?')
  const savePending = db.prepare(
    `INSERT INTO pending_uploads (album_id, path, size, modified, identity, upload_id, sealed, saved_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (album_id, path) DO UPDATE SET size = excluded.size, modified = excluded.modified, identity = excluded.identity,
       upload_id = excluded.upload_id, sealed = excluded.sealed, saved_at = excluded.saved_at`,
  )
  const dropPending = db.prepare('DELETE FROM pending_uploads WHERE album_id = ? AND path = ?')
  const original = db.prepare('SELECT size, sealed FROM stored_originals WHERE content_hash = ? AND chunk_size = ?')
  const keepOriginal = db.prepare(
    `INSERT INTO stored_originals (content_hash, chunk_size, size, sealed) VALUES (?, ?, ?, ?)
     ON CONFLICT (content_hash, chunk_size) DO UPDATE SET size = excluded.size, sealed = excluded.sealed`,
  )
  const originalOfSize = db.prepare('SELECT 1 FROM stored_originals WHERE size = ? LIMIT 1')
  const deepAt = db.prepare('SELECT checked_at FROM deep_checked WHERE blob_hash = ?')
  const deepSeen = db.prepare(
    'INSERT INTO deep_checked (blob_hash, checked_at) VALUES (?, ?) ON CONFLICT (blob_hash) DO UPDATE SET checked_at = excluded.checked_at',
  )
  const record = db.prepare(
    'SELECT size, modified, content_hash, asset_id, recorded_at, identity, content_mac, version FROM backed_up WHERE album_id = ? AND path = ?',
  )
  type Row = {
    size: number
    modified: number | null
    content_hash: string
    asset_id: string
    recorded_at: number
    identity: string | null
    content_mac: string | null
    version: string | null
  }
  const backedUpFile = (albumId: string, path: string): BackedUpFile | null => {
    const row = record.get(albumId, path) as Row | undefined
    return row === undefined
      ? null
      : {
          albumId,
          path,
          size: row.size,
          modified: row.modified,
          contentHash: row.content_hash,
          assetId: row.asset_id,
          recordedAt: row.recorded_at,
          identity: row.identity,
          contentMac: row.content_mac,
          version: row.version,
        }
  }
  return {
    ...albumMemoryOn(db),
    async knownAsset(albumId, path, size, modified, identity) {
      const row = known.get(albumId, path, size, modified, identity) as { asset_id: string; identity: string | null } | undefined
      if (row !== undefined && row.identity === null && identity !== null) learnIdentity.run(identity, albumId, path)
      return row?.asset_id ?? null
    },
    async lastBackedUp(albumId, path) {
      const file = backedUpFile(albumId, path)
      return file === null ? null : { ...file, sharedPaths: sharedPaths(albumId, file.assetId, path) }
    },
    async remember(entry) {
      remember.run(
        entry.albumId,
        entry.path,
        entry.size,
        entry.modified,
        entry.contentHash,
        entry.assetId,
        Date.now(),
        entry.identity,
        entry.contentMac,
        entry.version,
      )
    },
    async uploadOpened(uploadId) {
      opened.run(uploadId, Date.now())
    },
    async uploadEnded(uploadId) {
      ended.run(uploadId)
    },
    async openUploads() {
      return (open.all() as { upload_id: string }[]).map((row) => row.upload_id)
    },
    async pendingUpload(albumId, path) {
      const row = pending.get(albumId, path) as
        | { size: number; modified: number | null; identity: string | null; upload_id: string; sealed: Uint8Array }
        | undefined
      return row === undefined
        ? null
        : { size: row.size, modified: row.modified, identity: row.identity, uploadId: row.upload_id, sealed: new Uint8Array(row.sealed) }
    },
    async savePendingUpload(albumId, path, upload) {
      savePending.run(albumId, path, upload.size, upload.modified, upload.identity, upload.uploadId, upload.sealed, Date.now())
    },
    async dropPendingUpload(albumId, path) {
      dropPending.run(albumId, path)
    },
    async storedOriginal(contentHash, chunkSize) {
      const row = original.get(contentHash, chunkSize) as { size: number; sealed: Uint8Array } | undefined
      return row === undefined ? null : { size: row.size, sealed: new Uint8Array(row.sealed) }
    },
    async rememberOriginal(contentHash, chunkSize, size, sealed) {
      keepOriginal.run(contentHash, chunkSize, size, sealed)
    },
    async storesOriginalOfSize(size) {
      return originalOfSize.get(size) !== undefined
    },
    backedUpFile,
    deepCheckedAt(blobHash) {
      return (deepAt.get(blobHash) as { checked_at: number } | undefined)?.checked_at ?? null
    },
    rememberDeepCheck(blobHashes, at) {
      for (const hash of blobHashes) deepSeen.run(hash, at)
    },
    close() {
      db.close()
    },
  }
}
