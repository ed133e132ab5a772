import type { Account, AccountStore } from '../port/accounts.ts'
import { affected, type Executor } from './executor.ts'
import { preparedQuery } from './prepared.ts'

const accountColumns = ['userId', 'email', 'emailKey', 'passwordHash', 'displayName', 'createdAt', 'sessionEpoch', 'suspendedAt', 'deletedAt'] as const

/** Read on nearly every bearer operation: compiled once (see prepared.ts). */
const accountById = preparedQuery((db, userId: string) => db.selectFrom('accounts').select(accountColumns).where('userId', '=', userId))
/** Read by every login. */
const accountByEmailKey = preparedQuery((db, emailKey: string) => db.selectFrom('accounts').select(accountColumns).where('emailKey', '=', emailKey))

export function accountQueries(db: Executor): AccountStore {
  return {
    async insertAccount(account) {
      const result = await db
        .insertInto('accounts')
        .values({ ...account, displayName: null, identityKey: null, sessionEpoch: 0, suspendedAt: null, moderationSeq: 0, deletedAt: null })
        .onConflict((oc) => oc.column('emailKey').doNothing())
        .executeTakeFirst()
      return affected(result) === 1
    },

    findAccountByEmailKey: (emailKey): Promise<Account | undefined> => accountByEmailKey(db, emailKey),

    findAccount: (userId): Promise<Account | undefined> => accountById(db, userId),

    async changePasswordHash(userId, passwordHash) {
      const row = await db
        .updateTable('accounts')
        .set((eb) => ({ passwordHash, sessionEpoch: eb('sessionEpoch', '+', 1) }))
        .where('userId', '=', userId)
        .returning('sessionEpoch')
        .executeTakeFirstOrThrow()
      return row.sessionEpoch
    },

    async setDisplayName(userId, displayName) {
      await db.updateTable('accounts').set({ displayName }).where('userId', '=', userId).execute()
    },
  }
}
