import type { Session, SessionStore } from '../port.ts'
import { affected, type Executor } from './executor.ts'

const sessionColumns = [
  'sessionId', 'userId', 'lineageId', 'accessHash', 'refreshHash', 'accessExpiresAt', 'refreshExpiresAt', 'createdAt',
  'authenticatedAt', 'userAgent', 'ipAddress', 'cohortHash', 'deviceId', 'rotatedAt', 'successorId',
] as const

export function sessionQueries(db: Executor): SessionStore {
  return {
    async openSession(session) {
      await db.insertInto('sessions').values({ ...session, rotatedAt: null, successorId: null }).execute()
    },

    async findBearerSession(accessHash) {
      return db
        .selectFrom('sessions')
        .select(['sessionId', 'userId', 'authenticatedAt', 'accessExpiresAt', 'rotatedAt'])
        .where('accessHash', '=', accessHash)
        .executeTakeFirst()
    },

    async findSessionByRefreshHash(refreshHash): Promise<Session | undefined> {
      return db.selectFrom('sessions').select(sessionColumns).where('refreshHash', '=', refreshHash).executeTakeFirst()
    },

    async findSession(sessionId): Promise<Session | undefined> {
      return db.selectFrom('sessions').select(sessionColumns).where('sessionId', '=', sessionId).executeTakeFirst()
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
        .executeTakeFirst()
      return affected(result) === 1
    },

    async closeOtherSessions(userId, keepSessionId) {
      await db.deleteFrom('sessions').where('userId', '=', userId).where('sessionId', '!=', keepSessionId).execute()
    },

    async setAuthenticatedAt(sessionId, authenticatedAt) {
      await db.updateTable('sessions').set({ authenticatedAt }).where('sessionId', '=', sessionId).execute()
    },

    async listLiveSessions(userId, now): Promise<Session[]> {
      return db
        .selectFrom('sessions')
        .select(sessionColumns)
        .where('userId', '=', userId)
        .where('rotatedAt', 'is', null)
        .where('refreshExpiresAt', '>', now)
        .orderBy('createdAt')
        .orderBy('sessionId')
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
