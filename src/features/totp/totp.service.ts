// The TOTP second factor: start, confirm, disable (SPEC.md "Second factor" table), its status,
// and the recovery codes that stand in for its codes (docs/decisions/0027).
import type { Static } from 'typebox'
import type { SecondFactorStatus as SecondFactorView } from '../../contract/custody.ts'
import { newRecoveryCodes, recoveryCodeHash } from '../../crypto/recovery-codes.ts'
import { isTotpCode, matchTotpStep, newTotpSecret, provisioningUri } from '../../crypto/totp.ts'
import type { Deps } from '../../deps.ts'
import { budgetBlockedForS } from '../../domain/attempt-budget.ts'
import {
  confirmEnrollment,
  disableSecondFactor,
  renewRecoveryCodes,
  startEnrollment,
  type SecondFactorRefusal,
  type SecondFactorState,
  type Transition,
} from '../../domain/second-factor.ts'
import { isFresh } from '../../domain/session.ts'
import { AppError } from '../../errors.ts'
import type { Caller, RequestMeta } from '../context.ts'
import type { Store } from '../../storage/port.ts'
import type { AttemptBudget } from '../../storage/port/budgets.ts'
import type { SecondFactor, SecondFactorStore } from '../../storage/port/second-factor.ts'

/** Binds a sealed TOTP secret to its account: a box moved onto another row does not open. */
export function totpAssociatedData(userId: string): string {
  return `coffer/totp-secret/v1:${userId}`
}

/**
 * The second factor as the operator's account view and the export show it: whether one is
 * confirmed (a pending enrollment is none) and its recovery codes left, never its secret.
 */
