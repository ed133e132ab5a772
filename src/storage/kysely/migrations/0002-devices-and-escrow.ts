// Frozen: session epochs, the identity key, the signed device directory, revoke-all
// challenges, the enrollment relay (codes, channels, mailboxes, redeem throttle), key escrow.
import type { MigrationStep } from './column-types.ts'

export const up: MigrationStep = async (db, types) => {
  await db.schema
    .alterTable('accounts')
    .addColumn('session_epoch', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()
  await db.schema
    .alterTable('sessions')
    .addColumn('epoch', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()
  await db.schema
    .alterTable('mfa_challenges')
    .addColumn('epoch', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()
  await db.schema.alterTable('accounts').addColumn('identity_key', types.bytes).execute()

  await db.schema
    .createTable('directories')
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('accounts.user_id').onDelete('cascade'))
    .addColumn('directory_version', 'bigint', (c) => c.notNull())
    .addColumn('body', types.bytes, (c) => c.notNull())
    .addColumn('etag', 'text', (c) => c.notNull())
    .addColumn('published_at', 'bigint', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('revoke_challenges')
    .addColumn('challenge_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('accounts.user_id').onDelete('cascade'))
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('enrollment_codes')
    .addColumn('code_hash', 'text', (c) => c.primaryKey())
    .addColumn('text_hash', 'text', (c) => c.notNull().unique())
    .addColumn('user_id', 'text', (c) => c.notNull().references('accounts.user_id').onDelete('cascade'))
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('relay_channels')
    .addColumn('channel_hash', 'text', (c) => c.primaryKey())
    .addColumn('initiator_id', 'text', (c) => c.notNull().references('accounts.user_id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('next_seq', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute()

  await db.schema
    .createTable('relay_messages')
    .addColumn('channel_hash', 'text', (c) => c.notNull().references('relay_channels.channel_hash').onDelete('cascade'))
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('direction', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('relay_messages_pk', ['channel_hash', 'seq'])
    .execute()
  await db.schema.createIndex('relay_messages_mailbox').on('relay_messages').columns(['channel_hash', 'direction']).execute()

  await db.schema
    .createTable('redeem_throttle')
    .addColumn('client_address', 'text', (c) => c.primaryKey())
    .addColumn('window_started_at', 'bigint', (c) => c.notNull())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('escrows')
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('accounts.user_id').onDelete('cascade'))
    .addColumn('blob', types.bytes, (c) => c.notNull())
    .addColumn('stored_at', 'bigint', (c) => c.notNull())
    .execute()

  for (const [table, column] of [
    ['revoke_challenges', 'expires_at'],
    ['enrollment_codes', 'expires_at'],
    ['relay_channels', 'expires_at'],
    ['mfa_challenges', 'expires_at'],
  ] as const) {
    await db.schema.createIndex(`${table}_${column}`).on(table).column(column).execute()
  }
}
