// The storage port: every read and write the services make, named for what it guarantees.
// Instants are Unix milliseconds. Methods that decide a race say which side wins; all of
// them hold on both engines and across several instances sharing one database.

export type Engine = 'sqlite' | 'postgres'

export interface Account {
  readonly userId: string
  readonly email: string
  readonly passwordHash: string
  readonly displayName: string | null
  readonly createdAt: number
  readonly lockedUntil: number | null
}

export interface NewAccount {
  readonly userId: string
  readonly email: string
  readonly emailKey: string
  readonly passwordHash: string
  readonly createdAt: number
}

export interface NewSession {
  readonly sessionId: string
  readonly userId: string
  readonly lineageId: string
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
}

/** What the bearer check needs, read by one indexed lookup on the access-token hash. */
export interface BearerSession {
  readonly sessionId: string
  readonly userId: string
  readonly authenticatedAt: number
  readonly accessExpiresAt: number
  readonly rotatedAt: number | null
}

export interface Cohort {
  readonly cohortHash: string
  readonly firstSeen: number
  readonly lastSeen: number
}

export interface SecondFactor {
  readonly status: 'pending' | 'active'
  readonly secretBox: Buffer
}

export interface MfaChallenge {
  readonly tokenHash: string
  readonly userId: string
  readonly expiresAt: number
  readonly failedAttempts: number
}

export interface AccountStore {
  /** Inserts unless the email key is taken; false when taken. Of two racing inserts of one key, one wins. */
  insertAccount(account: NewAccount): Promise<boolean>
  findAccountByEmailKey(emailKey: string): Promise<Account | undefined>
  findAccount(userId: string): Promise<Account | undefined>
  /**
   * Counts one wrong password atomically. The failure that reaches `threshold` sets
   * `locked_until` to `lockUntil` and restarts the count. Returns the lock now in force, if any.
   */
  recordPasswordFailure(userId: string, threshold: number, lockUntil: number): Promise<number | null>
  /** Resets the wrong-password count and any lock (a right password). Writes only when there is something to reset. */
  clearPasswordFailures(userId: string): Promise<void>
  setPasswordHash(userId: string, passwordHash: string): Promise<void>
  setDisplayName(userId: string, displayName: string | null): Promise<void>
}

export interface SessionStore {
  openSession(session: NewSession): Promise<void>
  findBearerSession(accessHash: string): Promise<BearerSession | undefined>
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
  /** Closes every session of the account but one (rotated records included). */
  closeOtherSessions(userId: string, keepSessionId: string): Promise<void>
  setAuthenticatedAt(sessionId: string, authenticatedAt: number): Promise<void>
  /** Unrotated sessions whose refresh token has not expired, oldest first. */
  listLiveSessions(userId: string, now: number): Promise<Session[]>
  /** Records a sighting: `first_seen` once, `last_seen` moved forward. */
  recordCohort(userId: string, cohortHash: string, now: number): Promise<void>
  /** Every cohort ever seen for the account, oldest first sighting first. */
  listCohorts(userId: string): Promise<Cohort[]>
}

export interface SecondFactorStore {
  findSecondFactor(userId: string): Promise<SecondFactor | undefined>
  /** Stores a pending secret, replacing an earlier pending one; false (nothing written) when active. */
  putPendingSecondFactor(userId: string, secretBox: Buffer, now: number): Promise<boolean>
  /** pending -> active, only while the pending secret is still `secretBox` (the one the code was checked against). */
  activateSecondFactor(userId: string, secretBox: Buffer, now: number): Promise<boolean>
  /** active -> none; false when not active. */
  removeActiveSecondFactor(userId: string): Promise<boolean>
  /** Enters a TOTP step in the replay ledger. One atomic insert: of racing claims of one step exactly one gets true. */
  claimTotpStep(userId: string, step: number, now: number): Promise<boolean>
  insertMfaChallenge(challenge: MfaChallenge): Promise<void>
  findLiveMfaChallenge(tokenHash: string, now: number): Promise<MfaChallenge | undefined>
  /** Counts one wrong code; returns the count after it, or null when the challenge is gone. */
  recordMfaFailure(tokenHash: string): Promise<number | null>
  /** Deletes the challenge if still live and returns it; of racing consumers exactly one gets it. */
  consumeMfaChallenge(tokenHash: string, now: number): Promise<MfaChallenge | undefined>
  deleteMfaChallenge(tokenHash: string): Promise<void>
}

export interface Store extends AccountStore, SessionStore, SecondFactorStore {}

export interface Storage extends Store {
  readonly engine: Engine
  /** Runs `work` in one transaction (BEGIN IMMEDIATE on SQLite); a throw rolls everything back. */
  transaction<T>(work: (tx: Store) => Promise<T>): Promise<T>
  migrate(): Promise<void>
  ping(): Promise<void>
  close(): Promise<void>
}
