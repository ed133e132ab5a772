// Advisory sign-in identifiers (API.md section 1): never refused, dropped when unusable.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** A string of 1-128 characters without U+0000 (which no text column takes), else null. */
export function advisoryCohortHash(value: unknown): string | null {
  return typeof value === 'string' && value.length >= 1 && value.length <= 128 && !value.includes('\u0000') ? value : null
}

/** A UUID in any case, normalized to lowercase, else null. */
export function advisoryDeviceId(value: unknown): string | null {
  return typeof value === 'string' && UUID.test(value) ? value.toLowerCase() : null
}
