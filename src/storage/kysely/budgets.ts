// Brute-force budgets, each counted by one conditional upsert before the work it guards (a
// password hash, a code lookup), so that no burst on any number of instances gets past it.
import { sql } from 'kysely'
import type { AttemptBudgetStore, PasswordFailureStore } from '../port/budgets.ts'
import type { Executor } from './executor.ts'

export function budgetQueries(db: Executor): PasswordFailureStore & AttemptBudgetStore {
  return {
    async reservePasswordCheck(subject, now, { threshold, durationMs }) {
      // Every CASE reads the row as it was before this statement, so the count and the lock
      // move together however many checks race.
      const next = sql<number>`case when password_failures.last_failed_at <= ${now - durationMs} then 1 else password_failures.failures + 1 end`
      const reaches = sql<boolean>`${next} >= ${threshold}`
      const lockUntil = now + durationMs
      const first = threshold <= 1
      const row = await db
        .insertInto('passwordFailures')
        .values({ subject, failures: first ? 0 : 1, lastFailedAt: now, lockedUntil: first ? lockUntil : null })
        .onConflict((oc) =>
          oc
            .column('subject')
            .doUpdateSet({
              failures: sql<number>`case when ${reaches} then 0 else ${next} end`,
              lockedUntil: sql<number | null>`case when ${reaches} then ${lockUntil} else password_failures.locked_until end`,
              lastFailedAt: now,
            })
            .where((eb) => eb.or([eb('passwordFailures.lockedUntil', 'is', null), eb('passwordFailures.lockedUntil', '<=', now)])),
        )
        .returning('lockedUntil')
        .executeTakeFirst()
      if (row === undefined) return undefined
      return { lockedUntil: row.lockedUntil !== null && row.lockedUntil > now ? row.lockedUntil : null }
    },

    async findPasswordLock(subject) {
      const row = await db.selectFrom('passwordFailures').select('lockedUntil').where('subject', '=', subject).executeTakeFirst()
      return row?.lockedUntil ?? null
    },

    async clearPasswordFailures(subject) {
      await db.deleteFrom('passwordFailures').where('subject', '=', subject).execute()
    },

    async reserveAttempt(scope, subject, now, { maxFailures, windowMs }) {
      const ended = sql<boolean>`attempt_budgets.window_ends_at <= ${now}`
      const row = await db
        .insertInto('attemptBudgets')
        .values({ scope, subject, windowEndsAt: now + windowMs, failures: 1 })
        .onConflict((oc) =>
          oc
            .columns(['scope', 'subject'])
            .doUpdateSet({
              windowEndsAt: sql<number>`case when ${ended} then ${now + windowMs} else attempt_budgets.window_ends_at end`,
              failures: sql<number>`case when ${ended} then 1 else attempt_budgets.failures + 1 end`,
            })
            .where(sql<boolean>`${ended} or attempt_budgets.failures < ${maxFailures}`),
        )
        .returning(['windowEndsAt', 'failures'])
        .executeTakeFirst()
      return row
    },

    async releaseAttempt(scope, subject) {
      await db
        .updateTable('attemptBudgets')
        .set((eb) => ({ failures: eb('failures', '-', 1) }))
        .where('scope', '=', scope)
        .where('subject', '=', subject)
        .where('failures', '>', 0)
        .execute()
      // A subject with nothing counted needs no row (a racing reservation may have counted meanwhile).
      await db.deleteFrom('attemptBudgets').where('scope', '=', scope).where('subject', '=', subject).where('failures', '=', 0).execute()
    },

    async findAttemptBudget(scope, subject) {
      return db.selectFrom('attemptBudgets').select(['windowEndsAt', 'failures']).where('scope', '=', scope).where('subject', '=', subject).executeTakeFirst()
    },
  }
}
