// A second-factor prompt takes the authenticator's six digits (with the space apps show) or a
// recovery code as typed, and refuses anything else before it reaches the server.
import { describe, expect, it } from 'vitest'
import { typedSecondFactorCode } from './second-factor-code.ts'

describe('typedSecondFactorCode', () => {
  it.each([
    ['123456', '123456'],
    [' 123 456 ', '123456'],
    ['a7k2m-9xq4t', 'a7k2m-9xq4t'],
    ['a7k2m 9xq4t', 'a7k2m 9xq4t'],
    [' A7K2M9XQ4T\n', 'A7K2M9XQ4T'],
    ['1234567890', '1234567890'],
  ])('sends %j as %j', (typed, sent) => {
    expect(typedSecondFactorCode(typed)).toBe(sent)
  })

  it.each(['', '12345', '1234567', '12 34 56', '123-456', 'a7k2m-9xq4', 'a7k2m--9xq4t', 'a7k2m  9xq4t', 'a7k2m-9xq4t!'])('refuses %j', (typed) => {
    expect(typedSecondFactorCode(typed)).toBeNull()
  })
})
