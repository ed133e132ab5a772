// coffer restore: a backup (coffer backup) into an empty data folder, and on PostgreSQL into an
// empty schema. Everything copied is verified: the database copy against the manifest's SHA-256,
// each blob against its name while it streams; each copy is fsynced. The caller then runs fsck
// on the result.
import { readFile, rmdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { createReadStream } from 'node:fs'
import path from 'node:path'
import { writeFile, rm, mkdtemp } from 'node:fs/promises'
import { openLocalFolderBlobStore } from '../../blob-store/local-folder.ts'
import type { Config } from '../../config.ts'
import { SECRET_KEY_FILE } from '../../crypto/secret-key.ts'
import type { Storage } from '../../storage/port.ts'
import { BLOBS, FORMAT, MANIFEST, type BackupManifest } from './backup.service.ts'
import { BackupError, copyDurably, entriesOf, inPool, sha256OfFile } from './files.ts'
import { runTool } from './tools.ts'

const COPY_WIDTH = 4

export interface RestoreOutcome {
  readonly manifest: BackupManifest
  readonly blobs: { readonly count: number; readonly bytes: number }
  /** Blobs of the backup whose bytes no longer match their names (not restored). */
  readonly corrupt: readonly string[]
}

async function readManifest(src: string): Promise<BackupManifest> {
  let text: string
  try {
    text = await readFile(path.join(src, MANIFEST), 'utf8')
  } catch {
    throw new BackupError(`${src} is not a complete coffer backup (it has no ${MANIFEST})`)
  }
  const manifest = JSON.parse(text) as BackupManifest
  if (manifest.format !== FORMAT) throw new BackupError(`${src}: unknown backup format ${String(manifest.format)}`)
  return manifest
}

async function refuseUnlessEmpty(folder: string, what: string): Promise<void> {
  const present = await entriesOf(folder)
  if (present.length > 0)
    throw new BackupError(`restore needs an empty ${what}: ${folder} holds ${present.slice(0, 3).join(', ')}${present.length > 3 ? ', ...' : ''}`)
}

async function restorePostgres(
  storage: Storage,
  config: Config & { database: { engine: 'postgres' } },
  src: string,
  database: NonNullable<BackupManifest['database']>,
): Promise<void> {
  const wanted = database.schema ?? 'public'
  let schema = await storage.currentSchema()
  if (schema.name === null) {
    await storage.createSchema(wanted)
    schema = await storage.currentSchema()
  }
  if (schema.name !== wanted)
    throw new BackupError(
      `the backup is of schema ${wanted}, DATABASE_URL works in ${schema.name ?? 'no schema'}: restore into a database whose search_path is ${wanted}`,
    )
  if (schema.tables > 0) throw new BackupError(`restore needs an empty database: schema ${wanted} already holds ${schema.tables} tables`)
  const dump = path.join(src, database.file)
  if ((await sha256OfFile(dump)) !== database.sha256) throw new BackupError(`${dump} does not match the manifest's SHA-256: the backup is damaged`)
  // The dump creates its schema, which exists here: restore everything but that.
  const list = (await runTool('pg_restore', ['--list', dump])).split('\n').filter((line) => !/^\d+; \d+ \d+ SCHEMA /.test(line))
  const scratch = await mkdtemp(path.join(tmpdir(), 'coffer-restore-'))
  try {
    await writeFile(path.join(scratch, 'list'), list.join('\n'))
    await runTool('pg_restore', [
      '--no-owner',
      '--no-privileges',
      '--exit-on-error',
      '--single-transaction',
      `--use-list=${path.join(scratch, 'list')}`,
      `--dbname=${config.database.url}`,
      dump,
    ])
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
}

/**
 * `postgres` opens the PostgreSQL storage (only PostgreSQL needs it before the copy: opening
 * SQLite would create the very file being restored).
 */
export async function restore(
  config: Config,
  src: string,
  options: { postgres: () => Storage; progress?: (done: { count: number; bytes: number; total: number }) => void },
): Promise<RestoreOutcome> {
  const { progress } = options
  const manifest = await readManifest(src)
  if (manifest.engine !== config.database.engine)
    throw new BackupError(`the backup is of a ${manifest.engine} server, DATABASE_URL is ${config.database.engine}`)
  await refuseUnlessEmpty(config.dataDir, 'data folder')
  await refuseUnlessEmpty(config.blobDir, 'blob folder')

  const database = manifest.database
  if (config.database.engine === 'sqlite') {
    if (database === null) throw new BackupError('the backup holds no database')
    await refuseUnlessEmpty(path.dirname(config.database.file) === config.dataDir ? config.dataDir : path.dirname(config.database.file), 'database folder')
    const copied = await copyDurably(path.join(src, database.file), config.database.file)
    if (copied.sha256 !== database.sha256) {
      await rm(config.database.file, { force: true })
      throw new BackupError(`${path.join(src, database.file)} does not match the manifest's SHA-256: the backup is damaged`)
    }
  } else if (database !== null) {
    const storage = options.postgres()
    try {
      await restorePostgres(storage, config as Config & { database: { engine: 'postgres' } }, src, database)
    } finally {
      await storage.close()
    }
  }

  const source = await openLocalFolderBlobStore(path.join(src, BLOBS))
  const target = await openLocalFolderBlobStore(config.blobDir)
  const corrupt: string[] = []
  let count = 0
  let bytes = 0
  await inPool(source.list(), COPY_WIDTH, async (hash) => {
    const size = await source.size(hash)
    if (size === null) return
    const outcome = await target.put(hash, size, createReadStream(source.pathOf(hash)))
    if (outcome.kind !== 'stored') {
      corrupt.push(hash)
      return
    }
    count++
    bytes += size
    progress?.({ count, bytes, total: manifest.blobs.count })
  })
  // Opening the backup's folder as a store made its tmp/: leave the backup as it was.
  await rmdir(path.join(src, BLOBS, 'tmp')).catch(() => {})

  if (manifest.secret_key) await copyDurably(path.join(src, SECRET_KEY_FILE), path.join(config.dataDir, SECRET_KEY_FILE))
  return { manifest, blobs: { count, bytes }, corrupt: corrupt.sort() }
}
