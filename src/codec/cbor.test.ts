// Canonical CBOR is RFC 8949 core deterministic encoding, and reading named top-level fields
// out of opaque client CBOR accepts any item cborg tokenizes but refuses what is not exactly
// one map-topped item, names a field twice, or goes past the nesting and item bounds.
import { encode } from 'cborg'
import { describe, expect, it } from 'vitest'
import { CBOR_MAX_ITEMS, encodeCanonical, encodeCanonicalPieces, readTopLevelFields, textField, unsignedField } from './cbor.ts'

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex')
const u32 = (n: number) => {
  const bytes = Buffer.alloc(4)
  bytes.writeUInt32BE(n)
  return bytes
}
const h = (text: string) => Buffer.from(text.replace(/\s/g, ''), 'hex')
/** "v" as a text key. */
const V = '6176'

describe('encodeCanonical', () => {
  it('sorts map keys bytewise and uses the shortest forms (RFC 8949 4.2.1)', () => {
    expect(hex(encodeCanonical({ aa: 2, b: 1 }))).toBe('a2616201626161' + '02')
    expect(hex(encodeCanonical(23))).toBe('17')
    expect(hex(encodeCanonical(24))).toBe('1818')
    expect(hex(encodeCanonical(new Uint8Array([1, 2])))).toBe('420102')
    expect(hex(encodeCanonical(null))).toBe('f6')
  })
})

describe('encodeCanonicalPieces', () => {
  const joined = (pieces: Uint8Array[]) => Buffer.concat(pieces)
  const big = (size: number, fill: number) => new Uint8Array(size).fill(fill)

  it.each<[string, unknown]>([
    ['a scalar', 'text'],
    ['an empty array', []],
    [
      'maps whose keys sort by encoded bytes (shorter first)',
      [
        { status: 200, hash: 'ab', bytes: new Uint8Array([1, 2]) },
        { code: 'x', hash: 'cd', status: 404 },
      ],
    ],
    ['nested arrays and maps', { a: [1, { bb: null, c: [true] }], b: -1 }],
    [
      'byte strings of every head length (1, 2, 3 and 5 bytes)',
      [big(23, 1), big(24, 2), big(255, 3), big(256, 4), big(4095, 5), big(4096, 6), big(65_535, 7), big(65_536, 8)],
    ],
    ['24 and more elements (a longer array head)', Array.from({ length: 300 }, (_, i) => ({ hash: String(i), bytes: big(i * 20, i % 256), status: 200 }))],
  ])('equals encodeCanonical byte for byte: %s', (_case, value) => {
    expect(joined(encodeCanonicalPieces(value)).equals(encodeCanonical(value))).toBe(true)
  })

  it('passes a large byte string through as its own piece (not copied) and joins what lies between', () => {
    const blob = big(10_000, 9)
    const other = big(5_000, 8)
    const pieces = encodeCanonicalPieces([
      { hash: 'h1', bytes: blob, status: 200 },
      { code: 'error.not_found', hash: 'h2', status: 404 },
      { hash: 'h3', bytes: other, status: 200 },
    ])
    expect(pieces).toHaveLength(5)
    expect(pieces[1]).toBe(blob)
    expect(pieces[3]).toBe(other)
    // A small byte string is copied into the run around it.
    expect(encodeCanonicalPieces([{ hash: 'h', bytes: big(100, 1), status: 200 }])).toHaveLength(1)
  })
})

describe('readTopLevelFields', () => {
  const version = (bytes: Uint8Array) => {
    const fields = readTopLevelFields(bytes, ['v'])
    return fields === null ? 'refused' : unsignedField(fields, 'v')
  }

  it.each([
    ['a plain map', encode({ v: 7, other: 'x' }), 7],
    ['a tagged map and a tagged value', h(`d8 18 a1 ${V} c1 07`), 7],
    ['other key types (integer, float, array)', h(`a4 01 00 f9 3c00 01 81 00 02 ${V} 07`), 7],
    ['nested maps and arrays', h(`a2 61 61 a1 61 62 82 01 a0 ${V} 18 2a`), 42],
    ['indefinite-length map and array', h(`bf 61 61 9f 01 02 ff ${V} 03 ff`), 3],
    ['keys out of canonical order', h(`a2 ${V} 05 61 61 00`), 5],
    ['a duplicate key other than the field', h(`a3 61 61 00 61 61 01 ${V} 09`), 9],
    ['nesting at CBOR_MAX_DEPTH (the map and 63 arrays)', Buffer.concat([h(`a2 ${V} 01 61 61`), Buffer.alloc(62, 0x81), h('80')]), 1],
    ['nesting past CBOR_MAX_DEPTH (the map and 64 arrays)', Buffer.concat([h(`a2 ${V} 01 61 61`), Buffer.alloc(63, 0x81), h('80')]), 'refused'],
    ['tags count as nesting', Buffer.concat([h(`a2 ${V} 01 61 61`), Buffer.alloc(62, 0x81), h('c1 80')]), 'refused'],
    ['a 1 MiB body of nested indefinite arrays', Buffer.concat([h(`a2 ${V} 01 61 61`), Buffer.alloc(1 << 20, 0x9f)]), 'refused'],
    ['CBOR_MAX_ITEMS items', Buffer.concat([h(`a2 ${V} 01 61 61 9a`), u32(CBOR_MAX_ITEMS - 5), Buffer.alloc(CBOR_MAX_ITEMS - 5, 0)]), 1],
    ['one item past CBOR_MAX_ITEMS', Buffer.concat([h(`a2 ${V} 01 61 61 9a`), u32(CBOR_MAX_ITEMS - 4), Buffer.alloc(CBOR_MAX_ITEMS - 4, 0)]), 'refused'],
    ['2^53-1', h(`a1 ${V} 1b 001fffffffffffff`), Number.MAX_SAFE_INTEGER],
    ['the field missing', encode({ other: 1 }), null],
    ['a float field', h(`a1 ${V} f9 3c00`), null],
    ['a negative field', h(`a1 ${V} 20`), null],
    ['a text field', h(`a1 ${V} 61 31`), null],
    ['above 2^53-1', h(`a1 ${V} 1b 0020000000000000`), null],
    ['not CBOR', h('ff 00'), 'refused'],
    ['empty', Buffer.alloc(0), 'refused'],
    ['an array at the top', encode([1, 2]), 'refused'],
    ['trailing bytes', h(`a1 ${V} 01 00`), 'refused'],
    ['the field twice', h(`a2 ${V} 01 ${V} 02`), 'refused'],
    ['truncated', encode({ v: 1, w: 'long text' }).subarray(0, 6), 'refused'],
    ['a break in a definite map', h(`a2 ${V} 01 ff`), 'refused'],
    ['an odd indefinite map', h(`bf ${V} 01 61 61 ff`), 'refused'],
    ['reserved additional information', h(`a1 ${V} 1c`), 'refused'],
  ])('%s', (_case, bytes, expected) => {
    expect(version(bytes)).toBe(expected)
  })

  it('reads text fields', () => {
    const fields = readTopLevelFields(encode({ intent_id: 'i-1', to_protocol_version: '2026-10-01', n: 1 }), ['intent_id', 'to_protocol_version', 'n'])
    expect(fields && textField(fields, 'intent_id')).toBe('i-1')
    expect(fields && textField(fields, 'n')).toBeNull()
  })
})
