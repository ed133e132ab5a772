// Sign-in and session lifecycle: register, login, verify login, refresh, logout,
// reauthenticate, change password (SPEC.md "Session" table, API.md section 3).
import { createHash, randomUUID } from 'node:crypto'
import { newToken, hashToken, successorTokens, type TokenPair } from '../../crypto/tokens.ts'
import type { Deps } from '../../deps.ts'
import { normalizeEmail } from '../../domain/account.ts'
import { advisoryCohortHash, advisoryDeviceId } from '../../domain/advisory.ts'
import { lockRetryAfterS } from '../../domain/lockout.ts'
import { afterWrongCode } from '../../domain/second-factor.ts'
import { decideRefresh, expiresBy, sessionLifetimes } from '../../domain/session.ts'
import { AppError } from '../../errors.ts'
import type { Caller, RequestMeta } from '../context.ts'
import type { Account } from '../../storage/port/accounts.ts'
import type { SessionStore } from '../../storage/port/sessions.ts'
import { activeFactorCodes, spendCode } from '../totp/totp.service.ts'

export interface Advisory {
  readonly cohortHash: string | null
  readonly deviceId: string | null
}

export interface IssuedTokens extends TokenPair {
  /** Unix seconds. */
  readonly expiresBy: number
}

export type LoginOutcome =
  | { readonly kind: 'session'; readonly tokens: IssuedTokens }
  | { readonly kind: 'second_factor'; readonly mfaToken: string; readonly expiresBy: number }

export function advisoryOf(body: { cohort_hash?: unknown; device_id?: unknown }): Advisory {
  return { cohortHash: advisoryCohortHash(body.cohort_hash), deviceId: advisoryDeviceId(body.device_id) }
}

/**
 * Opens the first session of a new lineage (register, login, verify login) in the session
 * epoch read together with the credential it proved: if every session of the account is
 * ended meanwhile, this one is born dead instead of surviving the race.
 */
async function openLineage(
  tx: SessionStore,
  deps: Deps,
  userId: string,
  epoch: number,
  now: number,
  meta: RequestMeta,
  advisory: Advisory,
): Promise<IssuedTokens> {
  const tokens = { accessToken: newToken('access'), refreshToken: newToken('refresh') }
  const lifetimes = sessionLifetimes(now, deps.config.tokens.accessTtlS, deps.config.tokens.refreshTtlS)
  await tx.openSession({
    sessionId: randomUUID(),
    userId,
    lineageId: randomUUID(),
    epoch,
    accessHash: hashToken(tokens.accessToken),
    refreshHash: hashToken(tokens.refreshToken),
    accessExpiresAt: lifetimes.accessExpiresAt,
    refreshExpiresAt: lifetimes.refreshExpiresAt,
    createdAt: now,
    authenticatedAt: now,
    ...meta,
    ...advisory,
  })
  if (advisory.cohortHash !== null) await tx.recordCohort(userId, advisory.cohortHash, now)
  return { ...tokens, expiresBy: lifetimes.expiresBy }
}

const invalidCredentials = () => new AppError('error.auth.invalid_credentials', 'The email or password is wrong')

/** What wrong passwords are counted against: the email key's SHA-256, whether or not an account has it. */
function signInSubject(emailKey: string): string {
  return createHash('sha256').update(emailKey, 'utf8').digest('hex')
}

/**
 * Counts a password check before its hash runs, so that no burst, on any number of instances,
 * gets more than LOCKOUT_THRESHOLD hashes per lock; a locked subject answers 423 unhashed.
 * Returns the lock this check set by reaching the threshold (it stands unless the password
 * proves right).
 */
async function reservePasswordCheck(deps: Deps, subject: string): Promise<number | null> {
  const now = deps.clock.now()
  const { threshold, durationS } = deps.config.lockout
  const reservation = await deps.storage.reservePasswordCheck(subject, now, { threshold, durationMs: durationS * 1000 })
  if (reservation === undefined) {
    // The lock may have ended between the two statements: then retry at once.
    const retryAfterS = lockRetryAfterS(await deps.storage.findPasswordLock(subject), now) ?? 1
    throw new AppError('error.auth.account_locked', 'Too many wrong passwords; the account is locked for a while', { retryAfterS })
  }
  return reservation.lockedUntil
}

/**
 * A login for an email with no account answers exactly as a wrong password does: counted and
 * locked the same way, then a verification of a dummy hash.
 */
