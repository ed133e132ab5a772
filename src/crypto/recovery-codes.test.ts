// Recovery codes are ten distinct xxxxx-xxxxx codes of lowercase base32 without look-alikes; a
// code typed any way a person types it has the stored hash, anything else has none, and the hash
// needs the server's key and belongs to one account.
import { createHmac, randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { newRecoveryCodes, RECOVERY_CODE_COUNT, recoveryCodeHash } from './recovery-codes.ts'

const key = randomBytes(32)
const userId = 'b1c2d3e4-0000-4000-8000-000000000001'

describe('newRecoveryCodes', () => {
  it('makes ten distinct codes shaped xxxxx-xxxxx from the alphabet without i, l, o and u', () => {
    const { codes } = newRecoveryCodes(key, userId)
    expect(codes).toHaveLength(RECOVERY_CODE_COUNT)
    expect(RECOVERY_CODE_COUNT).toBe(10)
    expect(new Set(codes).size).toBe(10)
    for (const code of codes) expect(code).toMatch(/^[0-9a-hjkmnp-tv-z]{5}-[0-9a-hjkmnp-tv-z]{5}$/)
  })

  it('draws every character of the alphabet, and a new set each time', () => {
    const seen = new Set<string>()
    const sets = Array.from({ length: 20 }, () => newRecoveryCodes(key, userId).codes)
    for (const code of sets.flat()) for (const c of code.replace('-', '')) seen.add(c)
    expect([...seen].sort().join('')).toBe('0123456789abcdefghjkmnpqrstvwxyz')
    expect(new Set(sets.flat()).size).toBe(20 * 10)
  })

  it('answers each code’s hash, the HMAC-SHA-256 under the key of the account and the code without its hyphen', () => {
    const { codes, hashes } = newRecoveryCodes(key, userId)
    expect(hashes).toHaveLength(10)
    codes.forEach((code, i) => {
      const expected = createHmac('sha256', key)
        .update(`${userId}\0${code.replace('-', '')}`)
        .digest('hex')
      expect(hashes[i]).toBe(expected)
      expect(recoveryCodeHash(key, userId, code)).toBe(expected)
    })
  })
})

describe('recoveryCodeHash', () => {
  const code = 'a7k2m-9xq4t'
  const stored = recoveryCodeHash(key, userId, code)

  it.each(['a7k2m-9xq4t', 'A7K2M-9XQ4T', 'a7k2m9xq4t', 'a7k2m 9xq4t', '  a7k2m-9xq4t\n', 'A7k2M9xQ4t '])('reads %j as the code', (typed) => {
    expect(recoveryCodeHash(key, userId, typed)).toBe(stored)
  })

  it('reads the look-alikes i, l and o as 1, 1 and 0', () => {
    const withDigits = recoveryCodeHash(key, userId, '10k2m-9xq4t')
    expect(withDigits).not.toBeNull()
    expect(recoveryCodeHash(key, userId, 'io' + 'k2m-9xq4t')).toBe(withDigits)
    expect(recoveryCodeHash(key, userId, 'LO' + 'k2m-9xq4t')).toBe(withDigits)
  })

  it.each([
    '',
    '123456',
    'a7k2m-9xq4',
    'a7k2m-9xq4tt',
    'a7k2m--9xq4t',
    'a7k2-m9xq4t',
    'a7k2m  9xq4t',
    'a7k2m -9xq4t',
    'a7k2m-9xq4u',
    'a7k2m-9xq4!',
    'a7k2m_9xq4t',
  ])('finds no code in %j', (typed) => {
    expect(recoveryCodeHash(key, userId, typed)).toBeNull()
  })

  it('depends on the server’s key and on the account', () => {
    expect(recoveryCodeHash(randomBytes(32), userId, code)).not.toBe(stored)
    expect(recoveryCodeHash(key, 'b1c2d3e4-0000-4000-8000-000000000002', code)).not.toBe(stored)
    expect(stored).toMatch(/^[0-9a-f]{64}$/)
  })
})
