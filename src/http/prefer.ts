// The Prefer request header (RFC 7240). The one preference Coffer honours is `return`: confirm
// TOTP answers the new factor's recovery codes (200) to `return=representation`, and 204 as
// SPEC fixes it otherwise (docs/decisions/0027).
import type { IncomingHttpHeaders } from 'node:http'

/** Preference-Applied of an answer that followed `return=representation`. */
export const REPRESENTATION_APPLIED = 'return=representation'

/**
 * Whether the request prefers `return=representation`: the first `return` preference of its
 * Prefer fields decides (RFC 7240 section 2); names compare case-insensitively, a value may be
 * quoted, parameters after `;` are ignored.
 */
export function prefersRepresentation(headers: IncomingHttpHeaders): boolean {
  const fields = [headers.prefer ?? []].flat()
  for (const preference of fields.flatMap((field) => field.split(','))) {
    const [name = '', value = ''] = (preference.split(';')[0] ?? '').split('=').map((part) => part.trim())
    if (name.toLowerCase() === 'return') return value.replace(/^"(.*)"$/, '$1').toLowerCase() === 'representation'
  }
  return false
}
