import { randomUUID } from 'node:crypto'
import type { SecurityEventKind, SecurityEventStore } from '../port/security-events.ts'
import type { Executor } from './executor.ts'

export function securityEventQueries(db: Executor): SecurityEventStore {
  return {
    async recordSecurityEvent(userId, event) {
      await db
        .insertInto('securityEvents')
        .values({ eventId: randomUUID(), userId, ...event })
        .execute()
    },

    async listSecurityEvents(userId, limit) {
      const newest = await db
        .selectFrom('securityEvents')
        .select(['kind', 'at', 'until', 'ipAddress', 'userAgent'])
        .where('userId', '=', userId)
        .orderBy('at', 'desc')
        .orderBy('eventId')
        .limit(limit)
        .execute()
      return newest.reverse().map((row) => ({ ...row, kind: row.kind as SecurityEventKind }))
    },
  }
}
