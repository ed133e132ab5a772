// Protocol versions are dates YYYY-MM-DD (SPEC.md "Versioning"); as strings of one fixed
// form they compare in date order.

export function isProtocolDate(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false
  const date = new Date(`${value}T00:00:00Z`)
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value)
}

export type ProtocolVerdict = { readonly accepted: true } | { readonly accepted: false; readonly protocolMin: string; readonly protocolMax: string }

/**
 * A lifecycle write speaks a version within [PROTOCOL_MIN, PROTOCOL_MAX] and not older than
 * the album's pinned one; a refusal names the range that would be accepted (426).
 */
export function checkProtocol(version: string, range: { readonly min: string; readonly max: string }, albumVersion: string): ProtocolVerdict {
  const protocolMin = range.min > albumVersion ? range.min : albumVersion
  if (version >= protocolMin && version <= range.max) return { accepted: true }
  return { accepted: false, protocolMin, protocolMax: range.max }
}
