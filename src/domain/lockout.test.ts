// While a lock is ahead of now the account is locked, with Retry-After in whole seconds.
import { describe, expect, it } from 'vitest'
import { lockRetryAfterS } from './lockout.ts'

describe('lockRetryAfterS', () => {
  const now = 1_800_000_000_000
  it.each([
    ['never locked', null, null],
    ['lock ended', now - 1, null],
    ['lock ends now', now, null],
    ['1 ms left', now + 1, 1],
    ['900 s left', now + 900_000, 900],
    ['899.5 s left', now + 899_500, 900],
  ])('%s -> %j', (_case, lockedUntil, expected) => {
    expect(lockRetryAfterS(lockedUntil, now)).toBe(expected)
  })
})
