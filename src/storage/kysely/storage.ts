// The one implementation of the storage port: Kysely over SQLite or PostgreSQL.
import { CamelCasePlugin, Kysely, Migrator, sql, type Dialect } from 'kysely'
import type { Engine, Storage, Store } from '../port.ts'
import { accountDeletionQueries } from './account-deletion.ts'
import { accountQueries } from './accounts.ts'
import { postgresBearerLookup, sqliteBearerLookup, type BearerLookup } from './bearer-lookup.ts'
import { albumQueries } from './albums.ts'
import { batchDownloadQueries } from './batch-downloads.ts'
import { budgetQueries } from './budgets.ts'
import { translatingConnectionFaults } from './connection-faults.ts'
import { custodyQueries } from './custody.ts'
import { directoryQueries } from './directory.ts'
import { enrollmentQueries } from './enrollment.ts'
import { escrowQueries } from './escrow.ts'
import { garbageQueries } from './garbage.ts'
import { integrityQueries } from './integrity.ts'
import { lifecycleQueries } from './lifecycle.ts'
import type { Executor } from './executor.ts'
import { maintenanceQueries } from './maintenance.ts'
import { migrationProvider } from './migrations/index.ts'
import { moderationQueries } from './moderation.ts'
import { openPostgres } from './postgres.ts'
import { watchPostgresReceiptRequests } from './receipt-notices.ts'
import { postgresRelayMailboxes, sqliteRelayMailboxes } from './relay-mailbox.ts'
import { revokeQueries } from './revoke.ts'
import { securityEventQueries } from './security-events.ts'
import { secondFactorQueries } from './second-factor.ts'
import { sessionQueries } from './sessions.ts'
import { openSqlite } from './sqlite.ts'
import { storageUsageQueries } from './storage-usage.ts'
import { linkQueries } from './links.ts'
import { memberQueries } from './members.ts'
import { trashQueries } from './trash.ts'
import { uploadQueries } from './uploads.ts'
import type { Tables } from './tables.ts'

function store(db: Executor, engine: Engine): Store {
  return {
    ...accountQueries(db),
    ...accountDeletionQueries(db),
    ...budgetQueries(db),
    ...batchDownloadQueries(db),
    ...securityEventQueries(db),
    ...sessionQueries(db),
    ...secondFactorQueries(db),
    ...directoryQueries(db),
    ...revokeQueries(db, engine),
    ...enrollmentQueries(db),
    ...escrowQueries(db),
    ...maintenanceQueries(db),
    ...albumQueries(db),
    ...uploadQueries(db, engine),
    ...storageUsageQueries(db),
    ...lifecycleQueries(db, engine),
    ...trashQueries(db),
    ...memberQueries(db),
    ...linkQueries(db),
    ...garbageQueries(db),
    ...custodyQueries(db, engine),
    ...moderationQueries(db),
    ...integrityQueries(db),
  }
}

export type DatabaseTarget =
  | { readonly engine: 'sqlite'; readonly file: string }
  | { readonly engine: 'postgres'; readonly url: string; readonly searchPath?: string }

export interface StorageOptions {
  /** DATABASE_WAIT_TIMEOUT_S: how long to wait for a PostgreSQL connection or SQLite's write lock. */
  readonly waitTimeoutS: number
  /** Where a connection that PostgreSQL or the network ended is reported. */
  readonly log: { warn(details: object, message: string): void }
}

interface OpenedEngine {
  readonly dialect: Dialect
  /** The bearer lookup on the engine's own client, for the storage made over `dialect`. */
  readonly bearerLookup: (db: Kysely<Tables>) => BearerLookup
}

function openEngine(target: DatabaseTarget, options: StorageOptions): OpenedEngine {
  const waitMs = options.waitTimeoutS * 1000
  if (target.engine === 'sqlite') {
    const { dialect, read } = openSqlite(target.file, waitMs)
    return { dialect: translatingConnectionFaults(dialect), bearerLookup: (db) => sqliteBearerLookup(db, read) }
  }
  const { dialect, pool } = openPostgres(target.url, {
    ...(target.searchPath ? { searchPath: target.searchPath } : {}),
    connectTimeoutMs: waitMs,
    // The driver's words only: the pool also hangs the client (and its configuration) on the error.
    onConnectionLost: (error) => options.log.warn({ cause: error.message }, 'database connection lost'),
  })
  return { dialect: translatingConnectionFaults(dialect), bearerLookup: (db) => postgresBearerLookup(db, pool) }
}

/** The engine's dialect as the storage uses it, connection faults translated (connection-faults.ts). */
export function openDialect(target: DatabaseTarget, options: StorageOptions): Dialect {
  return openEngine(target, options).dialect
}

export function openStorage(target: DatabaseTarget, options: StorageOptions): Storage {
  const opened = openEngine(target, options)
  const db = new Kysely<Tables>({ dialect: opened.dialect, plugins: [new CamelCasePlugin()] })
  const engine: Engine = target.engine
  return {
    ...store(db, engine),
    engine,
    transaction: (work) => db.transaction().execute((trx) => work(store(trx, engine))),
    ...(engine === 'postgres' ? postgresRelayMailboxes(db) : sqliteRelayMailboxes(db)),
    findBearerSession: opened.bearerLookup(db),
    async migrate() {
      // Kysely finds its bookkeeping tables by introspecting every schema; name the schema this
      // connection works in (search_path, also when set in DATABASE_URL's options) so that
      // several schemas in one database never see each other's.
      const schema = engine === 'postgres' ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema : undefined
      const { error, results } = await new Migrator({
        db,
        provider: migrationProvider(engine),
        ...(schema === undefined ? {} : { migrationTableSchema: schema }),
      }).migrateToLatest()
      const failed = results?.find((r) => r.status === 'Error')
      if (error) throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${String(error)}`, { cause: error })
    },
    async currentSchema() {
      if (engine !== 'postgres') return { name: null, tables: 0 }
      const name = (await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db)).rows[0]?.schema ?? null
      if (name === null) return { name, tables: 0 }
      const counted = await sql<{ tables: unknown }>`select count(*) as tables from information_schema.tables where table_schema = ${name}`.execute(db)
      return { name, tables: Number(counted.rows[0]?.tables ?? 0) }
    },
    async createSchema(name) {
      await sql`create schema if not exists ${sql.id(name)}`.execute(db)
    },
    watchReceiptRequests: (notices) =>
      target.engine === 'postgres'
        ? watchPostgresReceiptRequests(
            { url: target.url, ...(target.searchPath ? { searchPath: target.searchPath } : {}), connectTimeoutMs: options.waitTimeoutS * 1000 },
            options.log,
            notices,
          )
        : null,
    async ping() {
      await sql`select 1`.execute(db)
    },
    close: () => db.destroy(),
  }
}
