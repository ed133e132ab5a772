// CBOR in one place (cborg). Encoding follows RFC 8949 section 4.2.1 (core deterministic
// encoding: shortest forms, definite lengths, map keys in bytewise order). Reading client CBOR
// never builds values: cborg's tokenizer walks the bytes (every head checked by the library)
// and only the top-level fields asked for are kept, so whatever else the client put there
// (tags, float keys, duplicate keys elsewhere) stays opaque and is never reinterpreted. cborg
// does not tokenize indefinite-length strings or unassigned simple values; bytes holding those
// are refused as malformed. The walk is bounded (CBOR_MAX_DEPTH, CBOR_MAX_ITEMS) so that no
// body holds the event loop for long: a body past either bound is refused as soon as the walk
// reaches it.
import { Tokenizer, Type, decode, encode, rfc8949EncodeOptions, type Token } from 'cborg'

/** Canonical CBOR (RFC 8949 section 4.2.1): the one encoding that signatures cover. */
export function encodeCanonical(value: unknown): Uint8Array {
  return encode(value, rfc8949EncodeOptions)
}

/** Byte strings at least this long are pieces of their own in encodeCanonicalPieces (not copied). */
const OWN_PIECE_BYTES = 4096

/** Major types of the heads encodeCanonicalPieces writes itself (RFC 8949 section 3.1). */
const BYTE_STRING = 2
const ARRAY = 4
const MAP = 5

/** The head of a definite-length item: major type and length in the shortest form (RFC 8949 section 3). */
function head(major: number, length: number): Uint8Array {
  const type = major << 5
  if (length < 24) return Uint8Array.of(type | length)
  if (length < 0x100) return Uint8Array.of(type | 24, length)
  if (length < 0x10000) return Uint8Array.of(type | 25, length >> 8, length & 0xff)
  const bytes = new Uint8Array(length < 2 ** 32 ? 5 : 9)
  const view = new DataView(bytes.buffer)
  if (bytes.length === 5) view.setUint32(1, length)
  else view.setBigUint64(1, BigInt(length))
  bytes[0] = type | (bytes.length === 5 ? 26 : 27)
  return bytes
}

/** Bytewise lexicographic order, a prefix first: the order of canonical map keys (RFC 8949 section 4.2.1). */
function compareBytes(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!
  return a.length - b.length
}

/**
 * The canonical CBOR of `value` (what encodeCanonical gives, byte for byte) as pieces to send one
 * after the other, for answers that carry blobs: a byte string of OWN_PIECE_BYTES or more is its
 * own piece, the very Uint8Array given (never copied), so that the answer is not held twice;
 * everything between such byte strings is joined into one piece. Arrays and maps with text keys
 * are walked; any other value is encoded whole.
 */
export function encodeCanonicalPieces(value: unknown): Uint8Array[] {
  const pieces: Uint8Array[] = []
  let run: Uint8Array[] = []
  const flush = (): void => {
    if (run.length === 0) return
    const joined = new Uint8Array(run.reduce((total, part) => total + part.length, 0))
    let offset = 0
    for (const part of run) {
      joined.set(part, offset)
      offset += part.length
    }
    pieces.push(joined)
    run = []
  }
  const walk = (item: unknown): void => {
    if (item instanceof Uint8Array && item.length >= OWN_PIECE_BYTES) {
      run.push(head(BYTE_STRING, item.length))
      flush()
      pieces.push(item)
    } else if (Array.isArray(item)) {
      run.push(head(ARRAY, item.length))
      item.forEach(walk)
    } else if (item !== null && typeof item === 'object' && Object.getPrototypeOf(item) === Object.prototype) {
      const entries = Object.entries(item).map(([key, entry]) => [encodeCanonical(key), entry] as const)
      entries.sort(([a], [b]) => compareBytes(a, b))
      run.push(head(MAP, entries.length))
      for (const [key, entry] of entries) {
        run.push(key)
        walk(entry)
      }
    } else {
      run.push(encodeCanonical(item))
    }
  }
  walk(value)
  flush()
  return pieces
}

/**
 * Decodes one well-formed CBOR item as decodeCanonical does (shortest forms, no duplicate map
 * key), without re-encoding it to insist on canonical order: for answers a client only reads,
 * such as a batch download's, where that check would cost more than the decoding.
 */
export function decodeStrict(bytes: Uint8Array): unknown {
  return decode(bytes, { strict: true, rejectDuplicateMapKeys: true })
}

/**
 * Decodes bytes that must be canonical CBOR: maps with text keys become plain objects, byte
 * strings Uint8Array. Throws when they are not well-formed, hold a duplicate key, or are not
 * the canonical encoding of what they decode to (re-encoding must give the same bytes).
 */
export function decodeCanonical(bytes: Uint8Array): unknown {
  const value = decodeStrict(bytes)
  const again = encodeCanonical(value)
  if (again.length !== bytes.length || again.some((byte, i) => byte !== bytes[i])) throw new Error('not canonical CBOR (RFC 8949 section 4.2.1)')
  return value
}

