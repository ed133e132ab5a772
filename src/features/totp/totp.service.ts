// The TOTP second factor: start, confirm, disable (SPEC.md "Second factor" table).
import { matchTotpStep, newTotpSecret, provisioningUri } from '../../crypto/totp.ts'
import type { Deps } from '../../deps.ts'
import { confirmEnrollment, disableSecondFactor, startEnrollment, type SecondFactorRefusal, type Transition } from '../../domain/second-factor.ts'
import { AppError } from '../../errors.ts'
import type { Caller } from '../context.ts'
import type { SecondFactor, Store } from '../../storage/port.ts'

/** Binds a sealed TOTP secret to its account: a box moved onto another row does not open. */
export function totpAssociatedData(userId: string): string {
  return `coffer/totp-secret/v1:${userId}`
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
 * Checks a code against the factor's secret, enters its step in the replay ledger and runs
 * `apply`, all in one transaction: a used step or a failed `apply` leaves nothing behind.
 */
async function spendCode(deps: Deps, userId: string, factor: SecondFactor, code: string, apply: (tx: Store, now: number) => Promise<void>): Promise<void> {
  const now = deps.clock.now()
  const step = matchTotpStep(deps.totpSecrets.open(factor.secretBox, totpAssociatedData(userId)), code, now)
  if (step === null) throw invalidCode()
  await deps.storage.transaction(async (tx) => {
    if (!(await tx.claimTotpStep(userId, step, now))) throw invalidCode()
    await apply(tx, now)
  })
}

export async function confirmTotpEnrollment(deps: Deps, caller: Caller, code: string): Promise<void> {
  const factor = await deps.storage.findSecondFactor(caller.userId)
  ensureAllowed(confirmEnrollment(factor?.status ?? 'none'))
  if (factor === undefined) return
  await spendCode(deps, caller.userId, factor, code, async (tx, now) => {
    // A start that replaced the pending secret meanwhile makes this a code of the old secret.
    if (!(await tx.activateSecondFactor(caller.userId, factor.secretBox, now))) throw invalidCode()
  })
}

export async function disableTotp(deps: Deps, caller: Caller, code: string): Promise<void> {
  const factor = await deps.storage.findSecondFactor(caller.userId)
  ensureAllowed(disableSecondFactor(factor?.status ?? 'none'))
  if (factor === undefined) return
  await spendCode(deps, caller.userId, factor, code, async (tx) => {
    if (!(await tx.removeActiveSecondFactor(caller.userId))) ensureAllowed('error.totp.not_enrolled')
  })
}
