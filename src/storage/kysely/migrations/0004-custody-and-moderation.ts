// Frozen: the custody-receipt chain and its attestation keys, the deep-scan budget, and the
// moderation record (account suspension, asset takedown and legal hold).
import type { MigrationStep } from './column-types.ts'

export const up: MigrationStep = async (db, types) => {
  await db.schema
    .createTable('attestation_keys')
    .addColumn('key_id', 'text', (c) => c.primaryKey())
    .addColumn('public_key', types.bytes, (c) => c.notNull())
    .addColumn('private_box', types.bytes, (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('not_before', 'bigint', (c) => c.notNull())
    .addColumn('not_after', 'bigint')
    .execute()

  // One row: the head of the server-wide receipt chain. Appending starts by writing it, so
  // appenders queue on it (one line across all accounts and instances).
  await db.schema
    .createTable('receipt_chain')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('last_seq', 'bigint', (c) => c.notNull())
    .addColumn('last_receipt_hash', 'text')
    .addColumn('active_key_id', 'text')
    .execute()
  await db
    .insertInto('receipt_chain' as never)
    .values({ id: 1, last_seq: 0, last_receipt_hash: null, active_key_id: null } as never)
    .execute()

  await db.schema
    .createTable('receipts')
    .addColumn('receipt_seq', 'bigint', (c) => c.primaryKey())
    .addColumn('server_id', 'text', (c) => c.notNull())
    .addColumn('asset_id', 'text', (c) => c.notNull())
    .addColumn('upload_id', 'text', (c) => c.notNull())
    .addColumn('blob_role', 'text', (c) => c.notNull())
    .addColumn('ciphertext_hash', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('envelope_hash', 'text')
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .addColumn('server_key_id', 'text', (c) => c.notNull())
    .addColumn('prior_receipt_hash', 'text')
    .addColumn('receipt_cbor', types.bytes, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('receipts_asset').on('receipts').columns(['asset_id', 'receipt_seq']).execute()

  await db.schema
    .createTable('deep_scan_budgets')
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('accounts.user_id').onDelete('cascade'))
    .addColumn('window_started_at', 'bigint', (c) => c.notNull())
    .addColumn('bytes_used', 'bigint', (c) => c.notNull())
    .execute()

  await db.schema.alterTable('accounts').addColumn('suspended_at', 'bigint').execute()
  await db.schema
    .alterTable('accounts')
    .addColumn('moderation_seq', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute()
  await db.schema.alterTable('assets').addColumn('taken_down_at', 'bigint').execute()
  await db.schema.alterTable('assets').addColumn('legal_hold_at', 'bigint').execute()

  await db.schema
    .createTable('moderation_events')
    .addColumn('user_id', 'text', (c) => c.notNull().references('accounts.user_id').onDelete('cascade'))
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('asset_id', 'text')
    .addColumn('reason', 'text')
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('moderation_events_pk', ['user_id', 'seq'])
    .execute()
}
