// Frozen: the batch downloads each account has in flight (decision 0045), one row per slot
// taken; slot numbers run from 0 below the per-account cap, so the primary key is the cap on
// every instance. A row whose lease ended (its holder died) is taken over by the next batch.
import type { MigrationStep } from './column-types.ts'

export const up: MigrationStep = async (db) => {
  await db.schema
    .createTable('batch_download_slots')
    .addColumn('user_id', 'text', (c) => c.notNull().references('accounts.user_id').onDelete('cascade'))
    .addColumn('slot', 'integer', (c) => c.notNull())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('batch_download_slots_pk', ['user_id', 'slot'])
    .execute()
}
