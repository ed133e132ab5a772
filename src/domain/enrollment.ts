// Device-enrollment rules (SPEC.md "Device-enrollment channel", API.md section 5).

export const TEXT_FALLBACK_DIGITS = 10
export const MAILBOX_MAX_PAYLOADS = 64
export const RELAY_PAYLOAD_MAX_BYTES = 64 * 1024

/**
 * Which spelling a redeemed code is: ten digits once spaces and hyphens are removed is the
 * text fallback (normalized); anything else is taken as the full code, as sent.
 */
export function codeSpelling(code: string): string {
  const digits = code.replace(/[\s-]/g, '')
  return /^\d+$/.test(digits) && digits.length === TEXT_FALLBACK_DIGITS ? digits : code
}

/** Seconds until redeems from this address are looked at again, or null when they are now. */
export function redeemBlockedForS(throttle: { windowStartedAt: number; failures: number } | undefined, now: number, maxFailures: number, windowS: number): number | null {
  if (throttle === undefined || throttle.failures < maxFailures) return null
  const windowEnds = throttle.windowStartedAt + windowS * 1000
  return windowEnds > now ? Math.ceil((windowEnds - now) / 1000) : null
}
