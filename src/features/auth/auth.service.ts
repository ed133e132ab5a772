// Sign-in and session lifecycle: register, login, verify login, refresh, logout,
// reauthenticate, change password (SPEC.md "Session" table, API.md section 3).
import { createHash, randomUUID } from 'node:crypto'
import { newToken, hashToken, successorTokens, type TokenPair } from '../../crypto/tokens.ts'
import { matchTotpStep } from '../../crypto/totp.ts'
import type { Deps } from '../../deps.ts'
import { normalizeEmail } from '../../domain/account.ts'
import { advisoryCohortHash, advisoryDeviceId } from '../../domain/advisory.ts'
import { lockRetryAfterS, lockUntil } from '../../domain/lockout.ts'
import { afterWrongCode } from '../../domain/second-factor.ts'
import { decideRefresh, expiresBy, sessionLifetimes } from '../../domain/session.ts'
import { AppError } from '../../errors.ts'
import type { Caller, RequestMeta } from '../context.ts'
import type { Account, Store } from '../../storage/port.ts'
import { totpAssociatedData } from '../totp/totp.service.ts'

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
async function openLineage(tx: Store, deps: Deps, userId: string, epoch: number, now: number, meta: RequestMeta, advisory: Advisory): Promise<IssuedTokens> {
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

/**
 * A login for an email with no account answers exactly as a wrong password does, in the same
 * time: a verification of a dummy hash, then a counted failure (the database write a wrong
 * password makes).
 */
async function refuseUnknownEmail(deps: Deps, email: string, password: string): Promise<never> {
  await deps.passwords.verifyDummy(password)
  await deps.storage.recordUnknownSignIn(createHash('sha256').update(email.trim().toLowerCase()).digest('hex'), deps.clock.now())
  throw invalidCredentials()
}

/**
 * The password check shared by login, reauthenticate and change password: lockout first, then
 * argon2id, counting a wrong password toward the lock.
 */
async function checkPassword(deps: Deps, account: Account, password: string): Promise<Account> {
  const retryAfterS = lockRetryAfterS(account.lockedUntil, deps.clock.now())
  if (retryAfterS !== null) {
    throw new AppError('error.auth.account_locked', 'Too many wrong passwords; the account is locked for a while', { retryAfterS })
  }
  if (!(await deps.passwords.verify(account.passwordHash, password))) {
    const { threshold, durationS } = deps.config.lockout
    await deps.storage.recordPasswordFailure(account.userId, threshold, lockUntil(deps.clock.now(), durationS))
    throw invalidCredentials()
  }
  await deps.storage.clearPasswordFailures(account.userId)
  return account
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
  const found = email === null ? undefined : await deps.storage.findAccountByEmailKey(email.emailKey)
  const account = await checkPassword(deps, found ?? (await refuseUnknownEmail(deps, body.email, body.password)), body.password)
  const now = deps.clock.now()
  const factor = await deps.storage.findSecondFactor(account.userId)
  if (factor?.status === 'active') {
    // No session, cohort or refresh token until the code is verified.
    const mfaToken = newToken('mfa')
    const expiresAt = now + deps.config.secondFactor.challengeTtlS * 1000
    await deps.storage.insertMfaChallenge({ tokenHash: hashToken(mfaToken), userId: account.userId, expiresAt, failedAttempts: 0, epoch: account.sessionEpoch })
    return { kind: 'second_factor', mfaToken, expiresBy: Math.floor(expiresAt / 1000) }
  }
  const tokens = await deps.storage.transaction((tx) => openLineage(tx, deps, account.userId, account.sessionEpoch, now, meta, advisory))
  return { kind: 'session', tokens }
}

export async function verifyLogin(deps: Deps, body: { mfa_token: string; totp_code: string }, advisory: Advisory, meta: RequestMeta): Promise<IssuedTokens> {
  const now = deps.clock.now()
  const tokenHash = hashToken(body.mfa_token)
  const expired = () => new AppError('error.auth.challenge_expired', 'The second-factor challenge is unknown, used or expired; sign in again')
  const challenge = await deps.storage.findLiveMfaChallenge(tokenHash, now)
  // A password change since the login ended every session, this pending one included.
  if (challenge === undefined || (await deps.storage.findAccount(challenge.userId))?.sessionEpoch !== challenge.epoch) throw expired()
  const factor = await deps.storage.findSecondFactor(challenge.userId)
  const secret = factor?.status === 'active' ? deps.totpSecrets.open(factor.secretBox, totpAssociatedData(challenge.userId)) : null
  const step = secret === null ? null : matchTotpStep(secret, body.totp_code, now)

  // A wrong code must be counted even though the request fails, so the transaction returns an
  // outcome and the error is thrown after it commits.
  const outcome = await deps.storage.transaction(async (tx) => {
    if (step !== null && (await tx.claimTotpStep(challenge.userId, step, now))) {
      if ((await tx.consumeMfaChallenge(tokenHash, now)) === undefined) throw expired() // rolls the claim back
      return { kind: 'opened' as const, tokens: await openLineage(tx, deps, challenge.userId, challenge.epoch, now, meta, advisory) }
    }
    const failures = await tx.recordMfaFailure(tokenHash)
    if (failures === null) return { kind: 'gone' as const }
    if (afterWrongCode(failures, deps.config.secondFactor.verifyMaxAttempts) === 'burn') {
      await tx.deleteMfaChallenge(tokenHash)
      return { kind: 'burned' as const }
    }
    return { kind: 'wrong' as const }
  })
  switch (outcome.kind) {
    case 'opened':
      return outcome.tokens
    case 'gone':
      throw expired()
    case 'burned':
      throw new AppError('error.rate_limited', 'Too many wrong codes; this challenge is burned, sign in again', { retryAfterS: 0 })
    case 'wrong':
      throw new AppError('error.auth.invalid_code', 'The code is wrong or was already used')
  }
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

export async function reauthenticate(deps: Deps, caller: Caller, password: string): Promise<number> {
  await checkPassword(deps, caller.account, password)
  const now = deps.clock.now()
  await deps.storage.setAuthenticatedAt(caller.sessionId, now)
  return now
}

export async function changePassword(deps: Deps, caller: Caller, body: { current_password: string; new_password: string }, log: (error: unknown) => void): Promise<void> {
  const account = await checkPassword(deps, caller.account, body.current_password)
  const passwordHash = await deps.passwords.hash(body.new_password)
  // The new password and the end of every session are one write (the epoch moves with the
  // hash); the caller's session is carried into the new epoch in the same transaction.
  await deps.storage.transaction(async (tx) => {
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
