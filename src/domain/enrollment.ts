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
