// Frozen: brute-force budgets counted before the work they guard.
// - password_failures: wrong passwords and the lock, per sign-in subject (the SHA-256 of the
//   email key), for accounts and unknown emails alike; replaces accounts.failed_password_count,
//   accounts.locked_until and unknown_sign_ins, whose counts move here.
// - attempt_budgets: windowed budgets per (scope, subject), e.g. refused redemptions per client
//   address and wrong second-factor codes per account; replaces redeem_throttle.
// - security_events: what an owner is shown about attacks on the account.
import { createHash } from 'node:crypto'
import { sql } from 'kysely'
import type { MigrationStep } from './column-types.ts'

/** The redeem window this migration assumes for open throttle windows (REDEEM_WINDOW_S's default). */
const REDEEM_WINDOW_MS = 600_000

export const up: MigrationStep = async (db) => {
  await db.schema
    .createTable('password_failures')
    .addColumn('subject', 'text', (c) => c.primaryKey())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addColumn('last_failed_at', 'bigint', (c) => c.notNull())
    .addColumn('locked_until', 'bigint')
    .execute()
  await db.schema.createIndex('password_failures_last_failed_at').on('password_failures').column('last_failed_at').execute()

  const now = Date.now()
  // Rows come back camelCased (the storage's CamelCasePlugin).
  const counted = await sql<{ emailKey: string; failedPasswordCount: number; lockedUntil: number | string | null }>`
    select email_key, failed_password_count, locked_until from accounts where failed_password_count > 0 or locked_until is not null`.execute(db)
  for (const row of counted.rows) {
    const subject = createHash('sha256').update(row.emailKey, 'utf8').digest('hex')
    const lockedUntil = row.lockedUntil === null ? null : Number(row.lockedUntil)
    await sql`insert into password_failures (subject, failures, last_failed_at, locked_until) values (${subject}, ${row.failedPasswordCount}, ${now}, ${lockedUntil})`.execute(
      db,
    )
  }
  await sql`insert into password_failures (subject, failures, last_failed_at, locked_until)
    select email_hash, failures, last_failed_at, null from unknown_sign_ins
    where email_hash not in (select subject from password_failures)`.execute(db)
  await db.schema.dropTable('unknown_sign_ins').execute()
  await db.schema.alterTable('accounts').dropColumn('failed_password_count').execute()
  await db.schema.alterTable('accounts').dropColumn('locked_until').execute()

  await db.schema
    .createTable('attempt_budgets')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('window_ends_at', 'bigint', (c) => c.notNull())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('attempt_budgets_pk', ['scope', 'subject'])
    .execute()
  await db.schema.createIndex('attempt_budgets_window_ends_at').on('attempt_budgets').column('window_ends_at').execute()
  await sql`insert into attempt_budgets (scope, subject, window_ends_at, failures)
    select 'redeem', client_address, window_started_at + ${REDEEM_WINDOW_MS}, failures from redeem_throttle`.execute(db)
  await db.schema.dropTable('redeem_throttle').execute()

  await db.schema
    .createTable('security_events')
    .addColumn('event_id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('accounts.user_id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('until', 'bigint')
    .addColumn('ip_address', 'text')
    .addColumn('user_agent', 'text')
    .execute()
  await db.schema.createIndex('security_events_user_at').on('security_events').columns(['user_id', 'at']).execute()
}