/** A scalar read from a top-level field: a text string or an unsigned integer (major type 0). */
export type FieldValue = { readonly kind: 'text'; readonly value: string } | { readonly kind: 'unsigned'; readonly value: bigint }

/** Deepest nesting of arrays, maps and tags (empty ones too), the top-level map included. */
export const CBOR_MAX_DEPTH = 64
/** Most data items (heads: each key, value, element and tag counts) read in one body. */
export const CBOR_MAX_ITEMS = 65_536

class Malformed extends Error {}

/** cborg's tokenizer, refusing past CBOR_MAX_ITEMS items. */
class BoundedTokens {
  readonly #tokens: Tokenizer
  #items = 0
  constructor(bytes: Uint8Array) {
    this.#tokens = new Tokenizer(bytes, { allowIndefinite: true, allowUndefined: true, allowBigInt: true })
  }

  next(): Token {
    if (++this.#items > CBOR_MAX_ITEMS) throw new Malformed('too many items')
    return this.#tokens.next()
  }

  done(): boolean {
    return this.#tokens.done()
  }
}

interface OpenContainer {
  /** Items still expected; Infinity for an indefinite-length container (ended by a break). */
  remaining: number
  /** For an indefinite-length map: items seen, which must come in pairs. */
  readonly indefiniteMap: boolean
  items: number
}

function children(token: Token): number {
  if (token.type === Type.array) return token.value as number
  if (token.type === Type.map) return (token.value as number) * 2
  if (token.type === Type.tag) return 1
  return 0
}

/** Consumes the rest of the data item that `first` starts (inside the top-level map), without recursion. */
function skipItem(tokens: BoundedTokens, first: Token): void {
  const open: OpenContainer[] = []
  let token = first
  for (;;) {
    if (token.type === Type.break) {
      const top = open.pop()
      if (top === undefined || top.remaining !== Infinity || (top.indefiniteMap && top.items % 2 !== 0)) throw new Malformed('misplaced break')
    } else {
      // An array, map or tag, empty or not, sits one level below the innermost open one (and
      // the top-level map).
      if ((token.type === Type.array || token.type === Type.map || token.type === Type.tag) && open.length + 2 > CBOR_MAX_DEPTH) {
        throw new Malformed('nested too deeply')
      }
      const expected = children(token)
      if (expected > 0) {
        open.push({ remaining: expected, indefiniteMap: token.type === Type.map && expected === Infinity, items: 0 })
        token = tokens.next()
        continue
      }
    }
    // One item is complete: it counts toward its container, which may complete in turn.
    for (;;) {
      const top = open.at(-1)
      if (top === undefined) return
      top.items += 1
      if (top.remaining === Infinity) break
      top.remaining -= 1
      if (top.remaining > 0) break
      open.pop()
    }
    token = tokens.next()
  }
}

/** The first token of a data item with any tags around it read through. */
function untagged(tokens: BoundedTokens): Token {
  let token = tokens.next()
  while (token.type === Type.tag) token = tokens.next()
  return token
}

function scalar(token: Token): FieldValue | null {
  if (token.type === Type.string) return { kind: 'text', value: token.value as string }
  if (token.type === Type.uint) return { kind: 'unsigned', value: BigInt(token.value as number | bigint) }
  return null
}

/**
 * The named top-level fields of exactly one well-formed CBOR data item whose top level is a
 * map (tags around it read through). A field holding anything but a text string or an
 * unsigned integer reads as null. Null overall when the bytes are not such an item, or when a
 * named field occurs twice (its value would be ambiguous).
 */
export function readTopLevelFields(bytes: Uint8Array, names: readonly string[]): Map<string, FieldValue | null> | null {
  try {
    const tokens = new BoundedTokens(bytes)
    const map = untagged(tokens)
    if (map.type !== Type.map) return null
    const fields = new Map<string, FieldValue | null>()
    for (let entry = 0; entry < (map.value as number); entry++) {
      const keyStart = untagged(tokens)
      if (keyStart.type === Type.break) {
        if (map.value !== Infinity) return null
        break
      }
      const name = keyStart.type === Type.string && names.includes(keyStart.value as string) ? (keyStart.value as string) : null
      skipItem(tokens, keyStart)
      const valueStart = untagged(tokens)
      if (valueStart.type === Type.break) return null
      if (name !== null) {
        if (fields.has(name)) return null
        fields.set(name, scalar(valueStart))
      }
      skipItem(tokens, valueStart)
    }
    return tokens.done() ? fields : null
  } catch {
    return null // truncated, not well-formed, past the bounds, or something cborg does not tokenize
  }
}

/** An unsigned integer field no larger than 2^53-1; null otherwise. */
export function unsignedField(fields: Map<string, FieldValue | null>, name: string): number | null {
  const field = fields.get(name)
  return field?.kind === 'unsigned' && field.value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(field.value) : null
}

export function textField(fields: Map<string, FieldValue | null>, name: string): string | null {
  const field = fields.get(name)
  return field?.kind === 'text' ? field.value : null
}
