import type { Session, SessionStore } from '../port/sessions.ts'
import { affected, type Executor } from './executor.ts'

const sessionColumns = [
  'sessions.sessionId',
  'sessions.userId',
  'sessions.lineageId',
  'sessions.epoch',
  'sessions.accessHash',
  'sessions.refreshHash',
  'sessions.accessExpiresAt',
  'sessions.refreshExpiresAt',
  'sessions.createdAt',
  'sessions.authenticatedAt',
  'sessions.userAgent',
  'sessions.ipAddress',
  'sessions.cohortHash',
  'sessions.deviceId',
  'sessions.rotatedAt',
  'sessions.successorId',
  'accounts.sessionEpoch as accountEpoch',
] as const

/** Sessions read together with their account's current epoch (a primary-key join). */
function sessionsWithEpoch(db: Executor) {
  return db.selectFrom('sessions').innerJoin('accounts', 'accounts.userId', 'sessions.userId')
}

/** The bearer check: one lookup on the unique index of access_hash, with the account (run by bearer-lookup.ts). */
export function bearerLookupQuery(db: Executor, accessHash: string) {
  return sessionsWithEpoch(db)
    .select([
      'sessions.sessionId',
      'sessions.authenticatedAt',
      'sessions.accessExpiresAt',
      'sessions.rotatedAt',
      'sessions.epoch',
      'accounts.userId',
      'accounts.email',
      'accounts.emailKey',
      'accounts.passwordHash',
      'accounts.displayName',
      'accounts.createdAt',
      'accounts.sessionEpoch',
      'accounts.suspendedAt',
      'accounts.deletedAt',
    ])
    .where('sessions.accessHash', '=', accessHash)
}

export function sessionQueries(db: Executor): SessionStore {
  return {
    async openSession(session) {
      await db
        .insertInto('sessions')
        .values({ ...session, rotatedAt: null, successorId: null })
        .execute()
    },

    async findSessionByRefreshHash(refreshHash): Promise<Session | undefined> {
      return sessionsWithEpoch(db).select(sessionColumns).where('sessions.refreshHash', '=', refreshHash).executeTakeFirst()
    },

    async findSession(sessionId): Promise<Session | undefined> {
      return sessionsWithEpoch(db).select(sessionColumns).where('sessions.sessionId', '=', sessionId).executeTakeFirst()
    },

    async claimRotation(sessionId, successorId, now) {
      const result = await db
        .updateTable('sessions')
        .set({ rotatedAt: now, successorId })
        .where('sessionId', '=', sessionId)
        .where('rotatedAt', 'is', null)
        .executeTakeFirst()
      return affected(result) === 1
    },

    async closeLiveSessionsOfLineage(lineageId) {
      const result = await db.deleteFrom('sessions').where('lineageId', '=', lineageId).where('rotatedAt', 'is', null).executeTakeFirst()
      return affected(result)
    },

    async closeSessionByAccessHash(accessHash) {
      await db.deleteFrom('sessions').where('accessHash', '=', accessHash).where('rotatedAt', 'is', null).execute()
    },

    async closeLiveSessionOf(userId, sessionId, now) {
      const result = await db
        .deleteFrom('sessions')
        .where('sessionId', '=', sessionId)
        .where('userId', '=', userId)
        .where('rotatedAt', 'is', null)
        .where('refreshExpiresAt', '>', now)
        .where('epoch', '=', (eb) => eb.selectFrom('accounts').select('sessionEpoch').where('accounts.userId', '=', userId))
        .executeTakeFirst()
      return affected(result) === 1
    },

    async closeOtherSessions(userId, keepSessionId) {
      await db.deleteFrom('sessions').where('userId', '=', userId).where('sessionId', '!=', keepSessionId).execute()
    },

    async setAuthenticatedAt(sessionId, authenticatedAt) {
      await db.updateTable('sessions').set({ authenticatedAt }).where('sessionId', '=', sessionId).execute()
    },

    async restampSession(sessionId, epoch, authenticatedAt) {
      await db.updateTable('sessions').set({ epoch, authenticatedAt }).where('sessionId', '=', sessionId).execute()
    },

    async listLiveSessions(userId, now): Promise<Session[]> {
      return sessionsWithEpoch(db)
        .select(sessionColumns)
        .where('sessions.userId', '=', userId)
        .where('sessions.rotatedAt', 'is', null)
        .where('sessions.refreshExpiresAt', '>', now)
        .whereRef('sessions.epoch', '=', 'accounts.sessionEpoch')
        .orderBy('sessions.createdAt')
        .orderBy('sessions.sessionId')
        .execute()
    },

    async recordCohort(userId, cohortHash, now) {
      await db
        .insertInto('cohorts')
        .values({ userId, cohortHash, firstSeen: now, lastSeen: now })
        .onConflict((oc) => oc.columns(['userId', 'cohortHash']).doUpdateSet({ lastSeen: now }))
        .execute()
    },

    async listCohorts(userId) {
      return db
        .selectFrom('cohorts')
        .select(['cohortHash', 'firstSeen', 'lastSeen'])
        .where('userId', '=', userId)
        .orderBy('firstSeen')
        .orderBy('cohortHash')
        .execute()
    },
  }
}
