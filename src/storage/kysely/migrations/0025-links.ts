// Frozen: public links (decision 0068, docs/sharing.md "Public links"). A link names an album
// (and, for a selection, its assets); the server keeps the SHA-256 of the link's access token
// and the envelope the owner's client sealed under the link's key, and the owner's own copy of
// the link's secret sealed under its master key: all opaque, never a key or a password. Each open of the link is a session, counted against the link's limit.
import type { MigrationStep } from './column-types.ts'

export const up: MigrationStep = async (db, types) => {
  await db.schema
    .createTable('album_links')
    .addColumn('link_id', 'text', (c) => c.primaryKey())
    .addColumn('album_id', 'text', (c) => c.notNull().references('albums.album_id').onDelete('cascade'))
    .addColumn('owner_id', 'text', (c) => c.notNull().references('accounts.user_id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull())
    .addColumn('envelope', types.bytes, (c) => c.notNull())
    .addColumn('owner_copy', types.bytes, (c) => c.notNull())
    .addColumn('selection', 'integer', (c) => c.notNull())
    .addColumn('downloads', 'integer', (c) => c.notNull())
    .addColumn('password_salt', types.bytes)
    .addColumn('password_memory_kib', 'integer')
    .addColumn('password_iterations', 'integer')
    .addColumn('expires_at', 'bigint')
    .addColumn('max_opens', 'integer')
    .addColumn('opens', 'integer', (c) => c.notNull())
    .addColumn('last_opened_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .addColumn('disabled_at', 'bigint')
    .addColumn('disabled_reason', 'text')
    .execute()
  await db.schema.createIndex('album_links_owner').on('album_links').columns(['owner_id', 'created_at']).execute()
  await db.schema.createIndex('album_links_album').on('album_links').column('album_id').execute()
  await db.schema
    .createTable('album_link_assets')
    .addColumn('link_id', 'text', (c) => c.notNull().references('album_links.link_id').onDelete('cascade'))
    .addColumn('asset_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('album_link_assets_pk', ['link_id', 'asset_id'])
    .execute()
  await db.schema
    .createTable('link_sessions')
    .addColumn('session_hash', 'text', (c) => c.primaryKey())
    .addColumn('link_id', 'text', (c) => c.notNull().references('album_links.link_id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('link_sessions_link').on('link_sessions').column('link_id').execute()
}
