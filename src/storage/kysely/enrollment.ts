import type { EnrollmentStore } from '../port/enrollment.ts'
import { affected, type Executor } from './executor.ts'

export function enrollmentQueries(db: Executor): EnrollmentStore {
  return {
    async insertEnrollmentCode(code) {
      const result = await db
        .insertInto('enrollmentCodes')
        .values(code)
        .onConflict((oc) => oc.doNothing())
        .executeTakeFirst()
      return affected(result) === 1
    },

    async redeemEnrollmentCode(spellingHash, now) {
      const row = await db
        .deleteFrom('enrollmentCodes')
        .where((eb) => eb.or([eb('codeHash', '=', spellingHash), eb('textHash', '=', spellingHash)]))
        .where('expiresAt', '>', now)
        .returning('userId')
        .executeTakeFirst()
      return row?.userId
    },

    async openChannel(channel) {
      await db
        .insertInto('relayChannels')
        .values({ ...channel, nextSeq: 0, heldToInitiator: 0, heldToEnrollee: 0 })
        .execute()
    },

    async closeChannel(channelHash, initiatorId, now) {
      const result = await db
        .deleteFrom('relayChannels')
        .where('channelHash', '=', channelHash)
        .where('initiatorId', '=', initiatorId)
        .where('expiresAt', '>', now)
        .executeTakeFirst()
      return affected(result) === 1
    },
  }
}
