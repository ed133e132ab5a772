import type { GarbageStore } from '../port.ts'
import type { Executor } from './executor.ts'

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
      // Bytes nobody references and no open upload session still needs.
      const removed = await db
        .deleteFrom('blobs')
        .where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom('assetBlobs').select('assetBlobs.hash').whereRef('assetBlobs.ownerId', '=', 'blobs.ownerId').whereRef('assetBlobs.hash', '=', 'blobs.hash'))),
        )
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('uploadBlobs')
                .innerJoin('uploadSessions', 'uploadSessions.uploadId', 'uploadBlobs.uploadId')
                .select('uploadBlobs.hash')
                .whereRef('uploadSessions.ownerId', '=', 'blobs.ownerId')
                .whereRef('uploadBlobs.hash', '=', 'blobs.hash')
                .where('uploadSessions.closedAt', 'is', null)
                .where('uploadSessions.expiresAt', '>', now),
            ),
          ),
        )
        .returning('hash')
        .execute()
      return [...new Set(removed.map((row) => row.hash))]
    },
  }
}
