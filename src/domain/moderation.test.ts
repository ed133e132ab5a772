// A moderation action is refused (409) when it would not change the state.
import { describe, expect, it } from 'vitest'
import { moderationAllowed, type ModerationAction } from './moderation.ts'

const none = { suspended: false, secondFactor: false, takenDown: false, legalHold: false }
const all = { suspended: true, secondFactor: true, takenDown: true, legalHold: true }

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
})
