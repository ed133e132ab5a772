// The devices listing and revoking one session (SPEC.md "Sessions").
import { randomBytes } from 'node:crypto'
import type { Static } from 'typebox'
import { timestamp } from '../../contract/common.ts'
import type { CohortView, SecurityEventView, SessionView } from '../../contract/sessions.ts'
import { revokeAllSigningBytes } from '../../contract/signing.ts'
import { cachingHybridVerifier } from '../../crypto/hybrid.ts'
import { hashToken } from '../../crypto/tokens.ts'
import type { Deps } from '../../deps.ts'
import { AppError } from '../../errors.ts'
import type { Caller } from '../context.ts'
import type { SecurityEvent } from '../../storage/port/security-events.ts'
import type { Cohort, Session } from '../../storage/port/sessions.ts'

export interface Devices {
  readonly sessions: Session[]
  readonly cohorts: Cohort[]
}

export async function listDevices(deps: Deps, caller: Caller): Promise<Devices> {
  const [sessions, cohorts] = await Promise.all([deps.storage.listLiveSessions(caller.userId, deps.clock.now()), deps.storage.listCohorts(caller.userId)])
  return { sessions, cohorts }
}

/** SessionView: a live session as the sessions list (and the account export) shows it to `caller`. */
export function sessionView(session: Session, caller: Caller): Static<typeof SessionView> {
  return {
    session_id: session.sessionId,
    created_at: timestamp(session.createdAt),
    authenticated_at: timestamp(session.authenticatedAt),
    // SPEC: equals created_at while no session ledger is on the request path.
    last_active_at: timestamp(session.createdAt),
    user_agent: session.userAgent,
    ip_address: session.ipAddress,
    cohort_hash: session.cohortHash,
    device_id: session.deviceId,
    current: session.sessionId === caller.sessionId,
  }
}

export function cohortView(cohort: Cohort): Static<typeof CohortView> {
  return { cohort_hash: cohort.cohortHash, first_seen: timestamp(cohort.firstSeen), last_seen: timestamp(cohort.lastSeen) }
}

/** How many of the newest security events the owner is shown. */
export const SECURITY_EVENTS_LISTED = 100

/** Attacks on the account the owner should know of: locks by wrong passwords, refusals of codes. */
export function listSecurityEvents(deps: Deps, caller: Caller): Promise<SecurityEvent[]> {
  return deps.storage.listSecurityEvents(caller.userId, SECURITY_EVENTS_LISTED)
}

/** SecurityEventView: an event as the owner's security log (and the account export) shows it. */
export function securityEventView(event: SecurityEvent): Static<typeof SecurityEventView> {
  return {
    kind: event.kind,
    at: timestamp(event.at),
    ...(event.until === null ? {} : { until: timestamp(event.until) }),
    ...(event.ipAddress === null ? {} : { ip_address: event.ipAddress }),
    ...(event.userAgent === null ? {} : { user_agent: event.userAgent }),
  }
}

/** Any live token may end any of the caller's own sessions; another account's id is unknown. */
export async function revokeSession(deps: Deps, caller: Caller, sessionId: string): Promise<void> {
  if (!(await deps.storage.closeLiveSessionOf(caller.userId, sessionId, deps.clock.now()))) {
    throw new AppError('error.not_found', 'No live session of this account has that id')
  }
}

/** A single-use challenge for revoke-all, bound to the caller's account. */
export async function issueRevokeChallenge(deps: Deps, caller: Caller): Promise<{ challenge: string; expiresAt: number }> {
  const challenge = randomBytes(32).toString('base64url')
  const expiresAt = deps.clock.now() + deps.config.revokeChallengeTtlS * 1000
  await deps.storage.insertRevokeChallenge({ challengeHash: hashToken(challenge), userId: caller.userId, expiresAt })
  return { challenge, expiresAt }
}

/**
 * Identity keys whose parse revoke-all keeps (about 10 KiB each): enough for the accounts
 * revoking at one time; a key parsed again costs only time.
 */
const IDENTITY_KEYS_KEPT = 1024
const verifyUnderIdentityKey = cachingHybridVerifier(IDENTITY_KEYS_KEPT)

/**
 * Revoke-all needs the identity key, not a session: the proof is checked against the account's
 * bound key, and the challenge is burned whatever the outcome. A stolen access token alone can
 * therefore end only its own session (logout). A refused proof burns the challenge on its own;
 * an accepted one burns it in the transaction that closes the sessions (one commit), and the
 * burn decides: of racing uses of one challenge only the one whose burn deletes the row goes on.
 */
export async function revokeAllSessions(deps: Deps, challenge: string, proof: string): Promise<number> {
  const refused = () => new AppError('error.auth.proof_required', 'A fresh challenge signed with the account identity key is required')
  const challengeHash = hashToken(challenge)
  const pending = await deps.storage.findRevokeChallenge(challengeHash)
  if (pending === undefined) throw refused()
  const signature = Buffer.from(proof, 'base64')
  const accepted =
    pending.expiresAt > deps.clock.now() &&
    pending.identityKey !== null &&
    signature.toString('base64') === proof &&
    (await verifyUnderIdentityKey(pending.identityKey, revokeAllSigningBytes(pending.userId, challenge), signature))
  if (!accepted) {
    await deps.storage.burnRevokeChallenge(challengeHash)
    throw refused()
  }
  // One transaction: the burn, the epoch move, the count and the delete; no other revoke-all between them.
  const closed = await deps.storage.transaction((tx) => tx.revokeAllByChallenge(challengeHash, deps.clock.now()))
  if (closed === undefined) throw refused()
  return closed
}
