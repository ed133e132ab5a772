// Frozen: wrong sign-ins for emails that have no account, counted per SHA-256 of the email as
// a wrong password is counted on an account, so that an unknown email costs the same
// database write as a wrong password (API.md section 3: the same timing for both).
import type { MigrationStep } from './column-types.ts'

export const up: MigrationStep = async (db) => {
  await db.schema
    .createTable('unknown_sign_ins')
    .addColumn('email_hash', 'text', (c) => c.primaryKey())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addColumn('last_failed_at', 'bigint', (c) => c.notNull())
    .execute()
}
