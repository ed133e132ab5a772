// Redeem reads either spelling, and the throttle blocks an address from its REDEEM_MAX_FAILURES-th
// refusal until its window ends.
import { describe, expect, it } from 'vitest'
import { codeSpelling, redeemBlockedForS } from './enrollment.ts'

describe('codeSpelling', () => {
  it.each([
    ['0123456789', '0123456789'],
    ['012 345 6789', '0123456789'],
    ['012-345-6789', '0123456789'],
    [' 01234-56789 ', '0123456789'],
    ['012345678', '012345678'],
    ['01234567890', '01234567890'],
    ['abcDEF_-xyz', 'abcDEF_-xyz'],
  ])('%j -> %j', (code, spelling) => {
    expect(codeSpelling(code)).toBe(spelling)
  })
})

describe('redeemBlockedForS', () => {
  const now = 1_800_000_000_000
  it.each([
    ['no failures recorded', undefined, null],
    ['9 of 10 failures', { windowStartedAt: now - 1000, failures: 9 }, null],
    ['10 failures, 599 s left', { windowStartedAt: now - 1000, failures: 10 }, 599],
    ['10 failures, window ended', { windowStartedAt: now - 600_000, failures: 10 }, null],
    ['12 failures, 1 ms left', { windowStartedAt: now - 599_999, failures: 12 }, 1],
  ])('%s -> %j', (_case, throttle, expected) => {
    expect(redeemBlockedForS(throttle, now, 10, 600)).toBe(expected)
  })
})
