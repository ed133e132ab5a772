// Frozen: second-factor recovery codes (issue 17). One row per unused code of an account's
// second factor, the code kept only as its HMAC-SHA-256 under a key derived from SECRET_KEY.
// The rows belong to the factor's row: removing the factor (disable, an operator's reset)
// removes them in the same statement (ON DELETE CASCADE).
import type { MigrationStep } from './column-types.ts'

export const up: MigrationStep = async (db) => {
  await db.schema
    .createTable('recovery_codes')
    .addColumn('user_id', 'text', (c) => c.notNull().references('second_factors.user_id').onDelete('cascade'))
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('recovery_codes_pk', ['user_id', 'code_hash'])
    .execute()
}
