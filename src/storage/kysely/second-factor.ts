import type { SecondFactorStore } from '../port.ts'
import { affected, asBuffer, type Executor } from './executor.ts'
import { preparedQuery } from './prepared.ts'

/** Read by every login (whether it needs a code). */
const secondFactorOf = preparedQuery((db, userId: string) => db.selectFrom('secondFactors').select(['status', 'secretBox']).where('userId', '=', userId))

export function secondFactorQueries(db: Executor): SecondFactorStore {
  return {
    async findSecondFactor(userId) {
      const row = await secondFactorOf(db, userId)
      return row && { status: row.status, secretBox: asBuffer(row.secretBox) }
    },

    async anySecondFactor() {
      const row = await db.selectFrom('secondFactors').select(['userId', 'secretBox']).limit(1).executeTakeFirst()
      return row && { userId: row.userId, secretBox: asBuffer(row.secretBox) }
    },

    async putPendingSecondFactor(userId, secretBox, now) {
      const result = await db
        .insertInto('secondFactors')
        .values({ userId, status: 'pending', secretBox, updatedAt: now })
        .onConflict((oc) =>
          oc
            .column('userId')
            .doUpdateSet({ secretBox, updatedAt: now })
            .where('secondFactors.status', '=', 'pending'),
        )
        .executeTakeFirst()
      return affected(result) === 1
    },

    async activateSecondFactor(userId, secretBox, now) {
      const result = await db
        .updateTable('secondFactors')
        .set({ status: 'active', updatedAt: now })
        .where('userId', '=', userId)
        .where('status', '=', 'pending')
        .where('secretBox', '=', secretBox)
        .executeTakeFirst()
      return affected(result) === 1
    },

    async removeActiveSecondFactor(userId) {
      const result = await db.deleteFrom('secondFactors').where('userId', '=', userId).where('status', '=', 'active').executeTakeFirst()
      return affected(result) === 1
    },

    async claimTotpStep(userId, step, now) {
      const result = await db
        .insertInto('totpUsedSteps')
        .values({ userId, step, usedAt: now })
        .onConflict((oc) => oc.columns(['userId', 'step']).doNothing())
        .executeTakeFirst()
      return affected(result) === 1
    },

    async insertMfaChallenge(challenge) {
      await db.insertInto('mfaChallenges').values(challenge).execute()
    },

    async reserveMfaAttempt(tokenHash, now, maxAttempts) {
      return db
        .updateTable('mfaChallenges')
        .set((eb) => ({ failedAttempts: eb('failedAttempts', '+', 1) }))
        .where('tokenHash', '=', tokenHash)
        .where('expiresAt', '>', now)
        .where('failedAttempts', '<', maxAttempts)
        .returning(['tokenHash', 'userId', 'expiresAt', 'failedAttempts', 'epoch'])
        .executeTakeFirst()
    },

    async consumeMfaChallenge(tokenHash, now) {
      return db
        .deleteFrom('mfaChallenges')
        .where('tokenHash', '=', tokenHash)
        .where('expiresAt', '>', now)
        .returning(['tokenHash', 'userId', 'expiresAt', 'failedAttempts', 'epoch'])
        .executeTakeFirst()
    },

    async deleteMfaChallenge(tokenHash) {
      await db.deleteFrom('mfaChallenges').where('tokenHash', '=', tokenHash).execute()
    },
  }
}
