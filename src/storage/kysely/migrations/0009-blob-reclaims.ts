// Frozen: files to look at again. A hash enters this queue in the same transaction that stops a
// row from naming its file (garbage collection deleting owner rows, the sweep deleting an
// expired upload session that declared it), and leaves it only once its file was removed or
// found needed; so a crash between the row going and the file going leaves the file queued, not
// lost. `generation` moves on every new entry of a hash already queued, so that a pass drops
// only the entry it looked at.
import type { MigrationStep } from './column-types.ts'

export const up: MigrationStep = async (db) => {
  await db.schema
    .createTable('blob_reclaims')
    .addColumn('hash', 'text', (c) => c.primaryKey())
    .addColumn('generation', 'integer', (c) => c.notNull())
    .execute()
}
