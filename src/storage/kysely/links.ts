// Public links (decision 0068): one row per link, its selection's assets, its sessions.
import { sql } from 'kysely'
import type { AlbumLink, LinkStore } from '../port/links.ts'
import { affected, asBuffer, type Executor } from './executor.ts'
import { lockAccount } from './members.ts'
import type { AlbumLinksTable } from './tables.ts'

function linkOf(row: AlbumLinksTable): AlbumLink {
  const { passwordSalt, passwordMemoryKib, passwordIterations, selection, downloads, envelope, ownerCopy, ...rest } = row
  return {
    ...rest,
    envelope: asBuffer(envelope),
    ownerCopy: asBuffer(ownerCopy),
    selection: selection === 1,
    downloads: downloads === 1,
    password:
      passwordSalt === null || passwordMemoryKib === null || passwordIterations === null
        ? null
        : { salt: asBuffer(passwordSalt), memoryKib: passwordMemoryKib, iterations: passwordIterations },
  }
}

/** A link that still works at `now`: not revoked, not disabled, not expired. */
const working = (now: number) =>
  sql<boolean>`album_links.revoked_at is null and album_links.disabled_at is null and (album_links.expires_at is null or album_links.expires_at > ${now})`

export function linkQueries(db: Executor): LinkStore {
  return {
    async createLink(link, now, max) {
      await lockAccount(db, link.ownerId)
      const counted = await db
        .selectFrom('albumLinks')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('ownerId', '=', link.ownerId)
        .where(working(now))
        .executeTakeFirstOrThrow()
      if (Number(counted.count) >= max) return 'limit'
      const { assetIds, password, downloads, ...rest } = link
      const inserted = await db
        .insertInto('albumLinks')
        .values({
          ...rest,
          selection: assetIds === null ? 0 : 1,
          downloads: downloads ? 1 : 0,
          passwordSalt: password?.salt ?? null,
          passwordMemoryKib: password?.memoryKib ?? null,
          passwordIterations: password?.iterations ?? null,
          opens: 0,
        })
        .onConflict((oc) => oc.column('linkId').doNothing())
        .executeTakeFirst()
      if (affected(inserted) !== 1) return 'exists'
      if (assetIds !== null && assetIds.length > 0)
        await db
          .insertInto('albumLinkAssets')
          .values(assetIds.map((assetId) => ({ linkId: link.linkId, assetId })))
          .execute()
      return 'created'
    },

    async findLink(linkId) {
      const row = await db.selectFrom('albumLinks').selectAll().where('linkId', '=', linkId).executeTakeFirst()
      return row === undefined ? undefined : linkOf(row)
    },

    async liveAssetsOf(albumId, assetIds) {
      if (assetIds.length === 0) return new Set()
      const rows = await db
        .selectFrom('assets')
        .select('assetId')
        .where('albumId', '=', albumId)
        .where('assetId', 'in', assetIds)
        .where('deletedAt', 'is', null)
        .execute()
      return new Set(rows.map((row) => row.assetId))
    },

    async listLinks({ ownerId, albumId, limit }) {
      let query = db.selectFrom('albumLinks').selectAll()
      if (ownerId !== undefined) query = query.where('ownerId', '=', ownerId)
      if (albumId !== undefined) query = query.where('albumId', '=', albumId)
      const rows = await query.orderBy('createdAt', 'desc').orderBy('linkId').limit(limit).execute()
      return rows.map(linkOf)
    },

    async linkAssets(linkIds) {
      const assets = new Map<string, string[]>()
      if (linkIds.length === 0) return assets
      const rows = await db.selectFrom('albumLinkAssets').selectAll().where('linkId', 'in', linkIds).orderBy('assetId').execute()
      for (const row of rows) assets.set(row.linkId, [...(assets.get(row.linkId) ?? []), row.assetId])
      return assets
    },

    async revokeLink(linkId, at) {
      const result = await db.updateTable('albumLinks').set({ revokedAt: at }).where('linkId', '=', linkId).where('revokedAt', 'is', null).executeTakeFirst()
      await db.deleteFrom('linkSessions').where('linkId', '=', linkId).execute()
      return affected(result) === 1
    },

    async disableLink(linkId, at, reason) {
      const result = await db
        .updateTable('albumLinks')
        .set({ disabledAt: at, disabledReason: reason })
        .where('linkId', '=', linkId)
        .where('disabledAt', 'is', null)
        .executeTakeFirst()
      await db.deleteFrom('linkSessions').where('linkId', '=', linkId).execute()
      return affected(result) === 1
    },

    async replaceLinkEnvelope(linkId, envelope) {
      await db.updateTable('albumLinks').set({ envelope }).where('linkId', '=', linkId).execute()
    },

    async openLink(linkId, session, now) {
      // One statement decides the count: of two opens at once, only one takes the last.
      const counted = await db
        .updateTable('albumLinks')
        .set((eb) => ({ opens: eb('opens', '+', 1), lastOpenedAt: now }))
        .where('linkId', '=', linkId)
        .where((eb) => eb.or([eb('maxOpens', 'is', null), eb('opens', '<', eb.ref('maxOpens'))]))
        .executeTakeFirst()
      if (affected(counted) !== 1) return 'used_up'
      await db.insertInto('linkSessions').values({ sessionHash: session.sessionHash, linkId, createdAt: now, expiresAt: session.expiresAt }).execute()
      return 'opened'
    },

    async findLinkSession(sessionHash, now) {
      const row = await db
        .selectFrom('linkSessions')
        .innerJoin('albumLinks', 'albumLinks.linkId', 'linkSessions.linkId')
        .selectAll('albumLinks')
        .where('linkSessions.sessionHash', '=', sessionHash)
        .where('linkSessions.expiresAt', '>', now)
        .executeTakeFirst()
      return row === undefined ? undefined : linkOf(row)
    },
  }
}
