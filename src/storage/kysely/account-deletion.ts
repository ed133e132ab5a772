import type { AccountDeletionStore } from '../port/account-deletion.ts'
import { affected, type Executor } from './executor.ts'
import { removeUnneededBlobs } from './garbage.ts'
import { queueUnownedDeclarations } from './uploads.ts'

/** The tables of what an account is as a person (its own rows, keyed by user id) that a deletion empties at once. */
const personalTables = [
  'sessions',
  'cohorts',
  'secondFactors',
  'totpUsedSteps',
  'mfaChallenges',
  'directories',
  'revokeChallenges',
  'enrollmentCodes',
  'escrows',
  'securityEvents',
  'deepScanBudgets',
  // What the trash held goes at once: its deletes are never applied, the purge removes the assets.
  'trash',
] as const

export function accountDeletionQueries(db: Executor): AccountDeletionStore {
  return {
    async markAccountDeleted(userId, now) {
      // The row first: a second deletion waits here for the first and then finds it done.
      const scrubbed = await db
        .updateTable('accounts')
        .set((eb) => ({
          deletedAt: now,
          email: '',
          // No email key has no @: this one cannot be any sign-in's, and keeps the column unique.
          emailKey: `deleted:${userId}`,
          passwordHash: '',
          displayName: null,
          identityKey: null,
          sessionEpoch: eb('sessionEpoch', '+', 1),
        }))
        .where('userId', '=', userId)
        .where('deletedAt', 'is', null)
        .executeTakeFirst()
      if (affected(scrubbed) !== 1) return false
      for (const table of personalTables) await db.deleteFrom(table).where('userId', '=', userId).execute()
      await db.deleteFrom('relayChannels').where('initiatorId', '=', userId).execute()
      // Its memberships and invitations, and those of its albums (decision 0067): access ends with the deletion.
      await db.deleteFrom('albumMembers').where('userId', '=', userId).execute()
      await db
        .deleteFrom('albumMembers')
        .where('albumId', 'in', db.selectFrom('albums').select('albumId').where('ownerId', '=', userId))
        .execute()
      // Its public links (decision 0068): they stop with the deletion, their sessions with them.
      await db.deleteFrom('albumLinks').where('ownerId', '=', userId).execute()
      // The budgets counted per account (those per client address or per email are not its own).
      await db.deleteFrom('attemptBudgets').where('scope', 'in', ['second_factor', 'export', 'account_lookup']).where('subject', '=', userId).execute()
      await db.updateTable('uploadSessions').set({ closedAt: now }).where('ownerId', '=', userId).where('closedAt', 'is', null).execute()
      await db.insertInto('accountPurges').values({ userId, deletedAt: now }).execute()
      return true
    },

    async pendingAccountPurges(after, limit) {
      const rows = await db.selectFrom('accountPurges').select('userId').where('userId', '>', after).orderBy('userId').limit(limit).execute()
      return rows.map((row) => row.userId)
    },

    async purgeAssets(ownerId, now, limit) {
      const unkept = await db
        .selectFrom('assets')
        .select('assetId')
        .where('ownerId', '=', ownerId)
        .where('legalHoldAt', 'is', null)
        .where((eb) => eb.or([eb('retentionUntil', 'is', null), eb('retentionUntil', '<=', now)]))
        .limit(limit)
        .execute()
      if (unkept.length === 0) return 0
      // Their blob references go with them (ON DELETE CASCADE); the blob rows follow in finishAccountPurge.
      await db
        .deleteFrom('assets')
        .where(
          'assetId',
          'in',
          unkept.map((row) => row.assetId),
        )
        .execute()
      return unkept.length
    },

    async finishAccountPurge(ownerId, now) {
      // A file written whose row never followed is found through its session's declarations.
      await queueUnownedDeclarations(db, { ownerId })
      await db.deleteFrom('uploadSessions').where('ownerId', '=', ownerId).execute()
      await db
        .deleteFrom('albums')
        .where('ownerId', '=', ownerId)
        .where(({ not, exists, selectFrom }) => not(exists(selectFrom('assets').select('assets.assetId').whereRef('assets.albumId', '=', 'albums.albumId'))))
        .execute()
      // No open session of the owner is left, so only the kept assets' references keep blob rows.
      await removeUnneededBlobs(db, now, ownerId)
      const kept = await db.selectFrom('assets').select('assetId').where('ownerId', '=', ownerId).limit(1).executeTakeFirst()
      if (kept !== undefined) return false
      await db.deleteFrom('accountStorage').where('userId', '=', ownerId).execute()
      await db.deleteFrom('accountPurges').where('userId', '=', ownerId).execute()
      return true
    },
  }
}
