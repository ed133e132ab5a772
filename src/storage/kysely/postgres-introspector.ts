// Kysely's migrator asks its dialect's introspector whether the migration tables exist. The
// PostgreSQL introspector Kysely ships reads every table of every schema of the database and
// resolves each schema by name as it goes, so a schema dropped meanwhile by anyone else (another
// tenant of the database, a test file finishing) fails that query with "schema ... does not
// exist", and with it a start-up. This one reads the connection's current schema only, where
// Coffer's tables and its migration bookkeeping live.
import { sql, type DatabaseIntrospector, type DatabaseMetadata, type Kysely, type SchemaMetadata, type TableMetadata } from 'kysely'

export class CurrentSchemaIntrospector implements DatabaseIntrospector {
  readonly #db: Kysely<unknown>

  constructor(db: Kysely<unknown>) {
    this.#db = db
  }

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ name: string }>`select current_schema() as name`.execute(this.#db)
    return rows
  }

  /** Tables and views of the current schema, without their columns (nothing here reads them). */
  async getTables(): Promise<TableMetadata[]> {
    const { rows } = await sql<{ name: string; schema: string; isView: boolean }>`
      select c.relname as name, n.nspname as schema, c.relkind = 'v' as "isView"
      from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and c.relkind in ('r', 'v', 'p')
      order by c.relname`.execute(this.#db)
    return rows.map((row) => ({ ...row, columns: [] }))
  }

  async getMetadata(): Promise<DatabaseMetadata> {
    return { tables: await this.getTables() }
  }
}
