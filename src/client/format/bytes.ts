// Byte helpers of the client format beyond the SDK's (sdk/bytes.ts); no node: module, no Buffer.
import { fromHex } from '../../sdk/bytes.ts'

export function u32be(value: number): Uint8Array {
  const out = new Uint8Array(4)
  new DataView(out.buffer).setUint32(0, value)
  return out
}

export function randomBytes(length: number): Uint8Array {
  return globalThis.crypto.getRandomValues(new Uint8Array(length))
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The 16 bytes of a UUID given in its canonical text form (either case). */
export function uuidBytes(uuid: string): Uint8Array {
  if (!UUID.test(uuid)) throw new TypeError(`not a canonical UUID: ${JSON.stringify(uuid)}`)
  return fromHex(uuid.replaceAll('-', ''))
}

/** A copy whose buffer is exactly its bytes (WebCrypto takes a BufferSource; this pins the type). */
export function own(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  return new Uint8Array(bytes)
}

/** SHA-256 by the platform's WebCrypto: native, so a few times faster than a JavaScript hash on a blob of any size. */
export async function digestSha256(bytes: Uint8Array): Promise<Uint8Array> {
  // A view of an ArrayBuffer is hashed where it is: a copy of a photo held in memory is 64 MiB at worst.
  const input = bytes.buffer instanceof ArrayBuffer ? (bytes as Uint8Array<ArrayBuffer>) : own(bytes)
  return new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', input))
}
