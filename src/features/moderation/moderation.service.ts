// The moderation record (SPEC.md "Moderation", API.md section 8): operators suspend and
// reinstate accounts, reset their second factor, take assets down (and restore them) and put
// them under legal hold; each action is an event in the owner's record, which the owner can read.
import type { Static } from 'typebox'
import { timestamp } from '../../contract/common.ts'
import type { ModerationRecordResponse } from '../../contract/custody.ts'
import type { Deps } from '../../deps.ts'
import { eventOf, moderationAllowed, type ModerationAction, type ModerationFacts } from '../../domain/moderation.ts'
import { AppError } from '../../errors.ts'
import type { Store } from '../../storage/port.ts'
import type { Account, AccountStore } from '../../storage/port/accounts.ts'
import type { LoggedModerationEvent, ModerationEvent, ModerationStore, OperatorActor } from '../../storage/port/moderation.ts'
import type { Caller } from '../context.ts'
import { secondFactorStatus } from '../totp/totp.service.ts'

export interface ModerationRecord {
  readonly suspendedSince: number | null
  readonly events: readonly ModerationEvent[]
}

/** ModerationRecordResponse: what the owner, the operator API and the CLI show. */
export function moderationRecordView(record: ModerationRecord): Static<typeof ModerationRecordResponse> {
  return {
    standing: record.suspendedSince === null ? 'active' : 'suspended',
    ...(record.suspendedSince === null ? {} : { suspended_since: timestamp(record.suspendedSince) }),
    events: record.events.map((event) => ({
      action: event.action,
      ...(event.assetId === null ? {} : { asset_id: event.assetId }),
      at: timestamp(event.at),
      ...(event.reason === null ? {} : { reason: event.reason }),
    })),
  }
}

/** Content writes (API.md section 3) are refused to a suspended account. */
export function ensureNotSuspended(caller: Caller): void {
  if (caller.account.suspendedAt !== null) {
    throw new AppError('error.account.suspended', 'This account is suspended: it can sign in and read, but not write content')
  }
}

/** The record of an account (404 when there is none). */
export async function recordOf(store: AccountStore & ModerationStore, userId: string): Promise<ModerationRecord> {
  const account = await store.findAccount(userId)
  if (account === undefined) throw new AppError('error.not_found', 'No such account')
  return recordOfAccount(store, account)
}

/** The record of an account already read. */
export async function recordOfAccount(store: ModerationStore, account: Account): Promise<ModerationRecord> {
  return { suspendedSince: account.suspendedAt, events: await store.listModerationEvents(account.userId) }
}

export function ownModerationRecord(deps: Deps, caller: Caller): Promise<ModerationRecord> {
  return recordOf(deps.storage, caller.userId)
}

export type ModerationTarget = { readonly userId: string } | { readonly assetId: string }

/** Who the action concerns, and the facts it is checked against (404 when there is no such target). */
async function targetOf(store: Store, target: ModerationTarget): Promise<{ userId: string; assetId: string | null; facts: ModerationFacts }> {
  if ('userId' in target) {
    const account = await store.findAccount(target.userId)
    if (account === undefined) throw new AppError('error.not_found', 'No such account')
    const secondFactor = (await secondFactorStatus(store, account.userId)).status === 'active'
    const facts = { suspended: account.suspendedAt !== null, secondFactor, deleted: account.deletedAt !== null, takenDown: false, legalHold: false }
    return { userId: account.userId, assetId: null, facts }
  }
  const asset = await store.findModeratedAsset(target.assetId)
  if (asset === undefined) throw new AppError('error.not_found', 'No such asset')
  return {
    userId: asset.ownerId,
    assetId: asset.assetId,
    facts: { suspended: false, secondFactor: false, deleted: false, takenDown: asset.takenDownAt !== null, legalHold: asset.legalHoldAt !== null },
  }
}

/**
 * Applies an operator action and answers the affected account's record. Once committed, the
 * action is also one line of the process's log (the audit line: who, what, on which account or
 * asset, why), so that an operator's log collection holds it beside the requests.
 */
export async function moderate(
  deps: Deps,
  action: ModerationAction,
  target: ModerationTarget,
  reason: string | null,
  actor: OperatorActor,
  log: AuditLog = deps.log,
): Promise<ModerationRecord> {
  const now = deps.clock.now()
  const { record, userId, assetId } = await deps.storage.transaction(async (tx) => {
    const { userId, assetId } = await targetOf(tx, target)
    // The event goes in first: appending writes the account's row, so the actions on one
    // account (and on its assets) queue here, and the facts read next are those the previous
    // action committed. Two identical actions at once therefore give one change and one 409,
    // never two events (the refused one's append rolls back with it).
    await tx.appendModerationEvent(userId, { action: eventOf[action], assetId, reason, at: now, actor })
    const { facts } = await targetOf(tx, target)
    if (!moderationAllowed(action, facts)) throw new AppError('error.moderation.state_conflict', `The ${action.replaceAll('_', ' ')} would change nothing`)
    switch (action) {
      case 'suspend':
      case 'reinstate':
        await tx.setSuspended(userId, action === 'suspend' ? now : null)
        break
      case 'reset_second_factor':
        // Whoever asked may not be the owner: every session ends, and the next sign-in needs the
        // password alone. The factor's recovery codes go with it.
        await tx.removeActiveSecondFactor(userId)
        await tx.closeAllSessions(userId, now)
        break
      case 'take_down':
      case 'restore':
        await tx.setTakenDown(assetId ?? '', action === 'take_down' ? now : null)
        break
      case 'legal_hold':
      case 'lift_hold':
        await tx.setLegalHold(assetId ?? '', action === 'legal_hold' ? now : null)
        break
    }
    return { record: await recordOf(tx, userId), userId, assetId }
  })
  auditOperatorAction(log, { actor, action: eventOf[action], userId, assetId, reason })
  return record
}

/** Where an audit line goes: the request's log over HTTP (so it carries the request's id), else the process's. */
export type AuditLog = Pick<Deps['log'], 'info'>

/** The audit line of an operator action that took effect (docs/operations.md, "The operator's log"). */
export function auditOperatorAction(
  log: AuditLog,
  entry: { actor: OperatorActor; action: string; userId: string; assetId: string | null; reason: string | null },
): void {
  log.info({ audit: 'operator_action', ...entry }, 'operator action')
}

/** The operator's log: the latest events of every account (or of one), oldest of them first. */
export function operatorLog(deps: Deps, options: { readonly userId?: string; readonly limit: number }): Promise<LoggedModerationEvent[]> {
  return deps.storage.operatorLog(options)
}
