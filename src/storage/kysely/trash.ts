// The trash: one row per asset in it (decision 0059).
import type { TrashRow, TrashStore } from '../port/trash.ts'
import { affected, asBuffer, type Executor } from './executor.ts'
import type { TrashTable } from './tables.ts'

const columns = ['trashSeq', 'userId', 'albumId', 'fileId', 'manifestHash', 'manifestCbor', 'manifestEnvelope', 'trashedAt', 'purgeAt'] as const

function rowOf(row: Omit<TrashTable, 'trashSeq'> & { trashSeq: number }): TrashRow {
  return { ...row, manifestCbor: asBuffer(row.manifestCbor) }
}

export function trashQueries(db: Executor): TrashStore {
  return {
    async findTrashed(fileId) {
      const row = await db.selectFrom('trash').select(columns).where('fileId', '=', fileId).executeTakeFirst()
      return row && rowOf(row)
    },

    async putInTrash(row) {
      return rowOf(await db.insertInto('trash').values(row).returning(columns).executeTakeFirstOrThrow())
    },

    async removeFromTrash(albumId, fileId) {
      return affected(await db.deleteFrom('trash').where('albumId', '=', albumId).where('fileId', '=', fileId).executeTakeFirst()) === 1
    },

    async trashPage(userId, afterSeq, limit) {
      const rows = await db
        .selectFrom('trash')
        .select(columns)
        .where('userId', '=', userId)
        .where('trashSeq', '>', afterSeq)
        .orderBy('trashSeq')
        .limit(limit)
        .execute()
      return rows.map(rowOf)
    },

    async dueTrash(now, afterSeq, limit) {
      const rows = await db
        .selectFrom('trash')
        .select(columns)
        .where('purgeAt', '<=', now)
        .where('trashSeq', '>', afterSeq)
        .orderBy('trashSeq')
        .limit(limit)
        .execute()
      return rows.map(rowOf)
    },
  }
}
