// node:sqlite behind Kysely, with each commit's fsync off the event loop (decision 0037).
// node:sqlite is synchronous: with synchronous=FULL every commit's fsync stopped every request.
// Here commits write the WAL without waiting for the disk (synchronous=NORMAL) and the one
// that made a commit is answered once an fdatasync of the WAL file, run on libuv's pool and
// started after that commit, has returned; one fdatasync covers every commit before it. A read
// outside a transaction goes to a read-only connection (WAL readers see only what is
// committed, and never wait for the writer) and, while a commit is still on its way to the
// disk, answers only once it is there: nothing is shown that a power cut could take back.
// Once the server is busy, the WAL's checkpoints (and their fsyncs) move to a thread of their own.
// Write transactions start with BEGIN IMMEDIATE so that a transaction that reads before it
// writes never fails to upgrade its lock.
import { open, type FileHandle } from 'node:fs/promises'
import path from 'node:path'
import { Worker } from 'node:worker_threads'
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite'
import {
  CompiledQuery,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
} from 'kysely'
import { makeDirectory } from '../../directories.ts'
import { StorageUnavailableError } from '../port.ts'

/** Prepared statements kept per SQL text: Kysely sends the same few hundred texts over and over. */
const STATEMENT_CACHE_SIZE = 512

/** A statement's rows, or (none) what it changed, as node:sqlite reports it. */
interface StatementResult {
  readonly rows: readonly unknown[]
  readonly changes?: number | bigint
  readonly lastInsertRowid?: number | bigint
}

type RunStatement = (sqlText: string, parameters: readonly unknown[]) => StatementResult

/** Runs statements on `db` as Kysely's SQLite driver does: `all` when it returns rows, `run` when not. */
function statementRunner(db: DatabaseSync): RunStatement {
  const cache = new Map<string, { statement: StatementSync; reader: boolean }>()
  return (sqlText, parameters) => {
    let entry = cache.get(sqlText)
    if (entry === undefined) {
      const statement = db.prepare(sqlText)
      entry = { statement, reader: statement.columns().length > 0 }
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string)
      cache.set(sqlText, entry)
    }
    const values = parameters as SQLInputValue[]
    if (entry.reader) return { rows: entry.statement.all(...values) }
    const { changes, lastInsertRowid } = entry.statement.run(...values)
    return { rows: [], changes, lastInsertRowid }
  }
}

/**
 * The WAL file's fdatasyncs: commits are counted as made, and as synced once an fdatasync that
 * started after them has returned. Only one runs at a time; whoever waits when it returns starts
 * the next, which covers every commit made meanwhile (a group commit).
 */
class WalSync {
  readonly #file: string
  readonly #onBusy: () => void
  #handle: Promise<FileHandle> | undefined
  #made = 0
  #synced = 0
  #running: Promise<void> | undefined

  /** `onBusy`: called once, at the CHECKPOINTS_AFTER_COMMITS-th commit. */
  constructor(databaseFile: string, onBusy: () => void) {
    this.#file = `${databaseFile}-wal`
    this.#onBusy = onBusy
  }

  commitMade(): void {
    if (++this.#made === CHECKPOINTS_AFTER_COMMITS) this.#onBusy()
  }

  /** Whether a commit made so far is not yet on disk. */
  get behind(): boolean {
    return this.#synced < this.#made
  }

  /** Returns once every commit made so far is on disk. */
  async durable(): Promise<void> {
    const target = this.#made
    while (this.#synced < target) {
      this.#running ??= this.#sync()
      await this.#running
    }
  }

  async #sync(): Promise<void> {
    const covers = this.#made
    try {
      await (await this.#opened()).datasync()
      this.#synced = Math.max(this.#synced, covers)
    } catch (error) {
      // The disk failed under the commit: "not now" (503), as an I/O error inside SQLite is.
      throw new StorageUnavailableError(error as Error)
    } finally {
      this.#running = undefined
    }
  }

  /** The WAL file, opened at the first sync (the first commit has made it), and its directory entry made durable once. */
  #opened(): Promise<FileHandle> {
    this.#handle ??= (async () => {
      const directory = await open(path.dirname(this.#file), 'r')
      try {
        await directory.sync()
      } finally {
        await directory.close()
      }
      return open(this.#file, 'r')
    })()
    return this.#handle
  }

  async close(): Promise<void> {
    const handle = this.#handle
    this.#handle = undefined
    await (await handle)?.close()
  }
}

/**
 * After this many commits the WAL's checkpoints move to their own thread
 * (sqlite-checkpoint.worker.ts): below it, as in a test's short-lived server or a `coffer`
 * command, SQLite's own checkpoints on the write connection cost less than starting a thread.
 */
const CHECKPOINTS_AFTER_COMMITS = 256

/** How often the checkpoint thread checkpoints, and how many WAL pages the writer lets through before it checkpoints itself all the same. */
const CHECKPOINT_INTERVAL_MS = 500
const WRITER_CHECKPOINT_PAGES = 10_000

/** Starts the checkpoint thread and leaves the writer's own checkpoints for a WAL grown far past it. */
function checkpointThread(writer: DatabaseSync, file: string, busyTimeoutMs: number): Worker {
  const worker = new Worker(new URL('./sqlite-checkpoint.worker.ts', import.meta.url), {
    name: 'sqlite-checkpoint',
    workerData: { file, busyTimeoutMs, intervalMs: CHECKPOINT_INTERVAL_MS },
  })
  worker.unref()
  writer.exec(`PRAGMA wal_autocheckpoint = ${WRITER_CHECKPOINT_PAGES}`)
  return worker
}

/** The write connection, held by one Kysely connection at a time from BEGIN to the end of its transaction. */
class WriteTurn {
  #queue: Promise<void> = Promise.resolve()

