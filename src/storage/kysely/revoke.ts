import type { RevokeStore } from '../port.ts'
import type { Executor } from './executor.ts'

export function revokeQueries(db: Executor): RevokeStore {
  return {
    async insertRevokeChallenge(challenge) {
      await db.insertInto('revokeChallenges').values(challenge).execute()
    },

    async burnRevokeChallenge(challengeHash) {
      return db.deleteFrom('revokeChallenges').where('challengeHash', '=', challengeHash).returning(['userId', 'expiresAt']).executeTakeFirst()
    },

    async closeAllSessions(userId, now) {
      // Moving the epoch kills every session, including one a racing refresh or login is
      // opening from the old epoch right now; the delete then clears the records.
      const moved = await db
        .updateTable('accounts')
        .set((eb) => ({ sessionEpoch: eb('sessionEpoch', '+', 1) }))
        .where('userId', '=', userId)
        .returning('sessionEpoch')
        .executeTakeFirstOrThrow()
      const closed = await db.deleteFrom('sessions').where('userId', '=', userId).returning(['rotatedAt', 'refreshExpiresAt', 'epoch']).execute()
      return closed.filter((s) => s.rotatedAt === null && s.refreshExpiresAt > now && s.epoch === moved.sessionEpoch - 1).length
    },
  }
}
