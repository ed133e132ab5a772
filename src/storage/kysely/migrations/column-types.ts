// The few column types that are spelled differently on the two engines. Frozen migrations
// import these, so they never change meaning.
import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { Engine } from '../../port.ts'

export interface ColumnTypes {
  /** Opaque bytes. */
  readonly bytes: RawBuilder<unknown>
  /** For the few changes the engines make differently (SQLite cannot drop a NOT NULL in place). */
  readonly engine: Engine
}

export function columnTypes(engine: Engine): ColumnTypes {
  return { bytes: engine === 'postgres' ? sql`bytea` : sql`blob`, engine }
}

export type MigrationStep = (db: Kysely<unknown>, types: ColumnTypes) => Promise<void>