  /** Waits for the turn; the function it answers gives the turn to the next. */
  async take(): Promise<() => void> {
    let release = () => {}
    const previous = this.#queue
    this.#queue = new Promise((resolve) => (release = resolve))
    await previous
    return release
  }
}

function queryResult<R>(result: StatementResult): QueryResult<R> {
  const { changes, lastInsertRowid } = result
  return {
    rows: result.rows as R[],
    ...(changes === undefined ? {} : { numAffectedRows: BigInt(changes) }),
    ...(lastInsertRowid === undefined ? {} : { insertId: BigInt(lastInsertRowid) }),
  }
}

/** A statement that can only read: SQLite has no data-modifying WITH, so a SELECT is one. */
const READ_ONLY = /^\s*select\b/i

/** The server's two connections to one SQLite file, and its WAL's syncs. */
interface SqliteConnections {
  readonly writer: DatabaseSync
  readonly write: RunStatement
  readonly turn: WriteTurn
  readonly wal: WalSync | undefined
  /** A committed read, answered once what it may show is on disk; undefined for ':memory:', which no second connection sees. */
  readonly read: ((sqlText: string, parameters: readonly unknown[]) => Promise<StatementResult>) | undefined
  close(): Promise<void>
}

/**
 * One Kysely connection. Outside a transaction a read goes to the read connection, and a write
 * runs at once on the write connection, unless another connection's transaction holds it. A
 * transaction holds the write connection from BEGIN to its end; its statements run there.
 */
class SqliteConnection implements DatabaseConnection {
  readonly #connections: SqliteConnections
  #release: (() => void) | null = null

  constructor(connections: SqliteConnections) {
    this.#connections = connections
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const { writer, write, turn, wal, read } = this.#connections
    if (this.#release === null && read !== undefined && READ_ONLY.test(query.sql)) return queryResult(await read(query.sql, query.parameters))
    this.#release ??= await turn.take()
    let result: StatementResult
    try {
      result = write(query.sql, query.parameters)
    } finally {
      if (!writer.isTransaction) this.release()
    }
    // A write outside a transaction, or the transaction's end, has committed: answer once it is on
    // disk. A write that returns rows (RETURNING) ran as a reader and reports no changes: it is
    // told by not being a SELECT.
    if (!writer.isTransaction && wal !== undefined && (result.changes !== undefined || !READ_ONLY.test(query.sql))) {
      wal.commitMade()
      await wal.durable()
    }
    return queryResult(result)
  }

  async *streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    for (const row of (await this.executeQuery<R>(query)).rows) yield { rows: [row] }
  }

  release(): void {
    this.#release?.()
    this.#release = null
  }
}

class SqliteDriver implements Driver {
  readonly #connections: SqliteConnections

  constructor(connections: SqliteConnections) {
    this.#connections = connections
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new SqliteConnection(this.#connections)
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'))
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'))
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'))
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    ;(connection as SqliteConnection).release()
  }

  destroy(): Promise<void> {
    return this.#connections.close()
  }
}

/**
 * SQLite runs DDL inside a transaction; Kysely's adapter says it does not, and its migrator
 * would then leave a migration that fails half-way half applied.
 */
class TransactionalDdlAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true
  }
}

/** The read connection, opened at its first read (a write has created the file by then). */
function readConnection(file: string, busyTimeoutMs: number, wal: WalSync): { readonly read: NonNullable<SqliteConnections['read']>; close(): void } {
  let database: DatabaseSync | undefined
  let run: RunStatement | undefined
  return {
    async read(sqlText, parameters) {
      if (run === undefined) {
        database = new DatabaseSync(file, { readOnly: true, timeout: busyTimeoutMs })
        run = statementRunner(database)
      }
      const result = run(sqlText, parameters)
      if (wal.behind) await wal.durable()
      return result
    },
    close: () => database?.close(),
  }
}

/**
 * `busyTimeoutMs`: how long a statement waits for a lock another process holds (a `coffer`
 * command writing beside the server) before it fails with SQLITE_BUSY. The wait blocks the
 * event loop, as every node:sqlite call does. `read` runs a committed read (the bearer lookup).
 */
export function openSqlite(file: string, busyTimeoutMs: number): { readonly dialect: Dialect; readonly read: SqliteConnections['read'] } {
  const inMemory = file === ':memory:'
  if (!inMemory) makeDirectory(path.dirname(file))
  const writer = new DatabaseSync(file, { enableForeignKeyConstraints: true, timeout: busyTimeoutMs })
  // WAL lets readers run beside the writer. NORMAL: a commit does not fsync; WalSync does, off the event loop.
  writer.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;')
  let checkpointer: Worker | undefined
  const wal = inMemory ? undefined : new WalSync(file, () => (checkpointer = checkpointThread(writer, file, busyTimeoutMs)))
  const reader = wal === undefined ? undefined : readConnection(file, busyTimeoutMs, wal)
  const connections: SqliteConnections = {
    writer,
    write: statementRunner(writer),
    turn: new WriteTurn(),
    wal,
    read: reader?.read,
    async close() {
      await checkpointer?.terminate()
      reader?.close()
      await wal?.close()
      writer.close()
    },
  }
  const dialect: Dialect = {
    createDriver: (): Driver => new SqliteDriver(connections),
    createQueryCompiler: (): QueryCompiler => new SqliteQueryCompiler(),
    createAdapter: (): DialectAdapter => new TransactionalDdlAdapter(),
    createIntrospector: (db: Kysely<unknown>): DatabaseIntrospector => new SqliteIntrospector(db),
  }
  return { dialect, read: reader?.read }
}
