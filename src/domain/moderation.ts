// Moderation standing and asset measures (SPEC.md "Moderation standing", API.md section 8).

export type ModerationAction = 'suspend' | 'reinstate' | 'reset_second_factor' | 'take_down' | 'restore' | 'legal_hold' | 'lift_hold'

export interface ModerationFacts {
  readonly suspended: boolean
  /** The account has a confirmed second factor. */
  readonly secondFactor: boolean
  /** The account is deleted: nothing about its standing changes any more (its kept assets can still be acted on). */
  readonly deleted: boolean
  readonly takenDown: boolean
  readonly legalHold: boolean
}

/** Whether the action changes anything; repeating a state (or undoing one that is not in force) is a conflict (409). */
export function moderationAllowed(action: ModerationAction, facts: ModerationFacts): boolean {
  switch (action) {
    case 'suspend':
      return !facts.deleted && !facts.suspended
    case 'reinstate':
      return !facts.deleted && facts.suspended
    case 'reset_second_factor':
      return !facts.deleted && facts.secondFactor
    case 'take_down':
      return !facts.takenDown
    case 'restore':
      return facts.takenDown
    case 'legal_hold':
      return !facts.legalHold
    case 'lift_hold':
      return facts.legalHold
  }
}

/** The event an action records. */
export const eventOf = {
  suspend: 'suspended',
  reinstate: 'reinstated',
  reset_second_factor: 'second_factor_reset',
  take_down: 'taken_down',
  restore: 'restored',
  legal_hold: 'legal_hold',
  lift_hold: 'hold_lifted',
} as const satisfies Record<ModerationAction, string>
