import Type from 'typebox'

/** RFC 3339 UTC with `Z`, millisecond precision. */
export const Timestamp = Type.String({ format: 'date-time', description: 'RFC 3339, UTC' })

export const Uuid = Type.String({ pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$', description: 'Canonical UUID: lowercase, hyphenated' })

export const NoContent = Type.Null({ description: 'No content' })

export function timestamp(ms: number): string {
  return new Date(ms).toISOString()
}
