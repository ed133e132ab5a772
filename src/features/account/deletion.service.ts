// Deleting an account (issue 17, docs/decisions/0026): by its owner (a fresh password proof, and
// a code when it has a second factor) or by an operator. One transaction makes the account a
// tombstone and ends everything that lets anyone act as it; the purge then removes its albums,
// assets and upload sessions in batches, and its blob rows, leaving the files to garbage
// collection. What a legal hold or a retention floor keeps stays until that lapses. A purge cut
// off (a crash, a kept asset) is finished by a later maintenance pass from the purge queue.
import type { Deps } from '../../deps.ts'
import { isFresh } from '../../domain/session.ts'
import { AppError } from '../../errors.ts'
import type { Store } from '../../storage/port.ts'
import type { AccountDeletionStore } from '../../storage/port/account-deletion.ts'
import type { EventActor, ModerationStore, OperatorActor } from '../../storage/port/moderation.ts'
import type { Caller, RequestMeta } from '../context.ts'
import { auditOperatorAction, recordOf, type AuditLog, type ModerationRecord } from '../moderation/moderation.service.ts'
import { activeFactorCodes, spendCode } from '../totp/totp.service.ts'

/** Assets removed per transaction, so that a large account does not hold the writer for long. */
const PURGE_BATCH = 500
/** Purge-queue entries read per round trip by the maintenance pass. */
const PURGE_PAGE = 100

/** The deletion's one transaction; false when the account was deleted already (nothing recorded twice). */
async function markDeleted(
  tx: AccountDeletionStore & ModerationStore,
  userId: string,
  now: number,
  by: { readonly actor: EventActor; readonly reason: string | null },
): Promise<boolean> {
  if (!(await tx.markAccountDeleted(userId, now))) return false
  await tx.appendModerationEvent(userId, { action: 'account_deleted', assetId: null, reason: by.reason, at: now, actor: by.actor })
  return true
}

/**
 * Removes what the account holds, batch by batch; true once nothing but its tombstone and record
 * remains. Safe to run again, and on several instances at once.
 */
export async function purgeAccount(deps: Deps, userId: string): Promise<boolean> {
  while ((await deps.storage.transaction((tx) => tx.purgeAssets(userId, deps.clock.now(), PURGE_BATCH))) === PURGE_BATCH);
  return deps.storage.transaction((tx) => tx.finishAccountPurge(userId, deps.clock.now()))
}

/** The maintenance pass's part: every queued purge, once. Returns how many finished. */
export async function purgeDeletedAccounts(deps: Deps): Promise<number> {
  let finished = 0
  for (let after = ''; ; ) {
    const pending = await deps.storage.pendingAccountPurges(after, PURGE_PAGE)
    for (const userId of pending) if (await purgeAccount(deps, userId)) finished++
    if (pending.length < PURGE_PAGE) return finished
    after = pending.at(-1) ?? after
  }
}

/**
 * The purge right after a deletion committed. Its failure is logged, not answered: the deletion
 * stands, and the next maintenance pass finishes the purge.
 */
async function purgeAfterDeletion(deps: Deps, userId: string): Promise<void> {
  try {
    await purgeAccount(deps, userId)
  } catch (error) {
    deps.log.error({ err: error, userId }, 'the purge of a deleted account failed; the maintenance pass will finish it')
  }
}

/** The owner deletes their account: 403 unless the password was proved recently; a second factor also needs a code. */
export async function deleteOwnAccount(deps: Deps, caller: Caller, totpCode: string | undefined, meta: RequestMeta, log: AuditLog = deps.log): Promise<void> {
  if (!isFresh(caller.authenticatedAt, deps.clock.now(), deps.config.freshnessWindowS)) {
    throw new AppError('error.auth.reauthentication_required', 'Prove the password again (reauthenticate) before deleting the account')
  }
  const erase = (tx: Store, now: number) => markDeleted(tx, caller.userId, now, { actor: 'owner', reason: null })
  const factor = await deps.storage.findSecondFactor(caller.userId)
  if (factor?.status === 'active') {
    if (totpCode === undefined)
      throw new AppError('error.auth.second_factor_required', 'This account has a second factor: send a code from it (totp_code) with the deletion')
    if ((await spendCode(deps, caller.userId, activeFactorCodes(factor), totpCode, meta, erase)) === null) {
      throw new AppError('error.totp.invalid_code', 'The code is wrong, expired or already used')
    }
  } else {
    await deps.storage.transaction((tx) => erase(tx, deps.clock.now()))
  }
  log.info({ audit: 'account_deleted', actor: 'owner', userId: caller.userId }, 'account deleted by its owner')
  await purgeAfterDeletion(deps, caller.userId)
}

/**
 * An operator deletes an account (404 when there is none). Idempotent: an account deleted
 * already answers its record again, with nothing recorded twice, and its purge is run again.
 */
export async function deleteAccountAsOperator(
  deps: Deps,
  userId: string,
  reason: string | null,
  actor: OperatorActor,
  log: AuditLog = deps.log,
): Promise<ModerationRecord> {
  const now = deps.clock.now()
  const deleted = await deps.storage.transaction(async (tx) => {
    if ((await tx.findAccount(userId)) === undefined) throw new AppError('error.not_found', 'No such account')
    return markDeleted(tx, userId, now, { actor, reason })
  })
  if (deleted) auditOperatorAction(log, { actor, action: 'account_deleted', userId, assetId: null, reason })
  await purgeAfterDeletion(deps, userId)
  return recordOf(deps.storage, userId)
}
