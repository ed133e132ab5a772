// Account lockout (API.md section 3): while `lockedUntil` is ahead of now, credential
// operations answer 423 with Retry-After.

/** Whole seconds until the lock ends, or null when the account is not locked. */
export function lockRetryAfterS(lockedUntil: number | null, now: number): number | null {
  if (lockedUntil === null || lockedUntil <= now) return null
  return Math.ceil((lockedUntil - now) / 1000)
}
