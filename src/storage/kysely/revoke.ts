import type { RevokeStore } from '../port.ts'
import { asBuffer, type Executor } from './executor.ts'

export function revokeQueries(db: Executor): RevokeStore {
  return {
    async insertRevokeChallenge(challenge) {
      await db.insertInto('revokeChallenges').values(challenge).execute()
    },

    async findRevokeChallenge(challengeHash) {
      const row = await db
        .selectFrom('revokeChallenges')
        .innerJoin('accounts', 'accounts.userId', 'revokeChallenges.userId')
        .select(['revokeChallenges.userId', 'revokeChallenges.expiresAt', 'accounts.identityKey'])
        .where('challengeHash', '=', challengeHash)
        .executeTakeFirst()
      return row && { userId: row.userId, expiresAt: row.expiresAt, identityKey: row.identityKey ? asBuffer(row.identityKey) : null }
    },

    async burnRevokeChallenge(challengeHash) {
      return db.deleteFrom('revokeChallenges').where('challengeHash', '=', challengeHash).returning(['userId', 'expiresAt']).executeTakeFirst()
    },

    async closeAllSessions(userId, now) {
      // Moving the epoch kills every session, including one a racing refresh or login is opening
      // from the old epoch right now; the delete then clears the records. Run it in a
      // transaction: the move holds the account row, so a second revoke-all (or a password
      // change) queues behind this one instead of interleaving with it.
      const moved = await db
        .updateTable('accounts')
        .set((eb) => ({ sessionEpoch: eb('sessionEpoch', '+', 1) }))
        .where('userId', '=', userId)
        .returning('sessionEpoch')
        .executeTakeFirstOrThrow()
      // Count before deleting, from one snapshot: a DELETE that waits on a row a racing refresh
      // is rotating re-reads it as rotated (PostgreSQL, READ COMMITTED) while the successor is
      // not yet visible to it, and would count neither.
      const live = await db
        .selectFrom('sessions')
        .select((eb) => eb.fn.countAll().as('count'))
        .where('userId', '=', userId)
        .where('rotatedAt', 'is', null)
        .where('refreshExpiresAt', '>', now)
        .where('epoch', '=', moved.sessionEpoch - 1)
        .executeTakeFirstOrThrow()
      await db.deleteFrom('sessions').where('userId', '=', userId).execute()
      return Number(live.count)
    },
  }
}
