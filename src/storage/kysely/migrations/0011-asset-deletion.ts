// Frozen: asset deletion (API.md section 6, "Asset deletion"). `assets.deleted_at` is set when a
// signed `delete` manifest ended the asset: it is no longer live, its chain head stays the
// delete's manifest and its bundle is superseded (garbage unless a legal hold keeps it). A
// deletion uses no upload session, so `album_ops.upload_id` becomes nullable: PostgreSQL drops
// the NOT NULL in place; SQLite cannot, so the table is rebuilt with the same columns, keys and
// rows (nothing references it).
import { sql } from 'kysely'
import type { MigrationStep } from './column-types.ts'

export const up: MigrationStep = async (db, types) => {
  await db.schema.alterTable('assets').addColumn('deleted_at', 'bigint').execute()

  if (types.engine === 'postgres') {
    await sql`alter table album_ops alter column upload_id drop not null`.execute(db)
    return
  }
  await db.schema
    .createTable('album_ops_next')
    .addColumn('album_id', 'text', (c) => c.notNull().references('albums.album_id').onDelete('cascade'))
    .addColumn('sync_seq', 'bigint', (c) => c.notNull())
    .addColumn('manifest_hash', 'text', (c) => c.notNull())
    .addColumn('asset_id', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('manifest_cbor', types.bytes, (c) => c.notNull())
    .addColumn('metadata_blob_hash', 'text')
    .addColumn('upload_id', 'text')
    .addColumn('applied_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('album_ops_pk', ['album_id', 'sync_seq'])
    .addUniqueConstraint('album_ops_manifest', ['album_id', 'manifest_hash'])
    .execute()
  await sql`insert into album_ops_next (album_id, sync_seq, manifest_hash, asset_id, action, manifest_cbor, metadata_blob_hash, upload_id, applied_at)
    select album_id, sync_seq, manifest_hash, asset_id, action, manifest_cbor, metadata_blob_hash, upload_id, applied_at from album_ops`.execute(db)
  await db.schema.dropTable('album_ops').execute()
  await db.schema.alterTable('album_ops_next').renameTo('album_ops').execute()
}
