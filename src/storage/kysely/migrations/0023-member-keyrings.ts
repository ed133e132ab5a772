// Frozen: a member's keyring of a shared album (decision 0067): the album keys it received,
// sealed again by its own client under its own master key, so that its other devices (joined
// later, or recovered with the phrase) open the album without asking the owner again. Opaque here.
import type { MigrationStep } from './column-types.ts'

export const up: MigrationStep = async (db, types) => {
  await db.schema.alterTable('album_members').addColumn('keyring', types.bytes).execute()
}
