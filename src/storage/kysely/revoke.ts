import type { Engine } from '../port.ts'
import type { RevokeStore } from '../port/revoke.ts'
import { asBuffer, type Executor } from './executor.ts'

export function revokeQueries(db: Executor, engine: Engine): RevokeStore {
  // Moving the epoch kills every session, including one a racing refresh or login is opening
  // from the old epoch right now; the delete then clears the records. Run it in a transaction:
  // the move holds the account row, so a second revoke-all (or a password change) queues behind
  // this one instead of interleaving with it. The count is made after the move, from one
  // snapshot: a DELETE that waits on a row a racing refresh is rotating re-reads it as rotated
  // (PostgreSQL, READ COMMITTED) while the successor is not yet visible to it, and would count neither.
  const moveEpoch = (userId: string) =>
    db
      .updateTable('accounts')
      .set((eb) => ({ sessionEpoch: eb('sessionEpoch', '+', 1) }))
      .where('userId', '=', userId)
      .returning('sessionEpoch')
      .executeTakeFirstOrThrow()

  /** How many of the account's sessions at `epoch` were live, then every session record of it deleted. */
  const countThenDelete = async (userId: string, epoch: number, now: number): Promise<number> => {
    const live = db
      .selectFrom('sessions')
      .select((eb) => eb.fn.countAll().as('count'))
      .where('userId', '=', userId)
      .where('rotatedAt', 'is', null)
      .where('refreshExpiresAt', '>', now)
      .where('epoch', '=', epoch)
    if (engine === 'postgres') {
      // One statement, one round trip: the count reads the statement's snapshot (taken after the
      // move's lock), which the delete in its WITH does not change.
      const row = await db
        .with('gone', (qb) => qb.deleteFrom('sessions').where('userId', '=', userId))
        .selectFrom(live.as('live'))
        .select('live.count')
        .executeTakeFirstOrThrow()
      return Number(row.count)
    }
    const row = await live.executeTakeFirstOrThrow()
    await db.deleteFrom('sessions').where('userId', '=', userId).execute()
    return Number(row.count)
  }

  const closeAllSessions: RevokeStore['closeAllSessions'] = async (userId, now) => countThenDelete(userId, (await moveEpoch(userId)).sessionEpoch - 1, now)

  const burnRevokeChallenge: RevokeStore['burnRevokeChallenge'] = (challengeHash) =>
    db.deleteFrom('revokeChallenges').where('challengeHash', '=', challengeHash).returning(['userId', 'expiresAt']).executeTakeFirst()

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

    burnRevokeChallenge,

    closeAllSessions,

    async revokeAllByChallenge(challengeHash, now) {
      if (engine === 'postgres') {
        // The burn and the epoch move in one statement: the move finds the account through the
        // row the burn deleted, so a challenge another request burned first moves nothing.
        const moved = await db
          .with('burned', (qb) => qb.deleteFrom('revokeChallenges').where('challengeHash', '=', challengeHash).returning('userId'))
          .updateTable('accounts')
          .from('burned')
          .set((eb) => ({ sessionEpoch: eb('accounts.sessionEpoch', '+', 1) }))
          .whereRef('accounts.userId', '=', 'burned.userId')
          .returning(['accounts.userId', 'accounts.sessionEpoch'])
          .executeTakeFirst()
        return moved && countThenDelete(moved.userId, moved.sessionEpoch - 1, now)
      }
      const burned = await burnRevokeChallenge(challengeHash)
      return burned && closeAllSessions(burned.userId, now)
    },
  }
}
