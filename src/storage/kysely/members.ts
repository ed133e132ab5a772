// Members of shared albums (decision 0067): one row per invitation or membership.
import type { MemberStore, Membership } from '../port/members.ts'
import { albumColumns, albumOf } from './albums.ts'
import { affected, asBuffer, type Executor } from './executor.ts'
import type { AlbumMembersTable } from './tables.ts'

const columns = ['albumId', 'userId', 'role', 'state', 'invitedBy', 'invitation', 'createdAt', 'acceptedAt', 'keyring'] as const
const memberColumns = columns.map((column) => `albumMembers.${column}` as const)

function membershipOf(row: AlbumMembersTable): Membership {
  return { ...row, invitation: asBuffer(row.invitation), keyring: row.keyring === null ? null : asBuffer(row.keyring) }
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
      // A write that changes nothing takes the inviter's account row lock (PostgreSQL); SQLite's
      // BEGIN IMMEDIATE already holds the database's write lock. The count below is then exact.
      await db
        .updateTable('accounts')
        .set((eb) => ({ userId: eb.ref('userId') }))
        .where('userId', '=', invitation.invitedBy)
        .execute()
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
  }
}
