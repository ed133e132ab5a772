// RFC 6238 TOTP through `otpauth`: SHA-1, 6 digits, 30-second steps, one step either side.
import { randomBytes } from 'node:crypto'
import { Secret, TOTP } from 'otpauth'

const PERIOD_S = 30
const DIGITS = 6
const WINDOW = 1

export function newTotpSecret(): Buffer {
  return randomBytes(20)
}

function totp(secret: Uint8Array): TOTP {
  return new TOTP({ algorithm: 'SHA1', digits: DIGITS, period: PERIOD_S, secret: new Secret({ buffer: Uint8Array.from(secret).buffer }) })
}

/** The URI of API.md section 3, parameters in its order; the label keeps `@` readable. */
export function provisioningUri(secret: Uint8Array, email: string): string {
  const base32 = totp(secret).secret.base32
  const label = encodeURIComponent(email).replaceAll('%40', '@')
  return `otpauth://totp/Coffer:${label}?secret=${base32}&issuer=Coffer&algorithm=SHA1&digits=${DIGITS}&period=${PERIOD_S}`
}

/** Whether the text has a TOTP code's shape (six digits): anything else is not one. */
export function isTotpCode(code: string): boolean {
  return /^\d{6}$/.test(code)
}

/** The time step a code belongs to, within one step of now; null when the code is wrong. */
export function matchTotpStep(secret: Uint8Array, code: string, now: number): number | null {
  if (!isTotpCode(code)) return null
  const delta = totp(secret).validate({ token: code, timestamp: now, window: WINDOW })
  return delta === null ? null : Math.floor(now / 1000 / PERIOD_S) + delta
}
