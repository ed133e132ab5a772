// The bearer check's one lookup, run on the engine's own client rather than through Kysely's
// runtime (executor, connection mutex, plugins, row mapping): it runs on every authenticated
// request, and that runtime cost more than the indexed read itself (docs/decisions/0024). The
// SQL text is still Kysely's (bearerLookupQuery, compiled once); nothing is cached but the
// statement, so every request still reads the session as the database holds it.
import { CompiledQuery, type Kysely } from 'kysely'
import type pg from 'pg'
import type { BearerSession } from '../port/sessions.ts'
import { translating } from './connection-faults.ts'
import { bearerLookupQuery } from './sessions.ts'
import type { Tables } from './tables.ts'

/** The row of bearerLookupQuery as the engine returns it (the SQL names, no plugin). */
interface BearerRow {
  readonly session_id: string
  readonly authenticated_at: number
  readonly access_expires_at: number
  readonly rotated_at: number | null
  readonly epoch: number
  readonly user_id: string
  readonly email: string
  readonly email_key: string
  readonly password_hash: string
  readonly display_name: string | null
  readonly created_at: number
  readonly session_epoch: number
  readonly suspended_at: number | null
  readonly deleted_at: number | null
}

export type BearerLookup = (accessHash: string) => Promise<BearerSession | undefined>

function bearerSession(row: BearerRow | undefined): BearerSession | undefined {
  if (row === undefined) return undefined
  return {
    sessionId: row.session_id,
    authenticatedAt: row.authenticated_at,
    accessExpiresAt: row.access_expires_at,
    rotatedAt: row.rotated_at,
    epoch: row.epoch,
    accountEpoch: row.session_epoch,
    account: {
      userId: row.user_id,
      email: row.email,
      emailKey: row.email_key,
      passwordHash: row.password_hash,
      displayName: row.display_name,
      createdAt: row.created_at,
      sessionEpoch: row.session_epoch,
      suspendedAt: row.suspended_at,
      deletedAt: row.deleted_at,
    },
  }
}

/** The SQL text Kysely sends for the bearer lookup on `db`'s engine (one parameter). */
function bearerLookupSql(db: Kysely<Tables>): string {
  return bearerLookupQuery(db, '').compile().sql
}

/**
 * SQLite: a statement on the read connection (sqlite.ts), which sees what is committed, as the
 * PostgreSQL lookup does; run synchronously, as that connection runs every read. `read` is
 * undefined for a database in memory: then the lookup goes through Kysely to the one connection.
 */
export function sqliteBearerLookup(
  db: Kysely<Tables>,
  read: ((sqlText: string, parameters: readonly unknown[]) => Promise<{ readonly rows: readonly unknown[] }>) | undefined,
): BearerLookup {
  const sqlText = bearerLookupSql(db)
  const unplugged = db.withoutPlugins()
  return (accessHash) =>
    translating(async () => {
      const { rows } =
        read === undefined ? await unplugged.executeQuery<BearerRow>(CompiledQuery.raw(sqlText, [accessHash])) : await read(sqlText, [accessHash])
      return bearerSession(rows[0] as BearerRow | undefined)
    })
}

/**
 * PostgreSQL: a named prepared statement on the pool (parsed and planned once per connection,
 * then only bound and executed), outside any transaction, so it sees what is committed.
 */
export function postgresBearerLookup(db: Kysely<Tables>, pool: pg.Pool): BearerLookup {
  const query = { name: 'coffer_bearer_lookup', text: bearerLookupSql(db) }
  return (accessHash) => translating(async () => bearerSession((await pool.query<BearerRow>({ ...query, values: [accessHash] })).rows[0]))
}
