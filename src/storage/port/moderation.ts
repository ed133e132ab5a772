// Moderation: suspensions, take-downs, legal holds and every account's record of them.
// Part of the storage port (../port.ts); storage/kysely/moderation.ts implements it.

export interface ModerationStore {
  findModeratedAsset(assetId: string): Promise<ModeratedAsset | undefined>
  setSuspended(userId: string, suspendedAt: number | null): Promise<void>
  setTakenDown(assetId: string, takenDownAt: number | null): Promise<void>
  setLegalHold(assetId: string, legalHoldAt: number | null): Promise<void>
  /** Appends to the account's record, after every earlier event. */
  appendModerationEvent(userId: string, event: ModerationEvent): Promise<void>
  /** The account's record, oldest first. */
  listModerationEvents(userId: string): Promise<ModerationEvent[]>
  /** The latest `limit` events of every account (or of one), oldest of them first. */
  operatorLog(options: { readonly userId?: string; readonly limit: number }): Promise<LoggedModerationEvent[]>
}

/** Who took an operator action: the operator API (ADMIN_TOKEN) or the `coffer` command on the server's machine. */
export type OperatorActor = 'admin_token' | 'cli'

/** Who recorded an event: an operator, or the owner deleting their own account. */
export type EventActor = OperatorActor | 'owner'

export type ModerationEventAction =
  | 'suspended'
  | 'reinstated'
  | 'second_factor_reset'
  | 'account_deleted'
  | 'taken_down'
  | 'restored'
  | 'legal_hold'
  | 'hold_lifted'

export interface ModerationEvent {
  readonly action: ModerationEventAction
  readonly assetId: string | null
  readonly reason: string | null
  readonly at: number
  /** Who acted; null for events recorded before actors were (migration 0013). */
  readonly actor: EventActor | null
}

/** An event as the operator's log lists it: whose record it is in, and where. */
export interface LoggedModerationEvent extends ModerationEvent {
  readonly userId: string
  readonly seq: number
}

export interface ModeratedAsset {
  readonly assetId: string
  readonly ownerId: string
  readonly takenDownAt: number | null
  readonly legalHoldAt: number | null
}