async function refuseUnknownEmail(deps: Deps, emailKey: string, password: string): Promise<never> {
  await reservePasswordCheck(deps, signInSubject(emailKey))
  await deps.passwords.verifyDummy(password)
  throw invalidCredentials()
}

/**
 * The password check shared by login, reauthenticate and change password. A wrong password
 * stays counted (the one that locks is noted in the owner's security log); a right one returns
 * the subject, whose count the caller clears in the transaction that acts on the proof.
 */
async function checkPassword(deps: Deps, account: Account, password: string, meta: RequestMeta): Promise<string> {
  const subject = signInSubject(account.emailKey)
  const lockedUntil = await reservePasswordCheck(deps, subject)
  if (await deps.passwords.verify(account.passwordHash, password)) return subject
  if (lockedUntil !== null)
    await deps.storage.recordSecurityEvent(account.userId, { kind: 'password_lockout', at: deps.clock.now(), until: lockedUntil, ...meta })
  throw invalidCredentials()
}

export async function register(deps: Deps, body: { email: string; password: string }, meta: RequestMeta): Promise<IssuedTokens> {
  const email = normalizeEmail(body.email)
  if (email === null) throw new AppError('error.request.invalid', 'email must be at most 254 characters with one @ and text on both sides')
  const passwordHash = await deps.passwords.hash(body.password)
  const now = deps.clock.now()
  return deps.storage.transaction(async (tx) => {
    const userId = randomUUID()
    if (!(await tx.insertAccount({ userId, ...email, passwordHash, createdAt: now }))) {
      throw new AppError('error.auth.account_exists', 'An account with this email already exists')
    }
    return openLineage(tx, deps, userId, 0, now, meta, { cohortHash: null, deviceId: null })
  })
}

export async function login(deps: Deps, body: { email: string; password: string }, advisory: Advisory, meta: RequestMeta): Promise<LoginOutcome> {
  const email = normalizeEmail(body.email)
  const account = email === null ? undefined : await deps.storage.findAccountByEmailKey(email.emailKey)
  // An unusable email is counted under what was sent.
  if (account === undefined) return refuseUnknownEmail(deps, email?.emailKey ?? body.email, body.password)
  const subject = await checkPassword(deps, account, body.password, meta)
  const now = deps.clock.now()
  const factor = await deps.storage.findSecondFactor(account.userId)
  return deps.storage.transaction(async (tx): Promise<LoginOutcome> => {
    await tx.clearPasswordFailures(subject)
    if (factor?.status === 'active') {
      // No session, cohort or refresh token until the code is verified.
      const mfaToken = newToken('mfa')
      const expiresAt = now + deps.config.secondFactor.challengeTtlS * 1000
      await tx.insertMfaChallenge({ tokenHash: hashToken(mfaToken), userId: account.userId, expiresAt, failedAttempts: 0, epoch: account.sessionEpoch })
      return { kind: 'second_factor', mfaToken, expiresBy: Math.floor(expiresAt / 1000) }
    }
    return { kind: 'session', tokens: await openLineage(tx, deps, account.userId, account.sessionEpoch, now, meta, advisory) }
  })
}

export async function verifyLogin(deps: Deps, body: { mfa_token: string; totp_code: string }, advisory: Advisory, meta: RequestMeta): Promise<IssuedTokens> {
  const tokenHash = hashToken(body.mfa_token)
  const { verifyMaxAttempts } = deps.config.secondFactor
  const expired = () => new AppError('error.auth.challenge_expired', 'The second-factor challenge is unknown, used or expired; sign in again')
  // Counted on the challenge before the code is looked at (and on the account, in spendCode).
  const challenge = await deps.storage.reserveMfaAttempt(tokenHash, deps.clock.now(), verifyMaxAttempts)
  // A password change since the login ended every session, this pending one included.
  if (challenge === undefined || (await deps.storage.findAccount(challenge.userId))?.sessionEpoch !== challenge.epoch) throw expired()
  const factor = await deps.storage.findSecondFactor(challenge.userId)
  const tokens = await spendCode(deps, challenge.userId, activeFactorCodes(factor), body.totp_code, meta, async (tx, now) => {
    if ((await tx.consumeMfaChallenge(tokenHash, now)) === undefined) throw expired() // rolls the step back
    return openLineage(tx, deps, challenge.userId, challenge.epoch, now, meta, advisory)
  })
  if (tokens !== null) return tokens
  if (afterWrongCode(challenge.failedAttempts, verifyMaxAttempts) === 'burn') {
    await deps.storage.deleteMfaChallenge(tokenHash)
    throw new AppError('error.rate_limited', 'Too many wrong codes; this challenge is burned, sign in again', { retryAfterS: 0 })
  }
  throw new AppError('error.auth.invalid_code', 'The code is wrong or was already used')
}

