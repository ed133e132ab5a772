// Redeem reads either spelling: ten digits with any spaces and hyphens, or the full code as sent.
import { describe, expect, it } from 'vitest'
import { codeSpelling } from './enrollment.ts'

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
