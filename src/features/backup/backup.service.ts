// coffer backup: an online, consistent copy of a running Coffer (decision 0011). A hold on blob
// removal is taken first, so that no maintenance pass on any instance removes a file while the
// copy is made; then the database is copied (SQLite: its online backup API, one consistent
// step; PostgreSQL: pg_dump, one snapshot), then every blob file the copy can name (SQLite:
// the hashes its rows name; PostgreSQL: every file in the folder, a superset), each verified
// against its name while it streams and fsynced; then the secret key file, and last a manifest
// that marks the backup complete. A backup never writes into a folder that holds anything.
import { randomUUID } from 'node:crypto'
import { mkdir, open, rename, rm, stat, writeFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import path from 'node:path'
import { backup as sqliteBackup, DatabaseSync } from 'node:sqlite'
import { openLocalFolderBlobStore } from '../../blob-store/local-folder.ts'
import { SECRET_KEY_FILE } from '../../crypto/secret-key.ts'
import type { Deps } from '../../deps.ts'
import { BackupError, copyDurably, entriesOf, exists, inPool, sha256OfFile, syncDirectory } from './files.ts'
import { runTool } from './tools.ts'

export const MANIFEST = 'manifest.json'
export const SQLITE_COPY = 'coffer.db'
export const POSTGRES_DUMP = 'coffer.pgdump'
export const BLOBS = 'blobs'
export const FORMAT = 'coffer-backup/1'

/** How long a hold lasts unless renewed, and how often a running backup renews it. */
const HOLD_TTL_MS = 10 * 60_000
const HOLD_RENEW_MS = 60_000
/** Blob copies in flight at once (each ends with an fsync). */
const COPY_WIDTH = 4

export interface BackupManifest {
  readonly format: typeof FORMAT
  readonly created_at: string
  readonly engine: 'sqlite' | 'postgres'
  /** The database copy, or null for --blobs-only. `schema`: the PostgreSQL schema dumped. */
  readonly database: { readonly file: string; readonly bytes: number; readonly sha256: string; readonly schema?: string } | null
  readonly blobs: { readonly count: number; readonly bytes: number }
  /** Whether secret.key is in the backup (then keep the backup as secret as the key). */
  readonly secret_key: boolean
  /** Hashes the database copy names whose files were not in the blob store (damage found by the backup). */
  readonly missing: readonly string[]
  /** Hashes whose files did not match their names (not copied). */
  readonly corrupt: readonly string[]
}

export interface BackupProgress {
  readonly phase: 'database' | 'blobs'
  readonly count: number
  readonly bytes: number
  /** Blobs to copy, when known. */
  readonly total: number | null
}

/** Refuses a destination that holds anything: a backup never mixes with, or overwrites, another. */
export async function prepareEmptyFolder(folder: string, what: string): Promise<void> {
  const present = await entriesOf(folder)
  if (present.length > 0)
    throw new BackupError(`${what} ${folder} is not empty (it holds ${present.slice(0, 3).join(', ')}${present.length > 3 ? ', ...' : ''})`)
  await mkdir(folder, { recursive: true })
}

/** An operator's hold (coffer gc hold), for a database copy coffer does not make itself. */
export async function holdRemovals(deps: Deps, reason: string, ttlMs: number): Promise<{ hold_id: string; expires_at: string }> {
  const holdId = randomUUID()
  const now = Date.now()
  await deps.storage.takeGcHold({ holdId, reason, createdAt: now, expiresAt: now + ttlMs })
  return { hold_id: holdId, expires_at: new Date(now + ttlMs).toISOString() }
}

/** A hold on blob removal for as long as `work` runs, renewed meanwhile; fails when it lapsed. */
async function holdingRemovals<T>(deps: Deps, reason: string, work: () => Promise<T>): Promise<T> {
  const holdId = randomUUID()
  const now = Date.now()
  await deps.storage.takeGcHold({ holdId, reason, createdAt: now, expiresAt: now + HOLD_TTL_MS })
  let lapsed = false
  const renew = async () => {
    const at = Date.now()
    if (!(await deps.storage.renewGcHold(holdId, at, at + HOLD_TTL_MS))) lapsed = true
  }
  // A failed renewal (the database briefly away) is tried again at the next tick; only a hold
  // found lapsed is fatal.
  const timer = setInterval(() => void renew().catch(() => {}), HOLD_RENEW_MS)
  try {
    const result = await work()
    await renew()
    if (lapsed)
      throw new BackupError(
        'the hold on blob removal lapsed while copying (the process stalled or the database was away for more than 10 minutes): files may be missing; take the backup again',
      )
    return result
  } finally {
    clearInterval(timer)
    await deps.storage.releaseGcHold(holdId).catch(() => {})
  }
}

/**
 * A blob the backup copies: `size` from the database copy's rows (null for a file the folder walk
 * found); `inDatabase` when the copy also holds its bytes as a manifest (a provenance blob).
 */
interface NamedBlob {
  readonly hash: string
  readonly size: number | null
  readonly inDatabase: boolean
}

async function copySqlite(deps: Deps, dest: string): Promise<{ database: NonNullable<BackupManifest['database']>; named: NamedBlob[] }> {
  if (deps.config.database.engine !== 'sqlite') throw new Error('not SQLite')
  const partial = path.join(dest, `${SQLITE_COPY}.part`)
  const source = new DatabaseSync(deps.config.database.file, { readOnly: true, timeout: deps.config.databaseWaitTimeoutS * 1000 })
  try {
    // One step copies every page under one read transaction: a consistent snapshot, taken in
    // the thread pool, beside the server's writes (WAL).
    await sqliteBackup(source, partial, { rate: 2 ** 31 - 1 })
  } finally {
    source.close()
  }
  const copy = new DatabaseSync(partial)
  let named: NamedBlob[]
  try {
    // A self-contained file (no -wal beside it), checked before anything is read from it.
    copy.exec('PRAGMA journal_mode = DELETE')
    const check = copy.prepare('PRAGMA quick_check').all() as Array<{ quick_check: string }>
    if (check[0]?.quick_check !== 'ok') throw new BackupError(`the database copy fails its check: ${check.map((row) => row.quick_check).join('; ')}`)
    // A provenance blob has no file: its bytes are the manifest the copy holds (decision 0038).
    const held = new Set(
      (copy.prepare('select distinct b.hash from blobs b join album_ops o on o.manifest_hash = b.hash').all() as Array<{ hash: string }>).map(
        (row) => row.hash,
      ),
    )
    named = (copy.prepare('select hash, max(size) as size from blobs group by hash order by hash').all() as Array<{ hash: string; size: number | bigint }>).map(
      (row) => ({
        hash: row.hash,
        size: Number(row.size),
        inDatabase: held.has(row.hash),
      }),
    )
  } finally {
    copy.close()
  }
  const handle = await open(partial, 'r+')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
  const final = path.join(dest, SQLITE_COPY)
  await rename(partial, final)
  await syncDirectory(dest)
  const sha256 = await sha256OfFile(final)
  const { size } = await stat(final)
  return { database: { file: SQLITE_COPY, bytes: size, sha256 }, named }
}

async function dumpPostgres(deps: Deps, dest: string): Promise<NonNullable<BackupManifest['database']>> {
  if (deps.config.database.engine !== 'postgres') throw new Error('not PostgreSQL')
  const schema = (await deps.storage.currentSchema()).name
  if (schema === null) throw new BackupError("the database has no schema to dump (is DATABASE_URL the server's?)")
  const partial = path.join(dest, `${POSTGRES_DUMP}.part`)
  // One snapshot of Coffer's schema, in the custom format pg_restore reads.
  await runTool('pg_dump', [
    '--format=custom',
    '--no-owner',
    '--no-privileges',
    `--schema=${schema}`,
    `--file=${partial}`,
    `--dbname=${deps.config.database.url}`,
  ])
  const final = path.join(dest, POSTGRES_DUMP)
  const copied = await copyDurably(partial, final)
  await rm(partial)
  return { file: POSTGRES_DUMP, bytes: copied.bytes, sha256: copied.sha256, schema }
}

export interface BackupOptions {
  /** PostgreSQL: copy the blob folder only (the database is dumped by the operator, under a hold). */
  readonly blobsOnly: boolean
  readonly progress?: (progress: BackupProgress) => void
  /** Tests: runs after the database copy, before the blobs are copied. */
  readonly afterSnapshot?: () => Promise<void>
}

export async function backup(deps: Deps, dest: string, options: BackupOptions): Promise<BackupManifest> {
  const engine = deps.config.database.engine
  if (options.blobsOnly && engine === 'sqlite')
    throw new BackupError('--blobs-only is for PostgreSQL (pg_dump); on SQLite, coffer backup copies the database and its blobs together')
  await prepareEmptyFolder(dest, 'the destination')
  const createdAt = new Date().toISOString()
  return holdingRemovals(deps, `coffer backup to ${dest} (${hostname()} pid ${process.pid})`, async () => {
    options.progress?.({ phase: 'database', count: 0, bytes: 0, total: null })
    let database: BackupManifest['database'] = null
    let named: AsyncIterable<NamedBlob> | Iterable<NamedBlob>
    let total: number | null = null
    if (engine === 'sqlite') {
      const copied = await copySqlite(deps, dest)
      database = copied.database
      named = copied.named
      total = copied.named.length
    } else {
      if (!options.blobsOnly) database = await dumpPostgres(deps, dest)
      // Every file in the folder: under the hold, each file the dump names is still there.
      named = (async function* () {
        for await (const hash of deps.blobs.list()) yield { hash, size: null, inDatabase: false }
      })()
    }
    await options.afterSnapshot?.()

    const target = await openLocalFolderBlobStore(path.join(dest, BLOBS))
    const missing: string[] = []
    const corrupt: string[] = []
    let count = 0
    let bytes = 0
    await inPool(named, COPY_WIDTH, async ({ hash, size, inDatabase }) => {
      const actual = await deps.blobs.size(hash)
      if (actual === null && inDatabase) {
        // Its bytes are in the database copy: not a file to copy.
        if (total !== null) total--
        return
      }
      if (actual === null) {
        // Named by the copy and gone: damage (fsck reports it too), unless a folder walk saw a
        // file that was removed since (it was never named then).
        if (size !== null) missing.push(hash)
        return
      }
      const outcome = await target.put(hash, size ?? actual, await deps.blobs.open(hash))
      if (outcome.kind !== 'stored') {
        corrupt.push(hash)
        return
      }
      count++
      bytes += size ?? actual
      options.progress?.({ phase: 'blobs', count, bytes, total })
    })
    await rm(path.join(dest, BLOBS, 'tmp'), { recursive: true, force: true })

    const keyFile = path.join(deps.config.dataDir, SECRET_KEY_FILE)
    const secretKey = await exists(keyFile)
    if (secretKey) await copyDurably(keyFile, path.join(dest, SECRET_KEY_FILE))

    const manifest: BackupManifest = {
      format: FORMAT,
      created_at: createdAt,
      engine,
      database,
      blobs: { count, bytes },
      secret_key: secretKey,
      missing: missing.sort(),
      corrupt: corrupt.sort(),
    }
    // Written last: a folder without it is an unfinished backup.
    const partial = path.join(dest, `${MANIFEST}.part`)
    await writeFile(partial, `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600, flush: true })
    await rename(partial, path.join(dest, MANIFEST))
    await syncDirectory(dest)
    return manifest
  })
}
