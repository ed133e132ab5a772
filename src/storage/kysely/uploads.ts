import { sql, type OnConflictBuilder, type QueryCreator } from 'kysely'
import type { Engine } from '../port.ts'
import type { UploadSession, UploadStore } from '../port/uploads.ts'
import { affected, type Executor } from './executor.ts'
import { queueReclaims } from './reclaims.ts'
import type { Tables } from './tables.ts'

const sessionColumns = ['uploadId', 'ownerId', 'albumId', 'cryptoSuiteId', 'ciphertextHash', 'createdAt', 'expiresAt', 'closedAt'] as const

async function withBlobs(db: Executor, session: Omit<UploadSession, 'blobs'>): Promise<UploadSession> {
  const blobs = await db
    .selectFrom('uploadBlobs')
    .select(['hash', 'role', 'size'])
    .where('uploadId', '=', session.uploadId)
    .orderBy('role', 'desc')
    .orderBy('hash')
    .execute()
  return { ...session, blobs }
}

/** Every hash an upload session declares (uploaded or extra), as `declared.hash` beside `upload_sessions`. */
function declarations(db: Executor) {
  return db
    .selectFrom((eb) =>
      eb
        .selectFrom('uploadBlobs')
        .select(['uploadId', 'hash'])
        .unionAll(eb.selectFrom('uploadExtras').select(['uploadId', 'hash']))
        .as('declared'),
    )
    .innerJoin('uploadSessions', 'uploadSessions.uploadId', 'declared.uploadId')
}

/** The blobs open upload sessions declare: what garbage collection must leave alone. */
export function openDeclarations(db: Executor, now: number) {
  return declarations(db).where('uploadSessions.closedAt', 'is', null).where('uploadSessions.expiresAt', '>', now)
}

/**
 * Queues for reclaiming what the matching sessions declare and their owner has no row for: a
 * file written whose row never followed (a crash between the two) is found again this way once
 * its session ends.
 */
export async function queueUnownedDeclarations(
  db: Executor,
  sessions: { readonly uploadId: string } | { readonly expiredBy: number } | { readonly ownerId: string },
): Promise<void> {
  const unowned = declarations(db)
    .select('declared.hash')
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(selectFrom('blobs').select('blobs.hash').whereRef('blobs.ownerId', '=', 'uploadSessions.ownerId').whereRef('blobs.hash', '=', 'declared.hash')),
      ),
    )
  const matching =
    'uploadId' in sessions
      ? unowned.where('uploadSessions.uploadId', '=', sessions.uploadId)
      : 'ownerId' in sessions
        ? unowned.where('uploadSessions.ownerId', '=', sessions.ownerId)
        : unowned.where('uploadSessions.expiresAt', '<=', sessions.expiredBy)
  const rows = await matching.execute()
  await queueReclaims(
    db,
    rows.map((row) => row.hash),
  )
}

