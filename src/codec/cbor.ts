// Deterministic CBOR in one place (cborg). Encoding follows RFC 8949 section 4.2.1 (core
// deterministic encoding: shortest forms, definite lengths, map keys in bytewise order).
// Decoding is for reading one field out of client bytes that are otherwise opaque.
import { decode, encode, rfc8949EncodeOptions, type DecodeOptions, type TagDecodeControl } from 'cborg'

export function encodeCanonical(value: unknown): Uint8Array {
  return encode(value, rfc8949EncodeOptions)
}

// Client CBOR may carry any tag; only a named field matters, so every tag is read through.
const anyTag = new Proxy({}, { get: () => (decodeContent: TagDecodeControl) => decodeContent() }) as NonNullable<DecodeOptions['tags']>

const lenient: DecodeOptions = { useMaps: true, rejectDuplicateMapKeys: true, tags: anyTag }

/**
 * The top-level map of one CBOR data item (trailing bytes refused), or null when the bytes are
 * not exactly one well-formed item whose top level is a map.
 */
export function decodeTopLevelMap(bytes: Uint8Array): Map<unknown, unknown> | null {
  try {
    const item: unknown = decode(bytes, lenient)
    return item instanceof Map ? item : null
  } catch {
    return null
  }
}

/** An unsigned integer (within JavaScript's safe range) under a text key; null otherwise. */
export function unsignedField(map: Map<unknown, unknown>, key: string): number | null {
  const value = map.get(key)
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value
  if (typeof value === 'bigint' && value >= 0n && value <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(value)
  return null
}

export function textField(map: Map<unknown, unknown>, key: string): string | null {
  const value = map.get(key)
  return typeof value === 'string' ? value : null
}
