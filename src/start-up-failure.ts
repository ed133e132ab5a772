// Why a start failed, in the one line an operator reads: the variable, its value and what to do.
// Start-up (configuration, folders, database, keys, listening) throws what it meets; the faults
// an operator can fix are recognised here and nowhere else. Anything else is reported by its
// message alone; its stack only with LOG_LEVEL=debug or trace.
import path from 'node:path'
import { BlobStoreUnavailableError } from './blob-store/port.ts'
import { ConfigError, type Config } from './config.ts'
import { StorageUnavailableError } from './storage/port.ts'

/** A start-up fault whose message is already the line the operator sees. */
export class StartUpError extends Error {}

const LISTEN_REASONS: Readonly<Record<string, string>> = {
  EADDRINUSE: 'PORT is already in use',
  EADDRNOTAVAIL: 'HOST is not an address of this machine',
  ENOTFOUND: 'HOST does not resolve to an address',
  EAI_AGAIN: 'HOST could not be resolved (DNS unavailable)',
  EACCES: 'permission denied (ports below 1024 need privileges)',
}

/** The server could not listen on HOST:PORT. */
export function listenFailure(config: Config, error: unknown): StartUpError {
  const { code, message } = error instanceof Error ? (error as NodeJS.ErrnoException) : { code: undefined, message: String(error) }
  const reason = code === undefined ? message : `${LISTEN_REASONS[code] ?? message} (${code})`
  return new StartUpError(`cannot listen on HOST=${config.host} PORT=${config.port}: ${reason}`)
}

/** A URL as it may be shown: its password replaced. */
function shownUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password !== '') parsed.password = '***'
    return parsed.toString()
  } catch {
    return '(unparseable URL)'
  }
}

/** The database as the operator configured it: DATABASE_URL, or DATA_DIR for the default file. */
function databaseSetting(config: Config): string {
  const { database } = config
  if (database.engine === 'postgres') return `DATABASE_URL=${shownUrl(database.url)}`
  if (database.file === path.join(config.dataDir, 'coffer.db')) return `DATA_DIR=${config.dataDir} (database file ${database.file})`
  return `DATABASE_URL=sqlite:${database.file}`
}

const within = (inner: string, outer: string): boolean => inner === outer || inner.startsWith(outer + path.sep)

/**
 * The setting whose folder `file` is in (the innermost of DATA_DIR, BLOB_DIR and the SQLite
 * file's folder that holds it) or, when making a parent failed, is on the way to (the nearest).
 */
function folderSetting(config: Config, file: string): string | undefined {
  const folders = [
    { setting: `DATA_DIR=${config.dataDir}`, folder: config.dataDir },
    { setting: `BLOB_DIR=${config.blobDir}`, folder: config.blobDir },
  ]
  if (config.database.engine === 'sqlite') folders.push({ setting: `DATABASE_URL=sqlite:${config.database.file}`, folder: path.dirname(config.database.file) })
  const byLength = (a: { folder: string }, b: { folder: string }) => a.folder.length - b.folder.length
  const holding = folders
    .filter(({ folder }) => within(file, folder))
    .sort(byLength)
    .at(-1)
  return (holding ?? folders.filter(({ folder }) => within(folder, file)).sort(byLength)[0])?.setting
}

const FILE_REASONS: Readonly<Record<string, string>> = {
  EACCES: "permission denied; give the server's user write access to it, or choose another folder",
  EPERM: "operation not permitted; give the server's user write access to it, or choose another folder",
  EROFS: 'the file system is read-only; choose a writable folder',
  ENOTDIR: 'a part of the path is a file, not a folder; choose a folder',
  EEXIST: 'a file of that name is in the way; choose a folder',
  ENOENT: 'the folder cannot be made there (a parent is missing, or the file system does not allow it); choose another folder',
  ENOSPC: 'the disk is full; free space or choose another disk',
  EDQUOT: 'the disk quota is used up; free space or raise the quota',
  EIO: 'the disk failed a read or a write; check the disk',
}

/** PostgreSQL's answers an operator can act on, by SQLSTATE. */
const POSTGRES_REASONS: Readonly<Record<string, string>> = {
  '3D000': 'create it (createdb), or correct the database name in the URL',
  '28P01': 'correct the user or the password in the URL',
  '28000': 'correct the user in the URL, or allow it in pg_hba.conf',
  '42501': 'grant the user the right to create tables in its schema, or connect as its owner',
  '3F000': 'create the schema, or correct search_path in the URL',
}

