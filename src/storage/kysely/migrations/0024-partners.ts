// Frozen: an account's partners (decision 0067, "Share everything"): the accounts its clients
// share every album with, the new ones too. The server keeps the list; each album is still
// shared by the owner's client, sealed for the partner's devices.
import type { MigrationStep } from './column-types.ts'

export const up: MigrationStep = async (db) => {
  await db.schema
    .createTable('partners')
    .addColumn('owner_id', 'text', (c) => c.notNull().references('accounts.user_id').onDelete('cascade'))
    .addColumn('partner_id', 'text', (c) => c.notNull().references('accounts.user_id').onDelete('cascade'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('partners_pk', ['owner_id', 'partner_id'])
    .execute()
  await db.schema.createIndex('partners_partner').on('partners').column('partner_id').execute()
}
