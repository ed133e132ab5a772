import pg from 'pg'
import { PostgresDialect, type DatabaseIntrospector, type Kysely } from 'kysely'
import { CurrentSchemaIntrospector } from './postgres-introspector.ts'

const INT8_OID = 20

/**
 * `searchPath` pins every connection to one schema (the tests give each file its own).
 * BIGINT columns hold Unix milliseconds and counters, all far below 2^53: read them as numbers.
 */
export function postgresDialect(url: string, options: { searchPath?: string; maxConnections?: number } = {}): { dialect: PostgresDialect; pool: pg.Pool } {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.maxConnections ?? 10,
    ...(options.searchPath ? { options: `-c search_path=${options.searchPath}` } : {}),
    types: {
      getTypeParser: ((oid: number, format?: string) =>
        oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  })
  return { dialect: new CurrentSchemaDialect({ pool }), pool }
}

class CurrentSchemaDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db)
  }
}
