// The devices listing and revoking one session (SPEC.md "Sessions").
import { randomBytes } from 'node:crypto'
import { revokeAllSigningBytes } from '../../contract/signing.ts'
import { hybridVerify } from '../../crypto/hybrid.ts'
import { hashToken } from '../../crypto/tokens.ts'
import type { Deps } from '../../deps.ts'
import { AppError } from '../../errors.ts'
import type { Caller } from '../context.ts'
import type { Cohort, SecurityEvent, Session } from '../../storage/port.ts'

export interface Devices {
  readonly sessions: Session[]
  readonly cohorts: Cohort[]
}

export async function listDevices(deps: Deps, caller: Caller): Promise<Devices> {
  const [sessions, cohorts] = await Promise.all([
    deps.storage.listLiveSessions(caller.userId, deps.clock.now()),
    deps.storage.listCohorts(caller.userId),
  ])
  return { sessions, cohorts }
}

/** How many of the newest security events the owner is shown. */
export const SECURITY_EVENTS_LISTED = 100

/** Attacks on the account the owner should know of: locks by wrong passwords, refusals of codes. */
export function listSecurityEvents(deps: Deps, caller: Caller): Promise<SecurityEvent[]> {
  return deps.storage.listSecurityEvents(caller.userId, SECURITY_EVENTS_LISTED)
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
 * Revoke-all needs the identity key, not a session: the challenge is burned first, whatever
 * follows, then the proof is checked against the account's bound key. A stolen access token
 * alone can therefore end only its own session (logout).
 */
export async function revokeAllSessions(deps: Deps, challenge: string, proof: string): Promise<number> {
  const refused = () => new AppError('error.auth.proof_required', 'A fresh challenge signed with the account identity key is required')
  const burned = await deps.storage.burnRevokeChallenge(hashToken(challenge))
  if (burned === undefined || burned.expiresAt <= deps.clock.now()) throw refused()
  const identityKey = await deps.storage.findIdentityKey(burned.userId)
  const signature = Buffer.from(proof, 'base64')
  if (identityKey === undefined || signature.toString('base64') !== proof) throw refused()
  if (!(await hybridVerify(identityKey, revokeAllSigningBytes(burned.userId, challenge), signature))) throw refused()
  // One transaction: the epoch move, the count and the delete see no other revoke-all between them.
  return deps.storage.transaction((tx) => tx.closeAllSessions(burned.userId, deps.clock.now()))
}
