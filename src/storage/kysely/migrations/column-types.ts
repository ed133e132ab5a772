// The few column types that are spelled differently on the two engines. Frozen migrations
// import these, so they never change meaning.
import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { Engine } from '../../port.ts'

export interface ColumnTypes {
  /** Opaque bytes. */
  readonly bytes: RawBuilder<unknown>
}

export function columnTypes(engine: Engine): ColumnTypes {
  return { bytes: engine === 'postgres' ? sql`bytea` : sql`blob` }
}

export type MigrationStep = (db: Kysely<unknown>, types: ColumnTypes) => Promise<void>
