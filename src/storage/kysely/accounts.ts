import { sql } from 'kysely'
import type { Account, AccountStore } from '../port.ts'
import { affected, type Executor } from './executor.ts'
import { preparedQuery } from './prepared.ts'

const accountColumns = ['userId', 'email', 'passwordHash', 'displayName', 'createdAt', 'lockedUntil', 'sessionEpoch', 'suspendedAt'] as const

/** Read on nearly every bearer operation: compiled once (see prepared.ts). */
const accountById = preparedQuery((db, userId: string) => db.selectFrom('accounts').select(accountColumns).where('userId', '=', userId))
/** Read by every login. */
const accountByEmailKey = preparedQuery((db, emailKey: string) => db.selectFrom('accounts').select(accountColumns).where('emailKey', '=', emailKey))

export function accountQueries(db: Executor): AccountStore {
  return {
    async insertAccount(account) {
      const result = await db
        .insertInto('accounts')
        .values({ ...account, displayName: null, failedPasswordCount: 0, lockedUntil: null, identityKey: null, sessionEpoch: 0, suspendedAt: null, moderationSeq: 0 })
        .onConflict((oc) => oc.column('emailKey').doNothing())
        .executeTakeFirst()
      return affected(result) === 1
    },

    findAccountByEmailKey: (emailKey): Promise<Account | undefined> => accountByEmailKey(db, emailKey),

    findAccount: (userId): Promise<Account | undefined> => accountById(db, userId),

    async recordPasswordFailure(userId, threshold, lockUntil) {
      // Both CASEs read the row as it was before this statement, so the count and the lock
      // move together even when several wrong passwords race.
      const reaches = sql<boolean>`failed_password_count + 1 >= ${threshold}`
      const row = await db
        .updateTable('accounts')
        .set({
          failedPasswordCount: sql<number>`case when ${reaches} then 0 else failed_password_count + 1 end`,
          lockedUntil: sql<number | null>`case when ${reaches} then ${lockUntil} else locked_until end`,
        })
        .where('userId', '=', userId)
        .returning('lockedUntil')
        .executeTakeFirst()
      return row?.lockedUntil ?? null
    },

    async recordUnknownSignIn(emailHash, now) {
      await db
        .insertInto('unknownSignIns')
        .values({ emailHash, failures: 1, lastFailedAt: now })
        .onConflict((oc) => oc.column('emailHash').doUpdateSet({ failures: sql<number>`unknown_sign_ins.failures + 1`, lastFailedAt: now }))
        .execute()
    },

    async clearPasswordFailures(userId) {
      await db
        .updateTable('accounts')
        .set({ failedPasswordCount: 0, lockedUntil: null })
        .where('userId', '=', userId)
        .where((eb) => eb.or([eb('failedPasswordCount', '>', 0), eb('lockedUntil', 'is not', null)]))
        .execute()
    },

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
