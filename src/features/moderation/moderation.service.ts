// The moderation record (SPEC.md "Moderation", API.md section 8): operators suspend and
// reinstate accounts, take assets down and put them under legal hold; each action is an
// event in the owner's record, which the owner can read.
import type { Deps } from '../../deps.ts'
import { eventOf, moderationAllowed, type ModerationAction } from '../../domain/moderation.ts'
import { AppError } from '../../errors.ts'
import type { ModerationEvent, Store } from '../../storage/port.ts'
import type { Caller } from '../context.ts'

export interface ModerationRecord {
  readonly suspendedSince: number | null
  readonly events: readonly ModerationEvent[]
}

/** Content writes (API.md section 3) are refused to a suspended account. */
export function ensureNotSuspended(caller: Caller): void {
  if (caller.account.suspendedAt !== null) {
    throw new AppError('error.account.suspended', 'This account is suspended: it can sign in and read, but not write content')
  }
}

async function recordOf(store: Store, userId: string): Promise<ModerationRecord> {
  const account = await store.findAccount(userId)
  if (account === undefined) throw new AppError('error.not_found', 'No such account')
  return { suspendedSince: account.suspendedAt, events: await store.listModerationEvents(userId) }
}

export function ownModerationRecord(deps: Deps, caller: Caller): Promise<ModerationRecord> {
  return recordOf(deps.storage, caller.userId)
}

export type ModerationTarget = { readonly userId: string } | { readonly assetId: string }

/** Applies an operator action and answers the affected account's record. */
export async function moderate(deps: Deps, action: ModerationAction, target: ModerationTarget, reason: string | null): Promise<ModerationRecord> {
  const now = deps.clock.now()
  return deps.storage.transaction(async (tx) => {
    let userId: string
    let assetId: string | null = null
    let facts
    if ('userId' in target) {
      const account = await tx.findAccount(target.userId)
      if (account === undefined) throw new AppError('error.not_found', 'No such account')
      userId = account.userId
      facts = { suspended: account.suspendedAt !== null, takenDown: false, legalHold: false }
    } else {
      const asset = await tx.findModeratedAsset(target.assetId)
      if (asset === undefined) throw new AppError('error.not_found', 'No such asset')
      userId = asset.ownerId
      assetId = asset.assetId
      facts = { suspended: false, takenDown: asset.takenDownAt !== null, legalHold: asset.legalHoldAt !== null }
    }
    if (!moderationAllowed(action, facts)) throw new AppError('error.moderation.state_conflict', `The ${action.replace('_', ' ')} would change nothing`)
    switch (action) {
      case 'suspend':
      case 'reinstate':
        await tx.setSuspended(userId, action === 'suspend' ? now : null)
        break
      case 'take_down':
        await tx.setTakenDown(assetId ?? '', now)
        break
      case 'legal_hold':
      case 'lift_hold':
        await tx.setLegalHold(assetId ?? '', action === 'legal_hold' ? now : null)
        break
    }
    await tx.appendModerationEvent(userId, { action: eventOf[action], assetId, reason, at: now })
    return recordOf(tx, userId)
  })
}
