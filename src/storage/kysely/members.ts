// Members of shared albums (decision 0067): one row per invitation or membership.
import type { MemberStore, Membership, Partner } from '../port/members.ts'
import { albumColumns, albumOf } from './albums.ts'
import { affected, asBuffer, type Executor } from './executor.ts'
import type { AlbumMembersTable } from './tables.ts'

const columns = ['albumId', 'userId', 'role', 'state', 'invitedBy', 'invitation', 'createdAt', 'acceptedAt', 'keyring'] as const
const memberColumns = columns.map((column) => `albumMembers.${column}` as const)

function membershipOf(row: AlbumMembersTable): Membership {
  return { ...row, invitation: asBuffer(row.invitation), keyring: row.keyring === null ? null : asBuffer(row.keyring) }
}

/**
 * Takes the account's row lock with a write that changes nothing (PostgreSQL); SQLite's BEGIN
 * IMMEDIATE already holds the database's write lock. A count made after it is exact.
 */
export async function lockAccount(db: Executor, userId: string): Promise<void> {
  await db
    .updateTable('accounts')
    .set((eb) => ({ userId: eb.ref('userId') }))
    .where('userId', '=', userId)
    .execute()
}

/** The partners joined to the other account's email and name: `mine` the account's own, else those naming it. */
async function partnersOf(db: Executor, userId: string, mine: boolean): Promise<Partner[]> {
  const [self, other] = mine ? (['partners.ownerId', 'partners.partnerId'] as const) : (['partners.partnerId', 'partners.ownerId'] as const)
  const rows = await db
    .selectFrom('partners')
    .innerJoin('accounts', 'accounts.userId', other)
    .select(['accounts.userId', 'accounts.email', 'accounts.displayName', 'partners.role', 'partners.createdAt'])
    .where(self, '=', userId)
    .where('accounts.deletedAt', 'is', null)
    .orderBy('partners.createdAt')
    .orderBy('accounts.userId')
    .execute()
  return rows.map((row) => ({ userId: row.userId, email: row.email, displayName: row.displayName, role: row.role, since: row.createdAt }))
}

