// node:sqlite behind Kysely's SqliteDialect. DatabaseSync is close to better-sqlite3; this
// adapter supplies the rest, and write transactions start with BEGIN IMMEDIATE so that a
// transaction that reads before it writes never fails to upgrade its lock.
import path from 'node:path'
import { DatabaseSync, type StatementSync } from 'node:sqlite'
import { CompiledQuery, SqliteAdapter, SqliteDialect, SqliteDriver, type DatabaseConnection, type SqliteDatabase, type SqliteDialectConfig } from 'kysely'
import { makeDirectory } from '../../directories.ts'

/** Prepared statements kept per SQL text: Kysely sends the same few hundred texts over and over. */
const STATEMENT_CACHE_SIZE = 512

function adapt(db: DatabaseSync): SqliteDatabase {
  const cache = new Map<string, { statement: StatementSync; reader: boolean }>()
  const prepared = (sqlText: string) => {
    let entry = cache.get(sqlText)
    if (entry === undefined) {
      const statement = db.prepare(sqlText)
      entry = { statement, reader: statement.columns().length > 0 }
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string)
      cache.set(sqlText, entry)
    }
    return entry
  }
  return {
    close: () => db.close(),
    prepare(sqlText) {
      const { statement, reader } = prepared(sqlText)
      return {
        reader,
        all: (parameters) => statement.all(...(parameters as never[])),
        run: (parameters) => statement.run(...(parameters as never[])),
        iterate: (parameters) => statement.iterate(...(parameters as never[])),
      }
    },
  }
}

class ImmediateTransactionDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'))
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

class SqliteImmediateDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig
  constructor(config: SqliteDialectConfig) {
    super(config)
    this.#config = config
  }
  override createDriver(): SqliteDriver {
    return new ImmediateTransactionDriver(this.#config)
  }
  override createAdapter(): SqliteAdapter {
    return new TransactionalDdlAdapter()
  }
}

/**
 * `busyTimeoutMs`: how long a statement waits for a lock another process holds (a `coffer`
 * command writing beside the server) before it fails with SQLITE_BUSY. The wait blocks the
 * event loop, as every node:sqlite call does.
 */
export function openSqlite(file: string, busyTimeoutMs: number): { readonly dialect: SqliteDialect; readonly database: DatabaseSync } {
  if (file !== ':memory:') makeDirectory(path.dirname(file))
  const database = new DatabaseSync(file, { enableForeignKeyConstraints: true, timeout: busyTimeoutMs })
  // WAL lets readers run beside the writer; synchronous=FULL makes "committed" mean "on disk".
  database.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;')
  return { dialect: new SqliteImmediateDialect({ database: adapt(database) }), database }
}
