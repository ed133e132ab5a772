import Type from 'typebox'
import { UUID_PATTERN } from './constants.ts'

/** RFC 3339 UTC with `Z`, millisecond precision. */
export const Timestamp = Type.String({ format: 'date-time', description: 'RFC 3339, UTC' })

/**
 * The annotation of a string the server keeps as sent and never reads as text (a relay payload):
 * it may hold U+0000, which every other string a client sends refuses (decision 0044).
 */
export const OPAQUE_STRING = 'x-opaque'

export const Uuid = Type.String({ pattern: UUID_PATTERN, description: 'Canonical UUID: lowercase, hyphenated' })

/**
 * A whole number a client sends: finite and at most 2^53-1, so that it is exact in every
 * engine and language on the way (1e999 parses as Infinity and is refused; API.md: 422 in a
 * body, 400 in a path or query).
 */
export function WholeNumber(options: { readonly minimum?: number; readonly maximum?: number; readonly default?: number; readonly description?: string } = {}) {
  return Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, ...options })
}

/** What /healthz and /readyz answer. */
export const ServiceStatus = Type.Object({ status: Type.String({ description: '`ok` (healthz) or `ready` (readyz)' }) })

export const NoContent = Type.Null({ description: 'No content' })

export function timestamp(ms: number): string {
  return new Date(ms).toISOString()
}
