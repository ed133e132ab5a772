// Frozen: accounts, sessions and cohorts, the second factor and its replay ledger.
import type { MigrationStep } from './column-types.ts'

export const up: MigrationStep = async (db, types) => {
  await db.schema
    .createTable('accounts')
    .addColumn('user_id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('email_key', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('display_name', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('failed_password_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('locked_until', 'bigint')
    .execute()

  await db.schema
    .createTable('sessions')
    .addColumn('session_id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('accounts.user_id').onDelete('cascade'))
    .addColumn('lineage_id', 'text', (c) => c.notNull())
    .addColumn('access_hash', 'text', (c) => c.notNull().unique())
    .addColumn('refresh_hash', 'text', (c) => c.notNull().unique())
    .addColumn('access_expires_at', 'bigint', (c) => c.notNull())
    .addColumn('refresh_expires_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('authenticated_at', 'bigint', (c) => c.notNull())
    .addColumn('user_agent', 'text')
    .addColumn('ip_address', 'text')
    .addColumn('cohort_hash', 'text')
    .addColumn('device_id', 'text')
    .addColumn('rotated_at', 'bigint')
    .addColumn('successor_id', 'text')
    .execute()
  await db.schema.createIndex('sessions_user_id').on('sessions').column('user_id').execute()
  await db.schema.createIndex('sessions_lineage_id').on('sessions').column('lineage_id').execute()
  await db.schema.createIndex('sessions_refresh_expires_at').on('sessions').column('refresh_expires_at').execute()

  await db.schema
    .createTable('cohorts')
    .addColumn('user_id', 'text', (c) => c.notNull().references('accounts.user_id').onDelete('cascade'))
    .addColumn('cohort_hash', 'text', (c) => c.notNull())
    .addColumn('first_seen', 'bigint', (c) => c.notNull())
    .addColumn('last_seen', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('cohorts_pk', ['user_id', 'cohort_hash'])
    .execute()

  await db.schema
    .createTable('second_factors')
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('accounts.user_id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('secret_box', types.bytes, (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('totp_used_steps')
    .addColumn('user_id', 'text', (c) => c.notNull().references('accounts.user_id').onDelete('cascade'))
    .addColumn('step', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('totp_used_steps_pk', ['user_id', 'step'])
    .execute()

  await db.schema
    .createTable('mfa_challenges')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('accounts.user_id').onDelete('cascade'))
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('failed_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()
}