export function uploadQueries(db: Executor, engine: Engine): UploadStore {
  return {
    async insertUploadSession({ blobs, ...session }) {
      await db
        .insertInto('uploadSessions')
        .values({ ...session, closedAt: null })
        .execute()
      await db
        .insertInto('uploadBlobs')
        .values(blobs.map((blob) => ({ uploadId: session.uploadId, ...blob })))
        .execute()
    },

    async findUploadSession(uploadId) {
      const session = await db.selectFrom('uploadSessions').select(sessionColumns).where('uploadId', '=', uploadId).executeTakeFirst()
      return session && withBlobs(db, session)
    },

    async closeUploadSession(uploadId, now) {
      const result = await db
        .updateTable('uploadSessions')
        .set({ closedAt: now })
        .where('uploadId', '=', uploadId)
        .where('closedAt', 'is', null)
        .executeTakeFirst()
      return affected(result) === 1
    },

    async abandonUploadSession(uploadId, now) {
      await db.updateTable('uploadSessions').set({ closedAt: now }).where('uploadId', '=', uploadId).where('closedAt', 'is', null).execute()
      await queueUnownedDeclarations(db, { uploadId })
    },

    async ownedBlobHashes(ownerId, hashes) {
      if (hashes.length === 0) return new Set()
      const rows = await db.selectFrom('blobs').select('hash').where('ownerId', '=', ownerId).where('hash', 'in', hashes).execute()
      return new Set(rows.map((row) => row.hash))
    },

    async recordOwnedBlobs(ownerId, blobs, now) {
      if (blobs.length === 0) return
      // The rows first, then the count: every writer takes the blob rows before the account's
      // storage row, so two of them never wait on each other in opposite orders.
      const rows = (qb: QueryCreator<Tables>) =>
        qb
          .insertInto('blobs')
          .values(blobs.map(({ hash, size }) => ({ ownerId, hash, size, storedAt: now })))
          .onConflict((oc) => oc.columns(['ownerId', 'hash']).doNothing())
          .returning('size')
      const addedToCount = (oc: OnConflictBuilder<Tables, 'accountStorage'>) =>
        oc.column('userId').doUpdateSet((eb) => ({ storedBytes: eb('accountStorage.storedBytes', '+', eb.ref('excluded.storedBytes')) }))
      if (engine === 'postgres') {
        // One statement, one round trip. The count sums what the WITH inserted, so it is taken
        // after every blob row, as above; nothing new (an empty sum) adds no count row.
        await db
          .with('recorded', rows)
          .insertInto('accountStorage')
          .columns(['userId', 'storedBytes'])
          .expression((eb) =>
            eb
              .selectFrom('recorded')
              .select((inner) => [inner.val(ownerId).as('userId'), inner.fn.sum<number>('size').as('storedBytes')])
              .having((inner) => inner.fn.countAll(), '>', 0),
          )
          .onConflict(addedToCount)
          .execute()
        return
      }
      const recorded = await rows(db).execute()
      if (recorded.length === 0) return
      await db
        .insertInto('accountStorage')
        .values({ userId: ownerId, storedBytes: recorded.reduce((sum, row) => sum + Number(row.size), 0) })
        .onConflict(addedToCount)
        .execute()
    },

    async declareExtras(uploadId, hashes) {
      if (hashes.length === 0) return
      // Through the session row: a session the sweep removed meanwhile gets no declaration (the
      // write then finds it closed). One statement, so one commit, for all of them.
      const declared = sql<{ hash: string }>`(${sql.join(
        hashes.map((hash) => sql`select cast(${hash} as text) as hash`),
        sql` union all `,
      )})`.as('declared')
      await db
        .insertInto('uploadExtras')
        .columns(['uploadId', 'hash'])
        .expression((eb) =>
          eb.selectFrom(['uploadSessions', declared]).select(['uploadSessions.uploadId', 'declared.hash']).where('uploadSessions.uploadId', '=', uploadId),
        )
        .onConflict((oc) => oc.columns(['uploadId', 'hash']).doNothing())
        .execute()
    },

    async withdrawExtras(uploadId) {
      await db.deleteFrom('uploadExtras').where('uploadId', '=', uploadId).execute()
    },

    async uploadParts(uploadId, hash) {
      let query = db.selectFrom('uploadParts').select(['uploadId', 'hash', 'offset', 'size', 'name', 'createdAt']).where('uploadId', '=', uploadId)
      if (hash !== undefined) query = query.where('hash', '=', hash)
      const rows = await query.orderBy('hash').orderBy('offset').execute()
      return rows.map((row) => ({ ...row, offset: Number(row.offset), size: Number(row.size), createdAt: Number(row.createdAt) }))
    },

    async insertUploadPart({ uploadId, hash, offset, size, name, createdAt }) {
      // Through the session row: a session the sweep removed meanwhile gets no part.
      const inserted = await db
        .insertInto('uploadParts')
        .columns(['uploadId', 'hash', 'offset', 'size', 'name', 'createdAt'])
        .expression((eb) =>
          eb
            .selectFrom('uploadSessions')
            // Typed: PostgreSQL takes an untyped parameter in a select list for text.
            .select((inner) => [
              'uploadSessions.uploadId',
              inner.val(hash).as('hash'),
              inner.cast<number>(inner.val(offset), 'bigint').as('offset'),
              inner.cast<number>(inner.val(size), 'bigint').as('size'),
              inner.val(name).as('name'),
              inner.cast<number>(inner.val(createdAt), 'bigint').as('createdAt'),
            ])
            .where('uploadId', '=', uploadId),
        )
        .onConflict((oc) => oc.columns(['uploadId', 'hash', 'offset']).doNothing())
        .returning('name')
        .execute()
      return inserted.length === 1
    },

    async deleteUploadParts(uploadId, hash) {
      let query = db.deleteFrom('uploadParts').where('uploadId', '=', uploadId)
      if (hash !== undefined) query = query.where('hash', '=', hash)
      await query.execute()
    },

    async renameDeclaredBlob(uploadId, from, to) {
      const renamed = await db.updateTable('uploadBlobs').set({ hash: to }).where('uploadId', '=', uploadId).where('hash', '=', from).executeTakeFirst()
      if (affected(renamed) !== 1) return false
      await db.updateTable('uploadSessions').set({ ciphertextHash: to }).where('uploadId', '=', uploadId).where('ciphertextHash', '=', from).execute()
      return true
    },

    async findOpenSessionsForOriginal(ownerId, albumId, ciphertextHash, now) {
      // One statement for the sessions and their blobs (each session declares its original at least).
      const rows = await db
        .selectFrom('uploadSessions')
        .innerJoin('uploadBlobs', 'uploadBlobs.uploadId', 'uploadSessions.uploadId')
        .select([...sessionColumns.map((column) => `uploadSessions.${column}` as const), 'uploadBlobs.hash', 'uploadBlobs.role', 'uploadBlobs.size'])
        .where('uploadSessions.ownerId', '=', ownerId)
        .where('uploadSessions.albumId', '=', albumId)
        .where('uploadSessions.ciphertextHash', '=', ciphertextHash)
        .where('uploadSessions.closedAt', 'is', null)
        .where('uploadSessions.expiresAt', '>', now)
        .orderBy('uploadSessions.createdAt', 'desc')
        .orderBy('uploadSessions.uploadId', 'desc')
        .orderBy('uploadBlobs.role', 'desc')
        .orderBy('uploadBlobs.hash')
        .execute()
      const sessions = new Map<string, UploadSession & { blobs: UploadSession['blobs'][number][] }>()
      for (const { hash, role, size, ...session } of rows) {
        const found = sessions.get(session.uploadId) ?? { ...session, blobs: [] }
        found.blobs.push({ hash, role, size })
        sessions.set(session.uploadId, found)
      }
      return [...sessions.values()]
    },
  }
}
