// Range headers resolve to one byte range within the blob, or to the whole body, as RFC 9110 says.
import { describe, expect, it } from 'vitest'
import { parseRange } from './range.ts'

describe('parseRange (size 1000)', () => {
  it.each([
    [undefined, { kind: 'whole' }],
    ['bytes=0-99', { kind: 'range', range: { start: 0, end: 99 } }],
    ['bytes=900-', { kind: 'range', range: { start: 900, end: 999 } }],
    ['bytes=990-2000', { kind: 'range', range: { start: 990, end: 999 } }],
    ['bytes=-100', { kind: 'range', range: { start: 900, end: 999 } }],
    ['bytes=-5000', { kind: 'range', range: { start: 0, end: 999 } }],
    ['bytes=1000-', { kind: 'unsatisfiable' }],
    ['bytes=-0', { kind: 'unsatisfiable' }],
    ['bytes=5-1', { kind: 'whole' }],
    ['bytes=0-1,5-6', { kind: 'whole' }],
    ['items=0-1', { kind: 'whole' }],
    ['bytes=-', { kind: 'whole' }],
  ])('%s -> %j', (header, expected) => {
    expect(parseRange(header, 1000)).toEqual(expected)
  })
})