export async function secondFactorView(store: SecondFactorStore, userId: string): Promise<Static<typeof SecondFactorView>> {
  const { status, recoveryCodesRemaining } = await secondFactorStatus(store, userId)
  return { enabled: status === 'active', recovery_codes_remaining: recoveryCodesRemaining }
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
 * What a code is checked against: the sealed TOTP secret (null: no factor to check it against)
 * and whether one of the account's recovery codes may stand in for a TOTP code.
 */
export interface CodeFactor {
  readonly secretBox: Buffer | null
  readonly recoveryCodes: boolean
}

/** An active factor's codes (sign-in, disable, new recovery codes): its TOTP codes or a recovery code; nothing else's. */
export function activeFactorCodes(factor: SecondFactor | undefined): CodeFactor {
  return factor?.status === 'active' ? { secretBox: factor.secretBox, recoveryCodes: true } : { secretBox: null, recoveryCodes: false }
}

/**
 * Spends a code of the account (sign-in verification, confirm, disable, new recovery codes):
 * counted first (reserveCodeAttempt), then told apart by its shape (six digits: TOTP) and
 * checked; a live, unused code is used up (its step entered in the replay ledger, or the
 * recovery code deleted and the use noted in the owner's security log), runs `apply` and
 * uncounts itself, all in one transaction (a failed `apply` leaves nothing behind). Null when
 * the code is wrong or used: it stays counted, and the one that spends the budget is noted in
 * the owner's security log.
 */
export async function spendCode<T>(
  deps: Deps,
  userId: string,
  factor: CodeFactor,
  code: string,
  meta: RequestMeta,
  apply: (tx: Store, now: number) => Promise<T>,
): Promise<T | null> {
  const now = deps.clock.now()
  const budget = await reserveCodeAttempt(deps, userId, now)
  const claim = codeClaim(deps, userId, factor, code, meta, now)
  const applied =
    claim === null
      ? null
      : await deps.storage.transaction(async (tx) => {
          if (!(await claim(tx))) return null
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

/** How a code that may be right is used up in the transaction (false: it was already), or null when it cannot be right. */
function codeClaim(deps: Deps, userId: string, factor: CodeFactor, code: string, meta: RequestMeta, now: number): ((tx: Store) => Promise<boolean>) | null {
  if (isTotpCode(code)) {
    const step = factor.secretBox === null ? null : matchTotpStep(deps.totpSecrets.open(factor.secretBox, totpAssociatedData(userId)), code, now)
    return step === null ? null : (tx) => tx.claimTotpStep(userId, step, now)
  }
  const codeHash = factor.recoveryCodes ? recoveryCodeHash(deps.recoveryCodeKey, userId, code) : null
  if (codeHash === null) return null
  return async (tx) => {
    if (!(await tx.useRecoveryCode(userId, codeHash))) return false
    await tx.recordSecurityEvent(userId, { kind: 'recovery_code_used', at: now, until: null, ...meta })
    return true
  }
}

/**
 * pending -> active. With `withRecoveryCodes` (the client asked for them: Prefer
 * return=representation), the factor's first recovery codes are made in the same transaction
 * and answered; otherwise none are made.
 */
export async function confirmTotpEnrollment(deps: Deps, caller: Caller, code: string, meta: RequestMeta, withRecoveryCodes: boolean): Promise<string[] | null> {
  const factor = await deps.storage.findSecondFactor(caller.userId)
  ensureAllowed(confirmEnrollment(factor?.status ?? 'none'))
  if (factor === undefined) return null
  const issued = withRecoveryCodes ? newRecoveryCodes(deps.recoveryCodeKey, caller.userId) : null
  // A recovery code never confirms: the factor has none before it is active.
  const confirmed = await spendCode(deps, caller.userId, { secretBox: factor.secretBox, recoveryCodes: false }, code, meta, async (tx, now) => {
    // A start that replaced the pending secret meanwhile makes this a code of the old secret.
    if (!(await tx.activateSecondFactor(caller.userId, factor.secretBox, now))) throw invalidCode()
    if (issued !== null) await tx.replaceRecoveryCodes(caller.userId, issued.hashes, now)
    return true
  })
  if (confirmed === null) throw invalidCode()
  return issued?.codes ?? null
}

export async function disableTotp(deps: Deps, caller: Caller, code: string, meta: RequestMeta): Promise<void> {
  const factor = await deps.storage.findSecondFactor(caller.userId)
  ensureAllowed(disableSecondFactor(factor?.status ?? 'none'))
  const disabled = await spendCode(deps, caller.userId, activeFactorCodes(factor), code, meta, async (tx) => {
    // The factor's recovery codes go with it.
    if (!(await tx.removeActiveSecondFactor(caller.userId))) ensureAllowed('error.totp.not_enrolled')
    return true
  })
  if (disabled === null) throw invalidCode()
}

export interface SecondFactorStatus {
  readonly status: SecondFactorState
  readonly recoveryCodesRemaining: number
}

export async function secondFactorStatus(store: SecondFactorStore, userId: string): Promise<SecondFactorStatus> {
  const [factor, recoveryCodesRemaining] = await Promise.all([store.findSecondFactor(userId), store.countRecoveryCodes(userId)])
  return { status: factor?.status ?? 'none', recoveryCodesRemaining }
}

/**
 * A new set of recovery codes for the active factor, replacing every earlier one: needs a
 * recent password proof (the freshness gate) and a code (a TOTP code, or a recovery code).
 */
export async function regenerateRecoveryCodes(deps: Deps, caller: Caller, code: string, meta: RequestMeta): Promise<string[]> {
  if (!isFresh(caller.authenticatedAt, deps.clock.now(), deps.config.freshnessWindowS)) {
    throw new AppError('error.auth.reauthentication_required', 'Prove the password again (reauthenticate) before making new recovery codes')
  }
  const factor = await deps.storage.findSecondFactor(caller.userId)
  ensureAllowed(renewRecoveryCodes(factor?.status ?? 'none'))
  const issued = newRecoveryCodes(deps.recoveryCodeKey, caller.userId)
  const replaced = await spendCode(deps, caller.userId, activeFactorCodes(factor), code, meta, async (tx, now) => {
    if (!(await tx.replaceRecoveryCodes(caller.userId, issued.hashes, now))) ensureAllowed('error.totp.not_enrolled')
    return true
  })
  if (replaced === null) throw invalidCode()
  return issued.codes
}
