import type { EscrowStore } from '../port/escrow.ts'
import { affected, asBuffer, type Executor } from './executor.ts'

export function escrowQueries(db: Executor): EscrowStore {
  return {
    async storeEscrow(userId, blob, now) {
      // Overwrite first, insert when there was nothing; a racing first store turns into an overwrite.
      for (;;) {
        const replaced = await db.updateTable('escrows').set({ blob, storedAt: now }).where('userId', '=', userId).executeTakeFirst()
        if (affected(replaced) === 1) return { replaced: true }
        const inserted = await db
          .insertInto('escrows')
          .values({ userId, blob, storedAt: now })
          .onConflict((oc) => oc.doNothing())
          .executeTakeFirst()
        if (affected(inserted) === 1) return { replaced: false }
      }
    },

    async findEscrow(userId) {
      const row = await db.selectFrom('escrows').select(['blob', 'storedAt']).where('userId', '=', userId).executeTakeFirst()
      return row && { blob: asBuffer(row.blob), storedAt: row.storedAt }
    },
  }
}
