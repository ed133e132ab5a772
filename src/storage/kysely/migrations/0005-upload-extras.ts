// Frozen: the blobs a lifecycle write stores besides the uploaded ones (its metadata blob and
// its manifest), declared on the write's upload session before their bytes are stored, so that
// a garbage collection running meanwhile keeps them as it keeps the session's declared blobs.
import type { MigrationStep } from './column-types.ts'

export const up: MigrationStep = async (db) => {
  await db.schema
    .createTable('upload_extras')
    .addColumn('upload_id', 'text', (c) => c.notNull().references('upload_sessions.upload_id').onDelete('cascade'))
    .addColumn('hash', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('upload_extras_pk', ['upload_id', 'hash'])
    .execute()
  await db.schema.createIndex('upload_extras_hash').on('upload_extras').column('hash').execute()
}
