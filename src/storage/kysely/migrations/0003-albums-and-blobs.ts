// Frozen: albums and their upgrade ceremony, upload sessions, blob ownership, assets with
// their bundles, and the per-album feed of applied lifecycle manifests.
import type { MigrationStep } from './column-types.ts'

export const up: MigrationStep = async (db, types) => {
  await db.schema
    .createTable('albums')
    .addColumn('album_id', 'text', (c) => c.primaryKey())
    .addColumn('owner_id', 'text', (c) => c.notNull().references('accounts.user_id').onDelete('cascade'))
    .addColumn('protocol_version', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('next_sync_seq', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('upgrade_intent_id', 'text')
    .addColumn('upgrade_to_version', 'text')
    .addColumn('upgrade_intent', types.bytes)
    .addColumn('upgrade_expires_at', 'bigint')
    .execute()
  await db.schema.createIndex('albums_owner').on('albums').columns(['owner_id', 'created_at']).execute()

  await db.schema
    .createTable('album_upgrades')
    .addColumn('album_id', 'text', (c) => c.notNull().references('albums.album_id').onDelete('cascade'))
    .addColumn('intent_id', 'text', (c) => c.notNull())
    .addColumn('from_version', 'text', (c) => c.notNull())
    .addColumn('to_version', 'text', (c) => c.notNull())
    .addColumn('intent', types.bytes, (c) => c.notNull())
    .addColumn('tombstone', types.bytes, (c) => c.notNull())
    .addColumn('committed_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('album_upgrades_pk', ['album_id', 'intent_id'])
    .execute()

  await db.schema
    .createTable('upload_sessions')
    .addColumn('upload_id', 'text', (c) => c.primaryKey())
    .addColumn('owner_id', 'text', (c) => c.notNull().references('accounts.user_id').onDelete('cascade'))
    .addColumn('album_id', 'text', (c) => c.notNull().references('albums.album_id').onDelete('cascade'))
    .addColumn('crypto_suite_id', 'integer', (c) => c.notNull())
    .addColumn('ciphertext_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('closed_at', 'bigint')
    .execute()
  await db.schema.createIndex('upload_sessions_album').on('upload_sessions').columns(['album_id', 'closed_at', 'expires_at']).execute()
  await db.schema.createIndex('upload_sessions_original').on('upload_sessions').columns(['owner_id', 'album_id', 'ciphertext_hash']).execute()

  await db.schema
    .createTable('upload_blobs')
    .addColumn('upload_id', 'text', (c) => c.notNull().references('upload_sessions.upload_id').onDelete('cascade'))
    .addColumn('hash', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('upload_blobs_pk', ['upload_id', 'hash'])
    .execute()
  await db.schema.createIndex('upload_blobs_hash').on('upload_blobs').column('hash').execute()

  await db.schema
    .createTable('blobs')
    .addColumn('owner_id', 'text', (c) => c.notNull().references('accounts.user_id').onDelete('cascade'))
    .addColumn('hash', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('stored_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('blobs_pk', ['owner_id', 'hash'])
    .execute()
  await db.schema.createIndex('blobs_hash').on('blobs').column('hash').execute()

  await db.schema
    .createTable('assets')
    .addColumn('asset_id', 'text', (c) => c.primaryKey())
    .addColumn('album_id', 'text', (c) => c.notNull().references('albums.album_id').onDelete('cascade'))
    .addColumn('owner_id', 'text', (c) => c.notNull().references('accounts.user_id').onDelete('cascade'))
    .addColumn('chain_head', 'text', (c) => c.notNull())
    .addColumn('original_hash', 'text', (c) => c.notNull())
    .addColumn('retention_until', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('asset_blobs')
    .addColumn('asset_id', 'text', (c) => c.notNull().references('assets.asset_id').onDelete('cascade'))
    .addColumn('sync_seq', 'bigint', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('upload_id', 'text', (c) => c.notNull())
    .addColumn('superseded_at', 'bigint')
    .addPrimaryKeyConstraint('asset_blobs_pk', ['asset_id', 'sync_seq', 'hash'])
    // A bundle can only reference bytes its owner stores: garbage collection cannot pull a
    // blob out from under a reference, whatever the interleaving.
    .addForeignKeyConstraint('asset_blobs_blob', ['owner_id', 'hash'], 'blobs', ['owner_id', 'hash'])
    .execute()
  await db.schema.createIndex('asset_blobs_owner_hash').on('asset_blobs').columns(['owner_id', 'hash']).execute()

  await db.schema
    .createTable('album_ops')
    .addColumn('album_id', 'text', (c) => c.notNull().references('albums.album_id').onDelete('cascade'))
    .addColumn('sync_seq', 'bigint', (c) => c.notNull())
    .addColumn('manifest_hash', 'text', (c) => c.notNull())
    .addColumn('asset_id', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('manifest_cbor', types.bytes, (c) => c.notNull())
    .addColumn('metadata_blob_hash', 'text')
    .addColumn('upload_id', 'text', (c) => c.notNull())
    .addColumn('applied_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('album_ops_pk', ['album_id', 'sync_seq'])
    .addUniqueConstraint('album_ops_manifest', ['album_id', 'manifest_hash'])
    .execute()
}
