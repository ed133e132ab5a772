// Frozen: the trash (decision 0059). A row holds an asset's signed `delete` manifest (with its
// envelope, as JSON) until `purge_at`, when the maintenance pass applies it; restoring the asset
// removes the row. One row per asset at most. `trash_seq` numbers the rows in the order they
// went in, on every instance: the cursor of the owner's paged list.
import type { MigrationStep } from './column-types.ts'

export const up: MigrationStep = async (db, types) => {
  await db.schema
    .createTable('trash')
    .addColumn('trash_seq', types.engine === 'postgres' ? 'bigint' : 'integer', (c) =>
      types.engine === 'postgres' ? c.primaryKey().generatedByDefaultAsIdentity() : c.primaryKey().autoIncrement(),
    )
    .addColumn('user_id', 'text', (c) => c.notNull().references('accounts.user_id').onDelete('cascade'))
    .addColumn('album_id', 'text', (c) => c.notNull().references('albums.album_id').onDelete('cascade'))
    .addColumn('file_id', 'text', (c) => c.notNull().unique().references('assets.asset_id').onDelete('cascade'))
    .addColumn('manifest_hash', 'text', (c) => c.notNull())
    .addColumn('manifest_cbor', types.bytes, (c) => c.notNull())
    .addColumn('manifest_envelope', 'text', (c) => c.notNull())
    .addColumn('trashed_at', 'bigint', (c) => c.notNull())
    .addColumn('purge_at', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('trash_owner').on('trash').columns(['user_id', 'trash_seq']).execute()
  await db.schema.createIndex('trash_due').on('trash').columns(['purge_at']).execute()
}
