// Session rules: token lifetimes and the refresh decision of SPEC's Session table with
// API.md section 3 (rotation, the grace window, reuse detection).

export interface SessionLifetimes {
  /** Unix seconds; `expires_by` of the token response. */
  readonly expiresBy: number
  readonly accessExpiresAt: number
  readonly refreshExpiresAt: number
}

/** The access expiry falls on a whole second so that `expires_by` is exact. */
export function sessionLifetimes(now: number, accessTtlS: number, refreshTtlS: number): SessionLifetimes {
  const expiresBy = Math.floor(now / 1000) + accessTtlS
  return { expiresBy, accessExpiresAt: expiresBy * 1000, refreshExpiresAt: now + refreshTtlS * 1000 }
}

export function expiresBy(accessExpiresAt: number): number {
  return Math.floor(accessExpiresAt / 1000)
}

export interface RefreshFacts {
  readonly rotatedAt: number | null
  readonly refreshExpiresAt: number
  /** The session's epoch and its account's current one: they differ once every session was ended. */
  readonly epoch: number
  readonly accountEpoch: number
}

export type RefreshDecision =
  /** Unused and unexpired: close it and open the successor. */
  | 'rotate'
  /** Used within the grace window and its successor is live and unused: answer that successor again. */
  | 'repeat_successor'
  /** Any other use of a used token: close the live session of the lineage, answer 401. */
  | 'reuse_detected'
  /** Unused but past its lifetime, or ended with every session of the account: 401. */
  | 'expired'

export function decideRefresh(presented: RefreshFacts, successor: RefreshFacts | undefined, now: number, graceS: number): RefreshDecision {
  if (presented.epoch !== presented.accountEpoch) return 'expired'
  if (presented.rotatedAt === null) return presented.refreshExpiresAt > now ? 'rotate' : 'expired'
  const withinGrace = now - presented.rotatedAt <= graceS * 1000
  const successorLiveAndUnused = successor !== undefined && successor.rotatedAt === null && successor.refreshExpiresAt > now
  return withinGrace && successorLiveAndUnused ? 'repeat_successor' : 'reuse_detected'
}

export interface BearerFacts {
  readonly accessExpiresAt: number
  readonly rotatedAt: number | null
  readonly epoch: number
  readonly accountEpoch: number
}

/** An access token is honoured until its expiry, while its session is neither rotated nor ended with all the account's sessions. */
export function bearerIsLive(session: BearerFacts, now: number): boolean {
  return session.rotatedAt === null && session.accessExpiresAt > now && session.epoch === session.accountEpoch
}

/** The freshness gate: a credential was proved on this lineage within the window. */
export function isFresh(authenticatedAt: number, now: number, windowS: number): boolean {
  return now - authenticatedAt <= windowS * 1000
}
