// Byte helpers that run the same in Node 20+ and in browsers: no Buffer, no node: module.
// Base64 goes through btoa/atob (global in both), in chunks so that large inputs never build
// one huge argument list.
import { sha256 } from '@noble/hashes/sha2.js'

/** Standard base64 (with padding) of the bytes. */
export function toBase64(bytes: Uint8Array): string {
  let binary = ''
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(binary)
}

/** The bytes of standard base64 (padding optional); throws on anything else. */
export function fromBase64(text: string): Uint8Array {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) throw new Error('not standard base64')
  const binary = atob(text)
  const bytes = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  return bytes
}

/** base64url without padding (RFC 4648 section 5): a URL's form of the bytes. */
export function toBase64Url(bytes: Uint8Array): string {
  return toBase64(bytes).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '')
}

/** The bytes of base64url without padding; throws on anything else. */
export function fromBase64Url(text: string): Uint8Array {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) throw new Error('not base64url')
  return fromBase64(text.replaceAll('-', '+').replaceAll('_', '/'))
}

export function toHex(bytes: Uint8Array): string {
  let hex = ''
  for (const byte of bytes) hex += byte.toString(16).padStart(2, '0')
  return hex
}

/** Bytes from lowercase or uppercase hex of even length; throws on anything else. */
export function fromHex(hex: string): Uint8Array {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) throw new TypeError('not hex of whole bytes')
  const out = new Uint8Array(hex.length / 2)
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16)
  return out
}

export function concatBytes(...parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0))
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

export const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text)

/**
 * Hex SHA-256 (@noble/hashes: synchronous, and incremental through `sha256.create()` for
 * streamed files, which WebCrypto's one-shot digest is not).
 */
export function sha256Hex(bytes: Uint8Array): string {
  return toHex(sha256(bytes))
}

export { sha256 }
