// HTTP Range requests (RFC 9110 section 14) for blob downloads: one byte range per request;
// a multi-range or unparsable header is ignored (the whole body is served, as RFC 9110 allows).
// Also the If-None-Match check (RFC 9110 section 13.1.2) that comes before a range.
import type { ByteRange } from '../blob-store/port.ts'

export type RangeRequest = { readonly kind: 'whole' } | { readonly kind: 'range'; readonly range: ByteRange } | { readonly kind: 'unsatisfiable' }

export function parseRange(header: string | undefined, size: number): RangeRequest {
  if (header === undefined) return { kind: 'whole' }
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim())
  if (match === null || (match[1] === '' && match[2] === '')) return { kind: 'whole' }
  const [first, last] = [match[1] ?? '', match[2] ?? '']
  if (first === '') {
    // A suffix: the last N bytes.
    const length = Number(last)
    if (length === 0 || size === 0) return { kind: 'unsatisfiable' }
    return { kind: 'range', range: { start: Math.max(0, size - length), end: size - 1 } }
  }
  const start = Number(first)
  if (start >= size) return { kind: 'unsatisfiable' }
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1)
  if (end < start) return { kind: 'whole' }
  return { kind: 'range', range: { start, end } }
}

/**
 * If-None-Match (RFC 9110 section 13.1.2): `*` matches any current representation; otherwise a
 * list of entity tags compared weakly (a `W/` prefix is ignored on either side).
 */
export function noneMatchHits(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false
  if (header.trim() === '*') return true
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '')
  return header.split(',').some((tag) => opaque(tag) === opaque(etag))
}
