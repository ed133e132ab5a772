import type { MaintenanceStore } from '../port/maintenance.ts'
import { affected, type Executor } from './executor.ts'
import { queueUnownedDeclarations } from './uploads.ts'

export function maintenanceQueries(db: Executor): MaintenanceStore {
  return {
    async sweepExpired({ now, oldestUsableTotpStep, passwordFailureTtlMs, securityEventTtlMs }) {
      const counts: Record<string, number> = {}
      const count = async (table: string, query: { executeTakeFirst(): Promise<{ numDeletedRows: bigint }> }) => {
        counts[table] = affected(await query.executeTakeFirst())
      }
      await count('sessions', db.deleteFrom('sessions').where('refreshExpiresAt', '<=', now))
      await count('mfa_challenges', db.deleteFrom('mfaChallenges').where('expiresAt', '<=', now))
      await count('totp_used_steps', db.deleteFrom('totpUsedSteps').where('step', '<', oldestUsableTotpStep))
      await count('revoke_challenges', db.deleteFrom('revokeChallenges').where('expiresAt', '<=', now))
      await count('enrollment_codes', db.deleteFrom('enrollmentCodes').where('expiresAt', '<=', now))
      await count('relay_channels', db.deleteFrom('relayChannels').where('expiresAt', '<=', now))
      await count('link_sessions', db.deleteFrom('linkSessions').where('expiresAt', '<=', now))
      await queueUnownedDeclarations(db, { expiredBy: now })
      await count('upload_sessions', db.deleteFrom('uploadSessions').where('expiresAt', '<=', now))
      await count('attempt_budgets', db.deleteFrom('attemptBudgets').where('windowEndsAt', '<=', now))
      await count(
        'password_failures',
        db
          .deleteFrom('passwordFailures')
          .where('lastFailedAt', '<=', now - passwordFailureTtlMs)
          .where((eb) => eb.or([eb('lockedUntil', 'is', null), eb('lockedUntil', '<=', now)])),
      )
      // Holds whose holder died; an expired hold holds nothing already (gcHeld), this only tidies.
      await count('gc_holds', db.deleteFrom('gcHolds').where('expiresAt', '<=', now))
      await count('security_events', db.deleteFrom('securityEvents').where('at', '<=', now - securityEventTtlMs))
      return counts
    },
  }
}
