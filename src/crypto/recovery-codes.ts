// Second-factor recovery codes (docs/decisions/0027): each 10 characters of Crockford's base32
// in lowercase (digits and letters but i, l, o and u: no look-alikes), 50 random bits, shown
// as xxxxx-xxxxx. The database keeps only an HMAC-SHA-256 of a code under a key derived from
// SECRET_KEY, so a copy of the database alone cannot be searched for the codes offline.
import { createHmac, randomInt } from 'node:crypto'

export const RECOVERY_CODE_COUNT = 10

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'
const LENGTH = 10

export interface IssuedRecoveryCodes {
  /** As shown to the person, once. */
  readonly codes: string[]
  /** What is stored, in the same order. */
  readonly hashes: string[]
}

/** A new set of distinct codes for the account, with their hashes. */
export function newRecoveryCodes(key: Buffer, userId: string): IssuedRecoveryCodes {
  const drawn = new Set<string>()
  while (drawn.size < RECOVERY_CODE_COUNT) drawn.add(Array.from({ length: LENGTH }, () => ALPHABET[randomInt(ALPHABET.length)]).join(''))
  return {
    codes: [...drawn].map((code) => `${code.slice(0, LENGTH / 2)}-${code.slice(LENGTH / 2)}`),
    hashes: [...drawn].map((code) => digest(key, userId, code)),
  }
}

/**
 * The stored form of a code as typed (any case, its hyphen, a space or nothing between the halves, surrounded by spaces;
 * i, l and o read as 1, 1 and 0, as Crockford's base32 reads them), or null when the text cannot
 * be a recovery code at all.
 */
export function recoveryCodeHash(key: Buffer, userId: string, typed: string): string | null {
  const code = compact(typed)
  return code === null ? null : digest(key, userId, code)
}

function compact(typed: string): string | null {
  const text = typed.trim().toLowerCase()
  if (!/^[0-9a-z]{5}[- ]?[0-9a-z]{5}$/.test(text)) return null
  const code = text.replace(/[- ]/, '').replace(/[il]/g, '1').replace(/o/g, '0')
  return [...code].every((c) => ALPHABET.includes(c)) ? code : null
}

/** Bound to the account: the same code of two accounts is stored differently. */
function digest(key: Buffer, userId: string, code: string): string {
  return createHmac('sha256', key).update(userId, 'utf8').update('\0').update(code, 'utf8').digest('hex')
}
