import type { GarbageStore } from '../port/garbage.ts'
import { sql } from 'kysely'
import { affected, type Executor } from './executor.ts'
import { queueReclaims } from './reclaims.ts'
import { openDeclarations } from './uploads.ts'

/**
 * Removes the blob rows (of every owner, or of one) that nobody references and no open upload
 * session still needs (uploaded or extra), takes their sizes off their owners' usage and queues
 * their hashes for reclaiming; returns how many rows went.
 */
export async function removeUnneededBlobs(db: Executor, now: number, ownerId?: string): Promise<number> {
  let unneeded = db
    .deleteFrom('blobs')
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('assetBlobs')
            .select('assetBlobs.hash')
            .whereRef('assetBlobs.ownerId', '=', 'blobs.ownerId')
            .whereRef('assetBlobs.hash', '=', 'blobs.hash'),
        ),
      ),
    )
    .where(({ not, exists }) =>
      not(
        exists(openDeclarations(db, now).select('declared.hash').where(sql<boolean>`upload_sessions.owner_id = blobs.owner_id and declared.hash = blobs.hash`)),
      ),
    )
  if (ownerId !== undefined) unneeded = unneeded.where('blobs.ownerId', '=', ownerId)
  const removed = await unneeded.returning(['ownerId', 'hash', 'size']).execute()
  const freedByOwner = new Map<string, number>()
  for (const row of removed) freedByOwner.set(row.ownerId, (freedByOwner.get(row.ownerId) ?? 0) + Number(row.size))
  // In one order on every instance, so that two collections never wait on each other.
  for (const owner of [...freedByOwner.keys()].sort()) {
    const freed = freedByOwner.get(owner) ?? 0
    await db
      .updateTable('accountStorage')
      .set((eb) => ({ storedBytes: eb('storedBytes', '-', freed) }))
      .where('userId', '=', owner)
      .execute()
  }
  await queueReclaims(
    db,
    removed.map((row) => row.hash),
  )
  return removed.length
}

export function garbageQueries(db: Executor): GarbageStore {
  return {
    async collectGarbage(now) {
      // References of replaced bundles stay while their asset's retention floor is ahead or a
      // legal hold is on it.
      await db
        .deleteFrom('assetBlobs')
        .where('supersededAt', 'is not', null)
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('assets')
                .select('assets.assetId')
                .whereRef('assets.assetId', '=', 'assetBlobs.assetId')
                .where((inner) => inner.or([inner('assets.retentionUntil', '>', now), inner('assets.legalHoldAt', 'is not', null)])),
            ),
          ),
        )
        .execute()
      return removeUnneededBlobs(db, now)
    },

    async queuedReclaims(after, limit) {
      return db.selectFrom('blobReclaims').select(['hash', 'generation']).where('hash', '>', after).orderBy('hash').limit(limit).execute()
    },

    async dropReclaims(entries) {
      for (const { hash, generation } of entries) await db.deleteFrom('blobReclaims').where('hash', '=', hash).where('generation', '=', generation).execute()
    },

    async takeGcHold(hold) {
      await db.insertInto('gcHolds').values(hold).execute()
    },

    async renewGcHold(holdId, now, expiresAt) {
      return affected(await db.updateTable('gcHolds').set({ expiresAt }).where('holdId', '=', holdId).where('expiresAt', '>', now).executeTakeFirst()) === 1
    },

    async releaseGcHold(holdId) {
      await db.deleteFrom('gcHolds').where('holdId', '=', holdId).execute()
    },

    queueReclaims: (hashes) => queueReclaims(db, hashes),

    async gcHeld(now) {
      return (await db.selectFrom('gcHolds').select('holdId').where('expiresAt', '>', now).limit(1).executeTakeFirst()) !== undefined
    },
  }
}
