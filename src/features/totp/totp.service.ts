// The TOTP second factor: start, confirm, disable (SPEC.md "Second factor" table).
import type { Static } from 'typebox'
import type { SecondFactorStatus } from '../../contract/custody.ts'
import { matchTotpStep, newTotpSecret, provisioningUri } from '../../crypto/totp.ts'
import type { Deps } from '../../deps.ts'
import { budgetBlockedForS } from '../../domain/attempt-budget.ts'
import { confirmEnrollment, disableSecondFactor, startEnrollment, type SecondFactorRefusal, type Transition } from '../../domain/second-factor.ts'
import { AppError } from '../../errors.ts'
import type { Caller, RequestMeta } from '../context.ts'
import type { AttemptBudget, SecondFactorStore, Store } from '../../storage/port.ts'

/** Binds a sealed TOTP secret to its account: a box moved onto another row does not open. */
export function totpAssociatedData(userId: string): string {
  return `coffer/totp-secret/v1:${userId}`
}

/** Whether the account has a confirmed second factor (a pending enrollment is none), never its secret. */
export async function secondFactorStatus(store: SecondFactorStore, userId: string): Promise<Static<typeof SecondFactorStatus>> {
  return { enabled: (await store.findSecondFactor(userId))?.status === 'active' }
}

const refusalDetail: Record<SecondFactorRefusal, string> = {
  'error.totp.already_active': 'A second factor is already active; disable it first',
  'error.totp.nothing_pending': 'No enrollment is pending; start one first',
  'error.totp.not_enrolled': 'No second factor is active',
}

function ensureAllowed(transition: Transition): void {
  if (transition !== 'allowed') throw new AppError(transition, refusalDetail[transition])
}

const invalidCode = () => new AppError('error.totp.invalid_code', 'The code is wrong, expired or already used')

export async function startTotpEnrollment(deps: Deps, caller: Caller): Promise<string> {
  const factor = await deps.storage.findSecondFactor(caller.userId)
  ensureAllowed(startEnrollment(factor?.status ?? 'none'))
  const secret = newTotpSecret()
  const sealed = deps.totpSecrets.seal(secret, totpAssociatedData(caller.userId))
  if (!(await deps.storage.putPendingSecondFactor(caller.userId, sealed, deps.clock.now()))) ensureAllowed('error.totp.already_active')
  return provisioningUri(secret, caller.account.email)
}

/**
 * Counts a code against the account's budget of wrong codes before it is looked at: once
 * TOTP_MAX_FAILURES are counted in the window, every operation that takes a code answers 429
 * until the window ends, whatever the code.
 */
async function reserveCodeAttempt(deps: Deps, userId: string, now: number): Promise<AttemptBudget> {
  const { maxFailures, failureWindowS } = deps.config.secondFactor
  const budget = await deps.storage.reserveAttempt('second_factor', userId, now, { maxFailures, windowMs: failureWindowS * 1000 })
  if (budget !== undefined) return budget
  // The window may have ended between the two statements: then retry at once.
  const retryAfterS = budgetBlockedForS(await deps.storage.findAttemptBudget('second_factor', userId), now, maxFailures) ?? 1
  throw new AppError('error.rate_limited', 'Too many wrong codes for this account; wait and retry', { retryAfterS })
}

/**
 * Spends a TOTP code of the account (sign-in verification, confirm, disable): counted first
 * (reserveCodeAttempt), then checked against the sealed secret; a live, unused code enters its
 * step in the replay ledger, runs `apply` and uncounts itself, all in one transaction (a failed
 * `apply` leaves nothing behind). Null when the code is wrong or used: it stays counted, and
 * the one that spends the budget is noted in the owner's security log.
 */
export async function spendCode<T>(
  deps: Deps,
  userId: string,
  secretBox: Buffer | null,
  code: string,
  meta: RequestMeta,
  apply: (tx: Store, now: number) => Promise<T>,
): Promise<T | null> {
  const now = deps.clock.now()
  const budget = await reserveCodeAttempt(deps, userId, now)
  const step = secretBox === null ? null : matchTotpStep(deps.totpSecrets.open(secretBox, totpAssociatedData(userId)), code, now)
  const applied = step === null ? null : await deps.storage.transaction(async (tx) => {
    if (!(await tx.claimTotpStep(userId, step, now))) return null
    const result = await apply(tx, now)
    await tx.releaseAttempt('second_factor', userId)
    return { result }
  })
  if (applied !== null) return applied.result
  if (budget.failures >= deps.config.secondFactor.maxFailures) {
    await deps.storage.recordSecurityEvent(userId, { kind: 'second_factor_lockout', at: now, until: budget.windowEndsAt, ...meta })
  }
  return null
}

export async function confirmTotpEnrollment(deps: Deps, caller: Caller, code: string, meta: RequestMeta): Promise<void> {
  const factor = await deps.storage.findSecondFactor(caller.userId)
  ensureAllowed(confirmEnrollment(factor?.status ?? 'none'))
  if (factor === undefined) return
  const confirmed = await spendCode(deps, caller.userId, factor.secretBox, code, meta, async (tx, now) => {
    // A start that replaced the pending secret meanwhile makes this a code of the old secret.
    if (!(await tx.activateSecondFactor(caller.userId, factor.secretBox, now))) throw invalidCode()
    return true
  })
  if (confirmed === null) throw invalidCode()
}

export async function disableTotp(deps: Deps, caller: Caller, code: string, meta: RequestMeta): Promise<void> {
  const factor = await deps.storage.findSecondFactor(caller.userId)
  ensureAllowed(disableSecondFactor(factor?.status ?? 'none'))
  if (factor === undefined) return
  const disabled = await spendCode(deps, caller.userId, factor.secretBox, code, meta, async (tx) => {
    if (!(await tx.removeActiveSecondFactor(caller.userId))) ensureAllowed('error.totp.not_enrolled')
    return true
  })
  if (disabled === null) throw invalidCode()
}
