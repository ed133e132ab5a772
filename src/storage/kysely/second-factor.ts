import type { SecondFactorStore } from '../port/second-factor.ts'
import { affected, asBuffer, type Executor } from './executor.ts'
import { preparedQuery } from './prepared.ts'

/** Read by every login (whether it needs a code). */
const secondFactorOf = preparedQuery((db, userId: string) => db.selectFrom('secondFactors').select(['status', 'secretBox']).where('userId', '=', userId))

/**
 * Takes the active factor's row lock for the rest of the transaction; false when no factor is
 * active. Whatever writes an account's recovery codes takes it before touching them, so that
 * racing uses, a regeneration and a removal (whose cascade deletes them) queue on the factor
 * instead of locking code rows in opposite orders (PostgreSQL would end one as a deadlock; on
 * SQLite, BEGIN IMMEDIATE already holds the database's write lock). A write that changes nothing
 * still takes the lock.
 */
async function lockActiveFactor(db: Executor, userId: string): Promise<boolean> {
  const result = await db.updateTable('secondFactors').set({ status: 'active' }).where('userId', '=', userId).where('status', '=', 'active').executeTakeFirst()
  return affected(result) === 1
}

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
        .onConflict((oc) => oc.column('userId').doUpdateSet({ secretBox, updatedAt: now }).where('secondFactors.status', '=', 'pending'))
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

    async replaceRecoveryCodes(userId, codeHashes, now) {
      if (!(await lockActiveFactor(db, userId))) return false
      await db.deleteFrom('recoveryCodes').where('userId', '=', userId).execute()
      await db
        .insertInto('recoveryCodes')
        .values(codeHashes.map((codeHash) => ({ userId, codeHash, createdAt: now })))
        .execute()
      return true
    },

    async useRecoveryCode(userId, codeHash) {
      if (!(await lockActiveFactor(db, userId))) return false
      const result = await db.deleteFrom('recoveryCodes').where('userId', '=', userId).where('codeHash', '=', codeHash).executeTakeFirst()
      return affected(result) === 1
    },

    async countRecoveryCodes(userId) {
      const row = await db
        .selectFrom('recoveryCodes')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('userId', '=', userId)
        .executeTakeFirstOrThrow()
      return Number(row.count)
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
