// Batch download slots: one row per slot held, taken by a conditional upsert (decision 0045).
import type { BatchDownloadSlotStore } from '../port/batch-downloads.ts'
import type { Executor } from './executor.ts'

export function batchDownloadQueries(db: Executor): BatchDownloadSlotStore {
  return {
    async takeBatchDownloadSlot(userId, holder, now, { slots, leaseMs }) {
      for (let slot = 0; slot < slots; slot++) {
        const taken = await db
          .insertInto('batchDownloadSlots')
          .values({ userId, slot, holder, expiresAt: now + leaseMs })
          .onConflict((oc) =>
            oc
              .columns(['userId', 'slot'])
              .doUpdateSet({ holder, expiresAt: now + leaseMs })
              .where('batchDownloadSlots.expiresAt', '<=', now),
          )
          .returning('slot')
          .executeTakeFirst()
        if (taken !== undefined) return slot
      }
      return undefined
    },

    async releaseBatchDownloadSlot(userId, slot, holder) {
      await db.deleteFrom('batchDownloadSlots').where('userId', '=', userId).where('slot', '=', slot).where('holder', '=', holder).execute()
    },
  }
}
