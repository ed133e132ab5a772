// A budget blocks from its maxFailures-th counted attempt until its window ends, in whole seconds rounded up.
import { describe, expect, it } from 'vitest'
import { budgetBlockedForS } from './attempt-budget.ts'

describe('budgetBlockedForS', () => {
  const now = 1_800_000_000_000
  it.each([
    ['nothing counted', undefined, null],
    ['9 of 10 counted', { windowEndsAt: now + 599_000, failures: 9 }, null],
    ['10 counted, 599 s left', { windowEndsAt: now + 599_000, failures: 10 }, 599],
    ['10 counted, window ends now', { windowEndsAt: now, failures: 10 }, null],
    ['10 counted, window ended', { windowEndsAt: now - 1, failures: 10 }, null],
    ['12 counted, 1 ms left', { windowEndsAt: now + 1, failures: 12 }, 1],
    ['10 counted, 1.5 s left', { windowEndsAt: now + 1_500, failures: 10 }, 2],
  ])('%s -> %j', (_case, budget, expected) => {
    expect(budgetBlockedForS(budget, now, 10)).toBe(expected)
  })
})
