// Account field rules (API.md sections 3 and 5).

export interface NormalizedEmail {
  /** As given, trimmed: what the account shows. */
  readonly email: string
  /** Lowercased: what uniqueness and sign-in compare. */
  readonly emailKey: string
}

/** At most 254 characters, one `@` with text on both sides; null when unusable. */
export function normalizeEmail(raw: string): NormalizedEmail | null {
  const email = raw.trim()
  if (email.length === 0 || email.length > 254) return null
  const parts = email.split('@')
  if (parts.length !== 2 || parts[0] === '' || parts[1] === '') return null
  return { email, emailKey: email.toLowerCase() }
}

export const DISPLAY_NAME_MAX = 100

/** 1-100 characters after trimming; null when unusable. */
export function normalizeDisplayName(raw: string): string | null {
  const name = raw.trim()
  const length = [...name].length
  return length >= 1 && length <= DISPLAY_NAME_MAX ? name : null
}
