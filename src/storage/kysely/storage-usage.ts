// What an account takes of the storage quota: its stored bytes as kept on its storage row, and
// the pending bytes and open sessions recounted from its open upload sessions (a few hundred at
// most: MAX_OPEN_UPLOADS bounds them), all in one statement so that they agree with each other.
import type { StorageUsage, StorageUsageStore } from '../port/storage-usage.ts'
import type { Executor } from './executor.ts'

/** Each hash the owner's open sessions (but `exceptUploadId`) declare and the owner does not store, at its largest declared size. */
function pendingByHash(db: Executor, ownerId: string, now: number, exceptUploadId: string | null) {
  const pending = db
    .selectFrom('uploadBlobs')
    .innerJoin('uploadSessions', 'uploadSessions.uploadId', 'uploadBlobs.uploadId')
    .select((eb) => ['uploadBlobs.hash', eb.fn.max('uploadBlobs.size').as('size')])
    .where('uploadSessions.ownerId', '=', ownerId)
    .where('uploadSessions.closedAt', 'is', null)
    .where('uploadSessions.expiresAt', '>', now)
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('blobs').select('blobs.hash').where('blobs.ownerId', '=', ownerId).whereRef('blobs.hash', '=', 'uploadBlobs.hash'))),
    )
    .groupBy('uploadBlobs.hash')
  return exceptUploadId === null ? pending : pending.where('uploadSessions.uploadId', '<>', exceptUploadId)
}

/** The usage, and with `exceptUploadId` the pending bytes without that session. */
function readUsage(db: Executor, ownerId: string, now: number, exceptUploadId: string | null) {
  const pendingBytes = (except: string | null) =>
    db
      .selectFrom(pendingByHash(db, ownerId, now, except).as('pending'))
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('pending.size'), eb.lit(0)).as('bytes'))
  return db
    .selectNoFrom((eb) => [
      eb.fn.coalesce(eb.selectFrom('accountStorage').select('storedBytes').where('userId', '=', ownerId), eb.lit(0)).as('storedBytes'),
      pendingBytes(null).as('pendingBytes'),
      eb
        .selectFrom('uploadSessions')
        .select((inner) => inner.fn.countAll<number>().as('count'))
        .where('ownerId', '=', ownerId)
        .where('closedAt', 'is', null)
        .where('expiresAt', '>', now)
        .as('openUploads'),
    ])
    .$if(exceptUploadId !== null, (query) => query.select(pendingBytes(exceptUploadId).as('pendingBytesWithout')))
    .executeTakeFirstOrThrow()
}

function usageOf(row: { storedBytes: unknown; pendingBytes: unknown; openUploads: unknown }): StorageUsage {
  // PostgreSQL sums BIGINT as NUMERIC, which arrives as text.
  return { storedBytes: Number(row.storedBytes), pendingBytes: Number(row.pendingBytes), openUploads: Number(row.openUploads) }
}

export function storageUsageQueries(db: Executor): StorageUsageStore {
  return {
    async lockStorageUsage(ownerId) {
      // A write that changes nothing still takes the row lock (PostgreSQL); SQLite's BEGIN
      // IMMEDIATE already holds the database's write lock.
      await db
        .insertInto('accountStorage')
        .values({ userId: ownerId, storedBytes: 0 })
        .onConflict((oc) => oc.column('userId').doUpdateSet((eb) => ({ storedBytes: eb.ref('accountStorage.storedBytes') })))
        .execute()
    },

    async storageUsage(ownerId, now) {
      return usageOf(await readUsage(db, ownerId, now, null))
    },

    async accountHoldings(ownerId) {
      const row = await db
        .selectNoFrom((eb) => [
          eb.fn.coalesce(eb.selectFrom('accountStorage').select('storedBytes').where('userId', '=', ownerId), eb.lit(0)).as('storedBytes'),
          eb
            .selectFrom('assets')
            .select((inner) => inner.fn.countAll<number>().as('count'))
            .where('ownerId', '=', ownerId)
            .where('deletedAt', 'is', null)
            .as('liveAssets'),
        ])
        .executeTakeFirstOrThrow()
      return { storedBytes: Number(row.storedBytes), liveAssets: Number(row.liveAssets) }
    },

    async storageUsageWithUpload(ownerId, uploadId, now) {
      const row = await readUsage(db, ownerId, now, uploadId)
      const usage = usageOf(row)
      return { usage, addedBytes: usage.pendingBytes - Number(row.pendingBytesWithout) }
    },
  }
}
