// Frozen: what an account stores, for the storage quota. `account_storage.stored_bytes` is the
// size of the distinct blobs the account owns, maintained in the transactions that add or remove
// its `blobs` rows (summing them at every upload open would cost a scan of every blob of the
// account; see docs/decisions/0008-storage-quota.md). Its row is also the lock that upload opens
// of one account queue on. Existing blobs are counted here once. The index finds an account's
// open upload sessions without reading its closed ones.
import { sql } from 'kysely'
import type { MigrationStep } from './column-types.ts'

export const up: MigrationStep = async (db) => {
  await db.schema
    .createTable('account_storage')
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('accounts.user_id').onDelete('cascade'))
    .addColumn('stored_bytes', 'bigint', (c) => c.notNull())
    .execute()
  await sql`insert into account_storage (user_id, stored_bytes) select owner_id, sum(size) from blobs group by owner_id`.execute(db)
  await db.schema.createIndex('upload_sessions_owner_open').on('upload_sessions').columns(['owner_id', 'closed_at', 'expires_at']).execute()
}
