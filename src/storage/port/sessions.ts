// Sessions: the token pairs of a sign-in, their rotation, and the cohorts seen.
// Part of the storage port (../port.ts); storage/kysely/sessions.ts implements it.
// BearerSession is what Storage.findBearerSession answers (port.ts; storage/kysely/bearer-lookup.ts).
import type { Account } from './accounts.ts'

export interface SessionStore {
  openSession(session: NewSession): Promise<void>
  findSessionByRefreshHash(refreshHash: string): Promise<Session | undefined>
  findSession(sessionId: string): Promise<Session | undefined>
  /** Marks a live session rotated into `successorId`. Of racing claims exactly one gets true. */
  claimRotation(sessionId: string, successorId: string, now: number): Promise<boolean>
  /** Closes the live (unrotated) sessions of a lineage; returns how many. */
  closeLiveSessionsOfLineage(lineageId: string): Promise<number>
  /** Closes the unrotated session an access token was issued to, live or expired. */
  closeSessionByAccessHash(accessHash: string): Promise<void>
  /** Closes one live session of the account; false when there is no such live session. */
  closeLiveSessionOf(userId: string, sessionId: string, now: number): Promise<boolean>
  /** Deletes every session record of the account but one (dead ones included): clean-up after an epoch move. */
  closeOtherSessions(userId: string, keepSessionId: string): Promise<void>
  setAuthenticatedAt(sessionId: string, authenticatedAt: number): Promise<void>
  /** Carries one session into a new epoch (the caller of a password change). */
  restampSession(sessionId: string, epoch: number, authenticatedAt: number): Promise<void>
  /** Unrotated sessions of the current epoch whose refresh token has not expired, oldest first. */
  listLiveSessions(userId: string, now: number): Promise<Session[]>
  /** Records a sighting: `first_seen` once, `last_seen` moved forward. */
  recordCohort(userId: string, cohortHash: string, now: number): Promise<void>
  /** Every cohort ever seen for the account, oldest first sighting first. */
  listCohorts(userId: string): Promise<Cohort[]>
}

export interface NewSession {
  readonly sessionId: string
  readonly userId: string
  readonly lineageId: string
  /** The account's session epoch this session belongs to. */
  readonly epoch: number
  readonly accessHash: string
  readonly refreshHash: string
  readonly accessExpiresAt: number
  readonly refreshExpiresAt: number
  readonly createdAt: number
  readonly authenticatedAt: number
  readonly userAgent: string | null
  readonly ipAddress: string | null
  readonly cohortHash: string | null
  readonly deviceId: string | null
}

export interface Session extends NewSession {
  readonly rotatedAt: number | null
  readonly successorId: string | null
  /** The account's current session epoch, read with the session. */
  readonly accountEpoch: number
}

/**
 * What the bearer check reads, in one indexed lookup on the access-token hash: the session
 * and its account (a primary-key join), so that the operation behind it reads no more.
 */
export interface BearerSession {
  readonly sessionId: string
  readonly authenticatedAt: number
  readonly accessExpiresAt: number
  readonly rotatedAt: number | null
  readonly epoch: number
  readonly accountEpoch: number
  readonly account: Account
}

export interface Cohort {
  readonly cohortHash: string
  readonly firstSeen: number
  readonly lastSeen: number
}
