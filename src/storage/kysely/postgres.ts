import pg from 'pg'
import { PostgresDialect, type DatabaseIntrospector, type Kysely } from 'kysely'
import { CurrentSchemaIntrospector } from './postgres-introspector.ts'

const INT8_OID = 20

export interface PostgresOptions {
  readonly searchPath?: string
  /** How long to wait for a new connection, or for a free one of the pool, before failing. */
  readonly connectTimeoutMs: number
  /** Told when PostgreSQL or the network ends one of the pool's connections. */
  readonly onConnectionLost: (error: Error) => void
}

/**
 * `searchPath` pins every connection to one schema (the tests give each file its own).
 * BIGINT columns hold Unix milliseconds and counters, all far below 2^53: read them as numbers.
 */
export function openPostgres(url: string, options: PostgresOptions): { readonly dialect: PostgresDialect; readonly pool: pg.Pool } {
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    connectionTimeoutMillis: options.connectTimeoutMs,
    ...(options.searchPath ? { options: `-c search_path=${options.searchPath}` } : {}),
    types: {
      getTypeParser: ((oid: number, format?: string) =>
        oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  })
  // A connection that dies emits 'error', and an 'error' nobody listens to ends the process.
  // The pool listens to its idle connections (it drops the dead one, then emits on itself);
  // nobody listens to a connection while it is checked out, even between two statements of a
  // transaction. The query in flight, or the next one, fails on its own and is answered 503;
  // the dead connection is dropped when it is released; the next checkout connects afresh.
  pool.on('error', options.onConnectionLost)
  pool.on('acquire', (client) => client.on('error', options.onConnectionLost))
  pool.on('release', (_error, client) => client.off('error', options.onConnectionLost))
  return { dialect: new CurrentSchemaDialect({ pool }), pool }
}

class CurrentSchemaDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db)
  }
}