export function memberQueries(db: Executor): MemberStore {
  return {
    async albumAccess(albumId, userId) {
      const row = await db
        .selectFrom('albums')
        .leftJoin('albumMembers', (join) =>
          join.onRef('albumMembers.albumId', '=', 'albums.albumId').on('albumMembers.userId', '=', userId).on('albumMembers.state', '=', 'active'),
        )
        .select(albumColumns.map((column) => `albums.${column}` as const))
        .select('albumMembers.role')
        .where('albums.albumId', '=', albumId)
        .executeTakeFirst()
      if (row === undefined) return undefined
      const role = row.ownerId === userId ? 'owner' : row.role
      return role === null ? undefined : { album: albumOf(row), role }
    },

    async inviteMember(invitation, max) {
      await lockAccount(db, invitation.invitedBy)
      const outstanding = await db
        .selectFrom('albumMembers')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('invitedBy', '=', invitation.invitedBy)
        .where('state', '=', 'invited')
        .executeTakeFirstOrThrow()
      if (Number(outstanding.count) >= max) return 'limit'
      const inserted = await db
        .insertInto('albumMembers')
        .values({ ...invitation, state: 'invited', acceptedAt: null, keyring: null })
        .onConflict((oc) => oc.columns(['albumId', 'userId']).doNothing())
        .executeTakeFirst()
      return affected(inserted) === 1 ? 'invited' : 'exists'
    },

    async findMembership(albumId, userId) {
      const row = await db.selectFrom('albumMembers').select(columns).where('albumId', '=', albumId).where('userId', '=', userId).executeTakeFirst()
      return row && membershipOf(row)
    },

    async replaceInvitation(albumId, userId, invitation) {
      const updated = await db.updateTable('albumMembers').set({ invitation }).where('albumId', '=', albumId).where('userId', '=', userId).executeTakeFirst()
      return affected(updated) === 1
    },

    async storeKeyring(albumId, userId, keyring) {
      const updated = await db
        .updateTable('albumMembers')
        .set({ keyring })
        .where('albumId', '=', albumId)
        .where('userId', '=', userId)
        .where('state', '=', 'active')
        .executeTakeFirst()
      return affected(updated) === 1
    },

    async listMembers(albumId) {
      const rows = await db
        .selectFrom('albumMembers')
        .innerJoin('accounts', 'accounts.userId', 'albumMembers.userId')
        .select(memberColumns)
        .select(['accounts.email', 'accounts.displayName'])
        .where('albumMembers.albumId', '=', albumId)
        .orderBy('albumMembers.createdAt')
        .orderBy('albumMembers.userId')
        .execute()
      return rows.map((row) => ({ ...membershipOf(row), email: row.email, displayName: row.displayName }))
    },

    async pendingInvitations(userId) {
      const rows = await db
        .selectFrom('albumMembers')
        .innerJoin('albums', 'albums.albumId', 'albumMembers.albumId')
        .innerJoin('accounts', 'accounts.userId', 'albums.ownerId')
        .select(memberColumns)
        .select(['albums.ownerId', 'accounts.email as ownerEmail', 'accounts.displayName as ownerDisplayName'])
        .where('albumMembers.userId', '=', userId)
        .where('albumMembers.state', '=', 'invited')
        .orderBy('albumMembers.createdAt')
        .orderBy('albumMembers.albumId')
        .execute()
      return rows.map((row) => ({ ...membershipOf(row), ownerId: row.ownerId, ownerEmail: row.ownerEmail, ownerDisplayName: row.ownerDisplayName }))
    },

    async acceptInvitation(albumId, userId, at) {
      const row = await db
        .updateTable('albumMembers')
        .set({ state: 'active', acceptedAt: at })
        .where('albumId', '=', albumId)
        .where('userId', '=', userId)
        .where('state', '=', 'invited')
        .returning(columns)
        .executeTakeFirst()
      return row && membershipOf(row)
    },

    async removeMember(albumId, userId, state) {
      let query = db.deleteFrom('albumMembers').where('albumId', '=', albumId).where('userId', '=', userId)
      if (state !== undefined) query = query.where('state', '=', state)
      return affected(await query.executeTakeFirst()) === 1
    },

    async sharedAlbums(userId) {
      const rows = await db
        .selectFrom('albumMembers')
        .innerJoin('albums', 'albums.albumId', 'albumMembers.albumId')
        .select(albumColumns.map((column) => `albums.${column}` as const))
        .select(['albumMembers.role', 'albumMembers.acceptedAt'])
        .where('albumMembers.userId', '=', userId)
        .where('albumMembers.state', '=', 'active')
        .orderBy('albumMembers.acceptedAt')
        .orderBy('albums.albumId')
        .execute()
      return rows.map((row) => ({ album: albumOf(row), role: row.role, joinedAt: row.acceptedAt ?? row.createdAt }))
    },

    async setPartner(ownerId, partnerId, role, at, max) {
      await lockAccount(db, ownerId)
      const existing = await db.selectFrom('partners').select('role').where('ownerId', '=', ownerId).where('partnerId', '=', partnerId).executeTakeFirst()
      if (existing !== undefined) {
        await db.updateTable('partners').set({ role }).where('ownerId', '=', ownerId).where('partnerId', '=', partnerId).execute()
        return 'set'
      }
      const counted = await db
        .selectFrom('partners')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('ownerId', '=', ownerId)
        .executeTakeFirstOrThrow()
      if (Number(counted.count) >= max) return 'limit'
      await db.insertInto('partners').values({ ownerId, partnerId, role, createdAt: at }).execute()
      return 'set'
    },

    async removePartner(ownerId, partnerId) {
      return affected(await db.deleteFrom('partners').where('ownerId', '=', ownerId).where('partnerId', '=', partnerId).executeTakeFirst()) === 1
    },

    async listPartners(userId) {
      return { partners: await partnersOf(db, userId, true), partnerOf: await partnersOf(db, userId, false) }
    },
  }
}