/** SQLite result codes an operator can act on (node:sqlite reports the extended code). */
const SQLITE_REASONS: Readonly<Record<number, string>> = {
  14: "cannot open the file; check that its folder is writable by the server's user",
  8: "the file is read-only; give the server's user write access to it and its folder",
  26: "point it at Coffer's database file, or at a new one",
  11: 'the file is damaged; restore it from a backup',
}

function postgresFailure(config: Config, error: Error): string | undefined {
  const code = (error as { code?: unknown }).code
  const reason = typeof code === 'string' ? POSTGRES_REASONS[code] : undefined
  if (config.database.engine !== 'postgres' || reason === undefined) return undefined
  return `${databaseSetting(config)}: ${error.message}; ${reason}`
}

function unreachable(config: Config, error: StorageUnavailableError): string {
  const cause = error.cause instanceof Error ? error.cause : error
  const code = (cause as { code?: unknown }).code
  if (config.database.engine === 'sqlite') {
    return `${databaseSetting(config)}: ${cause.message}; another process holds the database longer than DATABASE_WAIT_TIMEOUT_S=${config.databaseWaitTimeoutS}, or its disk fails`
  }
  const what = typeof code === 'string' && code !== cause.message ? `${cause.message} (${code})` : cause.message
  return `cannot reach the database at ${databaseSetting(config)}: ${what}; check that PostgreSQL is running and accepts connections at the URL's host and port (waited DATABASE_WAIT_TIMEOUT_S=${config.databaseWaitTimeoutS} s)`
}

/** The bucket did not answer, refused, or is not there: what the SDK said, and what to check. */
function bucketUnreachable(config: Config, error: BlobStoreUnavailableError): string {
  const cause = error.cause instanceof Error ? error.cause : error
  const code = (cause as { code?: unknown }).code
  const status = (cause as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode
  const said = [
    cause.name !== 'Error' ? cause.name : undefined,
    typeof code === 'string' ? code : undefined,
    status === undefined ? undefined : `HTTP ${status}`,
  ]
    .filter((part) => part !== undefined && part !== cause.message)
    .join(', ')
  const bucket = config.blobBucket
  const where =
    bucket === null
      ? ''
      : ` BLOB_STORE_URL=s3://${bucket.bucket}/${bucket.prefix}${bucket.endpoint === null ? ` (AWS, S3_REGION=${bucket.region})` : ` at S3_ENDPOINT=${bucket.endpoint}`}`
  return (
    `cannot use the blob bucket${where}: ${cause.message}${said === '' ? '' : ` (${said})`}; ` +
    'check that the endpoint answers, that the bucket exists, and that the credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE) may list, read, write and delete in it'
  )
}

/**
 * The line for a fault the operator can fix, or undefined for any other error; `config` is null
 * when the configuration itself failed.
 */
export function explainStartFault(config: Config | null, error: unknown): string | undefined {
  if (error instanceof ConfigError) return `invalid configuration: ${error.message}`
  if (error instanceof StartUpError) return error.message
  if (config === null || !(error instanceof Error)) return undefined
  if (error instanceof StorageUnavailableError) return unreachable(config, error)
  if (error instanceof BlobStoreUnavailableError) return bucketUnreachable(config, error)
  const postgres = postgresFailure(config, error)
  if (postgres !== undefined) return postgres
  const { code, path: file, errcode } = error as NodeJS.ErrnoException & { errcode?: unknown }
  if (code === 'ERR_SQLITE_ERROR' && typeof errcode === 'number') {
    const reason = SQLITE_REASONS[errcode & 0xff]
    if (reason !== undefined) return `${databaseSetting(config)}: ${error.message}; ${reason}`
  }
  if (typeof code === 'string' && typeof file === 'string') {
    const setting = folderSetting(config, path.resolve(file))
    const reason = FILE_REASONS[code]
    if (setting !== undefined && reason !== undefined) return `${setting}: cannot use ${file}: ${reason} (${code})`
  }
  return undefined
}

/**
 * What the operator sees when a start fails: one line on stderr; for an error not recognised
 * here, its message, and its stack only when LOG_LEVEL asks for detail.
 */
export function reportStartFailure(config: Config | null, error: unknown, unrecognisedPrefix: string, stderr: NodeJS.WritableStream = process.stderr): void {
  const explained = explainStartFault(config, error)
  if (explained !== undefined) {
    stderr.write(`coffer: ${explained}\n`)
    return
  }
  stderr.write(`coffer: ${unrecognisedPrefix}${error instanceof Error ? error.message : String(error)}\n`)
  const detailed = config?.logLevel === 'debug' || config?.logLevel === 'trace'
  if (detailed && error instanceof Error && error.stack) stderr.write(`${error.stack}\n`)
}
