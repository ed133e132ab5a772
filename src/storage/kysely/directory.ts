import type { DirectoryStore } from '../port/directory.ts'
import { affected, asBuffer, type Executor } from './executor.ts'

export function directoryQueries(db: Executor): DirectoryStore {
  return {
    async bindIdentityKey(userId, identityKey) {
      const bound = await db.updateTable('accounts').set({ identityKey }).where('userId', '=', userId).where('identityKey', 'is', null).executeTakeFirst()
      if (affected(bound) === 1) return 'bound'
      const row = await db.selectFrom('accounts').select('identityKey').where('userId', '=', userId).executeTakeFirst()
      return row?.identityKey && asBuffer(row.identityKey).equals(identityKey) ? 'same' : 'mismatch'
    },

    async findIdentityKey(userId) {
      const row = await db.selectFrom('accounts').select('identityKey').where('userId', '=', userId).executeTakeFirst()
      return row?.identityKey ? asBuffer(row.identityKey) : undefined
    },

    async publishDirectoryIfNewer(userId, directory, now) {
      const values = { directoryVersion: directory.version, body: directory.body, etag: directory.etag, publishedAt: now }
      const result = await db
        .insertInto('directories')
        .values({ userId, ...values })
        .onConflict((oc) => oc.column('userId').doUpdateSet(values).where('directories.directoryVersion', '<', directory.version))
        .executeTakeFirst()
      if (affected(result) === 1) return { stored: true }
      const row = await db.selectFrom('directories').select('directoryVersion').where('userId', '=', userId).executeTakeFirstOrThrow()
      return { stored: false, storedVersion: row.directoryVersion }
    },

    async findDirectory(userId) {
      const row = await db.selectFrom('directories').select(['directoryVersion', 'body', 'etag']).where('userId', '=', userId).executeTakeFirst()
      return row && { version: row.directoryVersion, body: asBuffer(row.body), etag: row.etag }
    },
  }
}
