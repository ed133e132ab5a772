// Frozen: receipts handed to a chain's holder (decision 0073). An instance that does not hold the
// lease of the chain it appends to records its write's bundle here, in the write's transaction,
// instead of appending; the holder signs and appends it at one of its own slots and deletes the
// row in that transaction. The row is the receipts' promise: until one transaction deletes it and
// appends them, the bundle is pending (fsck says so), never lost.
import type { MigrationStep } from './column-types.ts'

export const up: MigrationStep = async (db) => {
  await db.schema
    .createTable('receipt_requests')
    .addColumn('request_id', 'text', (c) => c.primaryKey())
    .addColumn('chain', 'integer', (c) => c.notNull())
    .addColumn('asset_id', 'text', (c) => c.notNull())
    .addColumn('upload_id', 'text', (c) => c.notNull())
    // The bundle's blobs and envelope hash as JSON: what signing the receipts needs.
    .addColumn('bundle', 'text', (c) => c.notNull())
    .addColumn('requested_at', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('receipt_requests_chain').on('receipt_requests').columns(['chain', 'requested_at']).execute()
  await db.schema.createIndex('receipt_requests_bundle').on('receipt_requests').columns(['asset_id', 'upload_id']).execute()
}
