// Frozen: the parts of blobs uploaded in pieces (decision 0034). One row per part the blob store
// holds in its parts namespace under `name`, bytes [offset, offset + size) of the session's blob
// `hash`. The primary key decides two writers of the same offset: the second insert loses. The
// rows belong to their session (ON DELETE CASCADE); the files are removed by maintenance.
import type { MigrationStep } from './column-types.ts'

export const up: MigrationStep = async (db) => {
  await db.schema
    .createTable('upload_parts')
    .addColumn('upload_id', 'text', (c) => c.notNull().references('upload_sessions.upload_id').onDelete('cascade'))
    .addColumn('hash', 'text', (c) => c.notNull())
    .addColumn('offset', 'bigint', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('upload_parts_pk', ['upload_id', 'hash', 'offset'])
    .execute()
}
