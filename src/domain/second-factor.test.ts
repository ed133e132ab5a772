// SPEC's "Second factor" table: every state and trigger gives the listed outcome.
import { describe, expect, it } from 'vitest'
import { afterWrongCode, confirmEnrollment, disableSecondFactor, renewRecoveryCodes, startEnrollment, type SecondFactorState } from './second-factor.ts'

describe('second-factor transitions', () => {
  it.each<[SecondFactorState, string, string]>([
    ['none', 'start', 'allowed'],
    ['pending', 'start', 'allowed'],
    ['active', 'start', 'error.totp.already_active'],
    ['pending', 'confirm', 'allowed'],
    ['none', 'confirm', 'error.totp.nothing_pending'],
    ['active', 'confirm', 'error.totp.nothing_pending'],
    ['active', 'disable', 'allowed'],
    ['none', 'disable', 'error.totp.not_enrolled'],
    ['pending', 'disable', 'error.totp.not_enrolled'],
    ['active', 'regenerate recovery codes', 'allowed'],
    ['none', 'regenerate recovery codes', 'error.totp.not_enrolled'],
    ['pending', 'regenerate recovery codes', 'error.totp.not_enrolled'],
  ])('%s + %s -> %s', (state, trigger, outcome) => {
    const transition = { start: startEnrollment, confirm: confirmEnrollment, disable: disableSecondFactor, 'regenerate recovery codes': renewRecoveryCodes }[
      trigger
    ]
    expect(transition?.(state)).toBe(outcome)
  })
})

describe('afterWrongCode', () => {
  it.each([
    [1, 'retry'],
    [4, 'retry'],
    [5, 'burn'],
    [6, 'burn'],
  ] as const)('failure %i of 5 -> %s', (failures, outcome) => {
    expect(afterWrongCode(failures, 5)).toBe(outcome)
  })
})
