// Frozen: the members of shared albums (decision 0067). A row is an invitation until the invitee
// accepts it (`state` invited, then active); declining, removing and leaving delete the row, so
// access ends with that statement on every instance. `invitation` is the owner's client's sealed
// bytes, opaque here. asset_blobs gets an index by hash: a member's blob reads find the blob by
// hash across owners (the uploader of a shared album's photo is not the reader).
import type { MigrationStep } from './column-types.ts'

export const up: MigrationStep = async (db, types) => {
  await db.schema
    .createTable('album_members')
    .addColumn('album_id', 'text', (c) => c.notNull().references('albums.album_id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('accounts.user_id').onDelete('cascade'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('invited_by', 'text', (c) => c.notNull().references('accounts.user_id').onDelete('cascade'))
    .addColumn('invitation', types.bytes, (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('accepted_at', 'bigint')
    .addPrimaryKeyConstraint('album_members_pk', ['album_id', 'user_id'])
    .execute()
  await db.schema.createIndex('album_members_member').on('album_members').columns(['user_id', 'state']).execute()
  await db.schema.createIndex('album_members_inviter').on('album_members').columns(['invited_by', 'state']).execute()
  await db.schema.createIndex('asset_blobs_hash').on('asset_blobs').column('hash').execute()
}
