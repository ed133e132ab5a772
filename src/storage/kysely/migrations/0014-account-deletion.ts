// Frozen: deleting an account (issue 17). The account row stays as a tombstone (`deleted_at`,
// its email and credentials scrubbed) so that its moderation record and the operator's log keep
// their history and a repeated deletion answers as the first did. `account_purges` is the queue
// of deleted accounts whose rows are not all gone yet: the deletion commits with its entry, and
// every maintenance pass works through it, so a purge cut off half-way is finished later, and an
// asset kept by a legal hold or a retention floor goes once that lapses.
import type { MigrationStep } from './column-types.ts'

export const up: MigrationStep = async (db) => {
  await db.schema.alterTable('accounts').addColumn('deleted_at', 'bigint').execute()
  await db.schema
    .createTable('account_purges')
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('accounts.user_id').onDelete('cascade'))
    .addColumn('deleted_at', 'bigint', (c) => c.notNull())
    .execute()
}
