import type { ModerationStore } from '../port/moderation.ts'
import type { Executor } from './executor.ts'

export function moderationQueries(db: Executor): ModerationStore {
  return {
    async findModeratedAsset(assetId) {
      return db.selectFrom('assets').select(['assetId', 'ownerId', 'takenDownAt', 'legalHoldAt']).where('assetId', '=', assetId).executeTakeFirst()
    },

    async setSuspended(userId, suspendedAt) {
      await db.updateTable('accounts').set({ suspendedAt }).where('userId', '=', userId).execute()
    },

    async setTakenDown(assetId, takenDownAt) {
      await db.updateTable('assets').set({ takenDownAt }).where('assetId', '=', assetId).execute()
    },

    async setLegalHold(assetId, legalHoldAt) {
      await db.updateTable('assets').set({ legalHoldAt }).where('assetId', '=', assetId).execute()
    },

    async appendModerationEvent(userId, event) {
      // Taking the next number writes the account row: events of one account queue here.
      const { moderationSeq } = await db
        .updateTable('accounts')
        .set((eb) => ({ moderationSeq: eb('moderationSeq', '+', 1) }))
        .where('userId', '=', userId)
        .returning('moderationSeq')
        .executeTakeFirstOrThrow()
      await db
        .insertInto('moderationEvents')
        .values({ userId, seq: moderationSeq, ...event })
        .execute()
    },

    async listModerationEvents(userId) {
      return db.selectFrom('moderationEvents').select(['action', 'assetId', 'reason', 'at', 'actor']).where('userId', '=', userId).orderBy('seq').execute()
    },

    async operatorLog({ userId, limit }) {
      let query = db.selectFrom('moderationEvents').select(['userId', 'seq', 'action', 'assetId', 'reason', 'at', 'actor'])
      if (userId !== undefined) query = query.where('userId', '=', userId)
      const newest = await query.orderBy('at', 'desc').orderBy('userId', 'desc').orderBy('seq', 'desc').limit(limit).execute()
      return newest.reverse()
    },
  }
}
