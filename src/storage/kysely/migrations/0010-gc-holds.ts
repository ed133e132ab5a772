// Frozen: holds on the removal of blob files. While a hold has not lapsed, no maintenance pass
// (on any instance) removes a queued file: the rows go, their files wait. A backup takes one
// before it snapshots the database and keeps it until it has copied every file the snapshot
// names, so that no file it needs is reclaimed under it. `expires_at` bounds a hold whose
// holder died; a live holder renews it.
import type { MigrationStep } from './column-types.ts'

export const up: MigrationStep = async (db) => {
  await db.schema
    .createTable('gc_holds')
    .addColumn('hold_id', 'text', (c) => c.primaryKey())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute()
}
