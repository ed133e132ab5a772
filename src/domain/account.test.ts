// Email and display-name rules of API.md sections 3 and 5.
import { describe, expect, it } from 'vitest'
import { normalizeDisplayName, normalizeEmail } from './account.ts'

describe('normalizeEmail', () => {
  it.each([
    ['  Alice@Example.com ', { email: 'Alice@Example.com', emailKey: 'alice@example.com' }],
    ['a@b', { email: 'a@b', emailKey: 'a@b' }],
    ['no-at-sign', null],
    ['a@b@c', null],
    ['@b', null],
    ['a@', null],
    ['', null],
    [`${'x'.repeat(253)}@`, null],
    [`${'x'.repeat(252)}@y`, { email: `${'x'.repeat(252)}@y`, emailKey: `${'x'.repeat(252)}@y` }],
    [`${'x'.repeat(253)}@y`, null],
  ])('%j -> %j', (raw, expected) => {
    expect(normalizeEmail(raw)).toEqual(expected)
  })
})

describe('normalizeDisplayName', () => {
  it.each([
    ['  Ada  ', 'Ada'],
    ['   ', null],
    ['', null],
    ['x'.repeat(100), 'x'.repeat(100)],
    ['x'.repeat(101), null],
    ['😀'.repeat(100), '😀'.repeat(100)],
  ])('%j -> %j', (raw, expected) => {
    expect(normalizeDisplayName(raw)).toBe(expected)
  })
})
