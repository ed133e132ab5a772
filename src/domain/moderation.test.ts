// A moderation action is refused (409) when it would not change the state; a deleted account's
// standing no longer changes, while its kept assets can still be acted on.
import { describe, expect, it } from 'vitest'
import { moderationAllowed, type ModerationAction } from './moderation.ts'

const none = { suspended: false, secondFactor: false, deleted: false, takenDown: false, legalHold: false }
const all = { suspended: true, secondFactor: true, deleted: false, takenDown: true, legalHold: true }

describe('moderationAllowed', () => {
  it.each<[ModerationAction, boolean, boolean]>([
    ['suspend', true, false],
    ['reinstate', false, true],
    ['reset_second_factor', false, true],
    ['take_down', true, false],
    ['restore', false, true],
    ['legal_hold', true, false],
    ['lift_hold', false, true],
  ])('%s: from nothing %s, from everything %s', (action, fromNone, fromAll) => {
    expect(moderationAllowed(action, none)).toBe(fromNone)
    expect(moderationAllowed(action, all)).toBe(fromAll)
  })

  it.each<[ModerationAction, boolean]>([
    ['suspend', false],
    ['reinstate', false],
    ['reset_second_factor', false],
    ['take_down', true],
    ['restore', true],
    ['legal_hold', true],
    ['lift_hold', true],
  ])('%s on a deleted account: %s', (action, allowed) => {
    const deleted = { ...none, deleted: true }
    // Each from the state in which it would otherwise change something.
    expect(
      moderationAllowed(action, {
        ...deleted,
        suspended: action === 'reinstate',
        secondFactor: true,
        takenDown: action === 'restore',
        legalHold: action === 'lift_hold',
      }),
    ).toBe(allowed)
  })
})