export async function refresh(deps: Deps, refreshToken: string): Promise<IssuedTokens> {
  const presentedHash = hashToken(refreshToken)
  const { accessTtlS, refreshTtlS, refreshGraceS } = deps.config.tokens
  // Two passes at most: a refresh that loses the rotation race to a concurrent one re-reads
  // the winner's successor and answers it (the grace rule).
  for (let pass = 0; pass < 2; pass++) {
    const now = deps.clock.now()
    const outcome = await deps.storage.transaction(async (tx) => {
      const presented = await tx.findSessionByRefreshHash(presentedHash)
      if (presented === undefined) return { kind: 'refused' as const }
      const successor = presented.successorId === null ? undefined : await tx.findSession(presented.successorId)
      switch (decideRefresh(presented, successor, now, refreshGraceS)) {
        case 'rotate': {
          const successorId = randomUUID()
          if (!(await tx.claimRotation(presented.sessionId, successorId, now))) return { kind: 'raced' as const }
          const tokens = successorTokens(deps.refreshKey, refreshToken)
          const lifetimes = sessionLifetimes(now, accessTtlS, refreshTtlS)
          await tx.openSession({
            userId: presented.userId,
            lineageId: presented.lineageId,
            epoch: presented.epoch,
            authenticatedAt: presented.authenticatedAt,
            userAgent: presented.userAgent,
            ipAddress: presented.ipAddress,
            cohortHash: presented.cohortHash,
            deviceId: presented.deviceId,
            sessionId: successorId,
            accessHash: hashToken(tokens.accessToken),
            refreshHash: hashToken(tokens.refreshToken),
            accessExpiresAt: lifetimes.accessExpiresAt,
            refreshExpiresAt: lifetimes.refreshExpiresAt,
            createdAt: now,
          })
          if (presented.cohortHash !== null) await tx.recordCohort(presented.userId, presented.cohortHash, now)
          return { kind: 'tokens' as const, tokens: { ...tokens, expiresBy: lifetimes.expiresBy } }
        }
        case 'repeat_successor':
          return {
            kind: 'tokens' as const,
            tokens: { ...successorTokens(deps.refreshKey, refreshToken), expiresBy: expiresBy(successor?.accessExpiresAt ?? now) },
          }
        case 'reuse_detected':
          await tx.closeLiveSessionsOfLineage(presented.lineageId)
          return { kind: 'refused' as const }
        case 'expired':
          return { kind: 'refused' as const }
      }
    })
    if (outcome.kind === 'tokens') return outcome.tokens
    if (outcome.kind === 'refused') break
  }
  throw new AppError('error.auth.session_expired', 'The refresh token is unknown, used or expired; sign in again')
}

export async function logout(deps: Deps, accessToken: string): Promise<void> {
  await deps.storage.closeSessionByAccessHash(hashToken(accessToken))
}

export async function reauthenticate(deps: Deps, caller: Caller, password: string, meta: RequestMeta): Promise<number> {
  const subject = await checkPassword(deps, caller.account, password, meta)
  const now = deps.clock.now()
  await deps.storage.transaction(async (tx) => {
    await tx.clearPasswordFailures(subject)
    await tx.setAuthenticatedAt(caller.sessionId, now)
  })
  return now
}

export async function changePassword(
  deps: Deps,
  caller: Caller,
  body: { current_password: string; new_password: string },
  meta: RequestMeta,
  log: (error: unknown) => void,
): Promise<void> {
  const { account } = caller
  const subject = await checkPassword(deps, account, body.current_password, meta)
  const passwordHash = await deps.passwords.hash(body.new_password)
  // The new password and the end of every session are one write (the epoch moves with the
  // hash); the caller's session is carried into the new epoch in the same transaction.
  await deps.storage.transaction(async (tx) => {
    await tx.clearPasswordFailures(subject)
    const epoch = await tx.changePasswordHash(account.userId, passwordHash)
    await tx.restampSession(caller.sessionId, epoch, deps.clock.now())
  })
  // Deleting the dead records is clean-up: SPEC.md's "failure of the final revocation is
  // logged and not returned".
  try {
    await deps.storage.closeOtherSessions(account.userId, caller.sessionId)
  } catch (error) {
    log(error)
  }
}
