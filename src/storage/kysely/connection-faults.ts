// The one place that tells "the database cannot be reached, or the connection was lost" from
// every other database error, on both engines, and turns it into the port's
// StorageUnavailableError. Every connection, query and transaction statement passes through
// the driver wrapped here, so no query module or service needs to know.
import type {
  CompiledQuery,
  DatabaseConnection,
  DatabaseIntrospector,
  Dialect,
  DialectAdapter,
  Driver,
  Kysely,
  QueryCompiler,
  QueryResult,
  TransactionSettings,
} from 'kysely'
import { StorageUnavailableError } from '../port.ts'

/**
 * PostgreSQL SQLSTATEs that say "not now" rather than "not this": class 08 (connection
 * exception), 57P01 admin_shutdown (pg_terminate_backend, a fast shutdown), 57P02
 * crash_shutdown, 57P03 cannot_connect_now (starting up, shutting down, in recovery) and
 * 53300 too_many_connections (every slot taken, e.g. many instances reconnecting at once).
 */
const POSTGRES_UNAVAILABLE = /^(08[0-9A-Z]{3}|57P0[123]|53300)$/

/** Socket and name-resolution failures on the way to the database server. */
const NETWORK_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN'])

/** What pg and pg-pool throw, with no code, when a connection fails, dies or never comes. */
const POSTGRES_CONNECTION_LOST = new Set([
  // The socket closed under the client (the server went away, the network cut it).
  'Connection terminated unexpectedly',
  // A new connection took longer than connectionTimeoutMillis.
  'Connection terminated due to connection timeout',
  // No connection of the pool became free within connectionTimeoutMillis.
  'timeout exceeded when trying to connect',
  // A query on a connection that had already failed.
  'Client has encountered a connection error and is not queryable',
])

/**
 * SQLite primary result codes (node:sqlite reports the extended code in `errcode`) that say
 * "try again": SQLITE_BUSY, another process held the lock past the busy timeout, and
 * SQLITE_IOERR, the operating system failed a read or write of the file.
 */
const SQLITE_BUSY = 5
const SQLITE_IOERR = 10

export function isConnectionFault(error: unknown): boolean {
  if (!(error instanceof Error)) return false
  const { code, errcode } = error as { code?: unknown; errcode?: unknown }
  if (typeof code === 'string' && (POSTGRES_UNAVAILABLE.test(code) || NETWORK_ERRORS.has(code))) return true
  if (code === 'ERR_SQLITE_ERROR' && typeof errcode === 'number') return [SQLITE_BUSY, SQLITE_IOERR].includes(errcode & 0xff)
  return POSTGRES_CONNECTION_LOST.has(error.message)
}

function translated(error: unknown): unknown {
  return isConnectionFault(error) ? new StorageUnavailableError(error as Error) : error
}

export async function translating<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation()
  } catch (error) {
    throw translated(error)
  }
}

class TranslatingConnection implements DatabaseConnection {
  readonly inner: DatabaseConnection
  constructor(inner: DatabaseConnection) {
    this.inner = inner
  }

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return translating(() => this.inner.executeQuery<R>(query))
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    try {
      yield* this.inner.streamQuery<R>(query, chunkSize)
    } catch (error) {
      throw translated(error)
    }
  }
}

const innerOf = (connection: DatabaseConnection) => (connection as TranslatingConnection).inner

/**
 * The engine's driver, with connection faults translated. Transaction statements go through
 * it too: a BEGIN that cannot get the lock, a COMMIT on a dead connection, and the ROLLBACK
 * Kysely then tries (whose failure is what the caller sees) are all StorageUnavailableError.
 */
class TranslatingDriver implements Driver {
  readonly #inner: Driver
  constructor(inner: Driver) {
    this.#inner = inner
  }

  init(): Promise<void> {
    return this.#inner.init()
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new TranslatingConnection(await translating(() => this.#inner.acquireConnection()))
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return translating(() => this.#inner.beginTransaction(innerOf(connection), settings))
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return translating(() => this.#inner.commitTransaction(innerOf(connection)))
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return translating(() => this.#inner.rollbackTransaction(innerOf(connection)))
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.#inner.releaseConnection(innerOf(connection))
  }

  destroy(): Promise<void> {
    return this.#inner.destroy()
  }
}

/** `dialect` with its driver's connection faults thrown as StorageUnavailableError. */
export function translatingConnectionFaults(dialect: Dialect): Dialect {
  return {
    createDriver: (): Driver => new TranslatingDriver(dialect.createDriver()),
    createQueryCompiler: (): QueryCompiler => dialect.createQueryCompiler(),
    createAdapter: (): DialectAdapter => dialect.createAdapter(),
    createIntrospector: (db: Kysely<unknown>): DatabaseIntrospector => dialect.createIntrospector(db),
  }
}
