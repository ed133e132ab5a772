// Canonical CBOR is RFC 8949 core deterministic encoding, and reading one field out of opaque
// client CBOR accepts any well-formed item but refuses what is not exactly one.
import { encode } from 'cborg'
import { describe, expect, it } from 'vitest'
import { decodeTopLevelMap, encodeCanonical, textField, unsignedField } from './cbor.ts'

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex')

describe('encodeCanonical', () => {
  it('sorts map keys bytewise and uses the shortest forms (RFC 8949 4.2.1)', () => {
    // {"b": 1, "aa": 2} -> keys sorted by encoded bytes: 0x61 62 ("b") < 0x62 61 61 ("aa").
    expect(hex(encodeCanonical({ aa: 2, b: 1 }))).toBe('a2616201626161' + '02')
    expect(hex(encodeCanonical(23))).toBe('17')
    expect(hex(encodeCanonical(24))).toBe('1818')
    expect(hex(encodeCanonical(new Uint8Array([1, 2])))).toBe('420102')
    expect(hex(encodeCanonical(null))).toBe('f6')
  })
})

describe('decodeTopLevelMap', () => {
  it('reads a map whatever else it carries: other key types, tags, nesting', () => {
    const bytes = Buffer.concat([Buffer.from('a3', 'hex'), encode('directory_version'), encode(7), encode(1), encode('int key'), Buffer.from('6474616767', 'hex'), Buffer.from('d8184100', 'hex')])
    const map = decodeTopLevelMap(bytes)
    expect(map).not.toBeNull()
    expect(unsignedField(map ?? new Map(), 'directory_version')).toBe(7)
  })

  it.each([
    ['not CBOR', Buffer.from('ff00', 'hex')],
    ['empty', Buffer.alloc(0)],
    ['an array at the top', encode([1, 2])],
    ['trailing bytes', Buffer.concat([encode({ directory_version: 1 }), Buffer.from('00', 'hex')])],
    ['a duplicate key', Buffer.from('a2' + '6161' + '01' + '6161' + '02', 'hex')],
    ['truncated', encode({ directory_version: 1 }).subarray(0, 5)],
  ])('refuses %s', (_case, bytes) => {
    expect(decodeTopLevelMap(bytes)).toBeNull()
  })
})

describe('fields', () => {
  const map = new Map<unknown, unknown>([['n', 5], ['neg', -1], ['big', 2n ** 60n], ['s', 'x'], ['f', 1.5]])
  it.each([['n', 5], ['neg', null], ['big', null], ['s', null], ['f', null], ['missing', null]])('unsignedField %s -> %j', (key, expected) => {
    expect(unsignedField(map, key)).toBe(expected)
  })
  it('textField reads text only', () => {
    expect(textField(map, 's')).toBe('x')
    expect(textField(map, 'n')).toBeNull()
  })
})
