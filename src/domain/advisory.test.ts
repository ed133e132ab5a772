// Advisory identifiers are dropped, never refused, when unusable (API.md section 1).
import { describe, expect, it } from 'vitest'
import { advisoryCohortHash, advisoryDeviceId } from './advisory.ts'

describe('advisoryCohortHash', () => {
  it.each([
    ['c', 'c'],
    ['x'.repeat(128), 'x'.repeat(128)],
    ['x'.repeat(129), null],
    ['', null],
    ['a\u0000b', null],
    [42, null],
    [null, null],
    [undefined, null],
    [{ a: 1 }, null],
  ])('%j -> %j', (value, expected) => {
    expect(advisoryCohortHash(value)).toBe(expected)
  })
})

describe('advisoryDeviceId', () => {
  it.each([
    ['0B8F5A8E-1C2D-4E5F-8A9B-0C1D2E3F4A5B', '0b8f5a8e-1c2d-4e5f-8a9b-0c1d2e3f4a5b'],
    ['0b8f5a8e-1c2d-4e5f-8a9b-0c1d2e3f4a5b', '0b8f5a8e-1c2d-4e5f-8a9b-0c1d2e3f4a5b'],
    ['0b8f5a8e1c2d4e5f8a9b0c1d2e3f4a5b', null],
    ['not-a-uuid', null],
    [7, null],
    [null, null],
  ])('%j -> %j', (value, expected) => {
    expect(advisoryDeviceId(value)).toBe(expected)
  })
})
