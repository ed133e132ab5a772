import type { Album, AlbumStore } from '../port/albums.ts'
import { affected, type Executor } from './executor.ts'
import type { AlbumsTable } from './tables.ts'

export const albumColumns = ['albumId', 'ownerId', 'protocolVersion', 'createdAt', 'upgradeIntentId', 'upgradeToVersion', 'upgradeExpiresAt'] as const

export function albumOf(row: Pick<AlbumsTable, (typeof albumColumns)[number]>): Album {
  const upgrade =
    row.upgradeIntentId !== null && row.upgradeToVersion !== null && row.upgradeExpiresAt !== null
      ? { intentId: row.upgradeIntentId, toVersion: row.upgradeToVersion, expiresAt: row.upgradeExpiresAt }
      : null
  return { albumId: row.albumId, ownerId: row.ownerId, protocolVersion: row.protocolVersion, createdAt: row.createdAt, upgrade }
}

export function albumQueries(db: Executor): AlbumStore {
  return {
    async provisionAlbum(album) {
      const inserted = await db
        .insertInto('albums')
        .values({ ...album, nextSyncSeq: 0 })
        .onConflict((oc) => oc.column('albumId').doNothing())
        .executeTakeFirst()
      if (affected(inserted) === 1) return 'created'
      const existing = await db.selectFrom('albums').select('ownerId').where('albumId', '=', album.albumId).executeTakeFirstOrThrow()
      return existing.ownerId === album.ownerId ? 'exists' : 'taken'
    },

    async findAlbum(albumId) {
      const row = await db.selectFrom('albums').select(albumColumns).where('albumId', '=', albumId).executeTakeFirst()
      return row && albumOf(row)
    },

    async listAlbums(ownerId) {
      const rows = await db.selectFrom('albums').select(albumColumns).where('ownerId', '=', ownerId).orderBy('createdAt').orderBy('albumId').execute()
      return rows.map(albumOf)
    },

    async cutAlbums(ownerId) {
      // One statement, so one snapshot: the chains' heads are read with the albums, not after
      // them (a row per album and chain: there are few chains).
      const rows = await db
        .selectFrom('albums')
        .innerJoin('receiptChain', (join) => join.onTrue())
        .select([...albumColumns.map((column) => `albums.${column}` as const), 'albums.nextSyncSeq', 'receiptChain.lastSeq'])
        .where('albums.ownerId', '=', ownerId)
        .orderBy('albums.createdAt')
        .orderBy('albums.albumId')
        .orderBy('receiptChain.id')
        .execute()
      const albums = rows.filter((row, i) => row.albumId !== rows[i - 1]?.albumId)
      const receiptHeads = rows.filter((row) => row.albumId === rows[0]?.albumId).map((row) => Number(row.lastSeq))
      return { albums: albums.map((row) => ({ album: albumOf(row), lastSyncSeq: row.nextSyncSeq })), receiptHeads }
    },

    async lockAlbum(albumId) {
      // A write that changes nothing still takes the row lock (PostgreSQL); SQLite's
      // BEGIN IMMEDIATE already holds the database's write lock.
      const row = await db
        .updateTable('albums')
        .set((eb) => ({ nextSyncSeq: eb.ref('nextSyncSeq') }))
        .where('albumId', '=', albumId)
        .returning(albumColumns)
        .executeTakeFirst()
      return row && albumOf(row)
    },

    async countInFlight(albumId, now) {
      const row = await db
        .selectFrom('uploadSessions')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('albumId', '=', albumId)
        .where('closedAt', 'is', null)
        .where('expiresAt', '>', now)
        .executeTakeFirstOrThrow()
      return Number(row.count)
    },

    async setUpgrade(albumId, upgrade) {
      await db
        .updateTable('albums')
        .set({
          upgradeIntentId: upgrade?.intentId ?? null,
          upgradeToVersion: upgrade?.toVersion ?? null,
          upgradeIntent: upgrade?.intent ?? null,
          upgradeExpiresAt: upgrade?.expiresAt ?? null,
        })
        .where('albumId', '=', albumId)
        .execute()
    },

    async commitUpgrade(albumId, record) {
      const album = await db.selectFrom('albums').select('upgradeIntent').where('albumId', '=', albumId).executeTakeFirstOrThrow()
      await db
        .insertInto('albumUpgrades')
        .values({ albumId, ...record, intent: album.upgradeIntent ?? new Uint8Array() })
        .execute()
      await db
        .updateTable('albums')
        .set({ protocolVersion: record.toVersion, upgradeIntentId: null, upgradeToVersion: null, upgradeIntent: null, upgradeExpiresAt: null })
        .where('albumId', '=', albumId)
        .execute()
    },

    async isCommittedIntent(albumId, intentId) {
      const row = await db.selectFrom('albumUpgrades').select('intentId').where('albumId', '=', albumId).where('intentId', '=', intentId).executeTakeFirst()
      return row !== undefined
    },

    async takeSyncSeq(albumId) {
      const row = await db
        .updateTable('albums')
        .set((eb) => ({ nextSyncSeq: eb('nextSyncSeq', '+', 1) }))
        .where('albumId', '=', albumId)
        .returning('nextSyncSeq')
        .executeTakeFirstOrThrow()
      return row.nextSyncSeq
    },

    async hasDirectory(userId) {
      return (await db.selectFrom('directories').select('userId').where('userId', '=', userId).executeTakeFirst()) !== undefined
    },
  }
}
