// Prefer (RFC 7240): return=representation is read however a client spells it, and only the
// first `return` preference counts.
import { describe, expect, it } from 'vitest'
import { prefersRepresentation } from './prefer.ts'

describe('prefersRepresentation', () => {
  it.each<[string | string[] | undefined, boolean]>([
    [undefined, false],
    ['return=representation', true],
    ['Return=Representation', true],
    ['return="representation"', true],
    [' return = representation ', true],
    ['respond-async, return=representation', true],
    ['return=representation; foo=bar', true],
    ['wait=10, RETURN=representation', true],
    [['respond-async', 'return=representation'], true],
    ['return=minimal', false],
    ['return=minimal, return=representation', false],
    ['return=representation, return=minimal', true],
    ['return', false],
    ['representation', false],
    ['return=representations', false],
    ['', false],
  ])('%j -> %s', (prefer, expected) => {
    expect(prefersRepresentation(prefer === undefined ? {} : { prefer })).toBe(expected)
  })
})
