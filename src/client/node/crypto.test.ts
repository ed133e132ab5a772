// The Node adapter's crypto gives exactly the bytes of the portable code it stands in for.
import { describe, expect, it } from 'vitest'
import { ESCROW_KDF_DEFAULTS, portableArgon2id, type EscrowKdfParams } from '../format/recovery.ts'
import { nativeArgon2id } from './crypto.ts'

describe('nativeArgon2id', () => {
  const password = Uint8Array.from({ length: 32 }, (_, i) => (i * 29 + 3) & 0xff)
  const salt = Uint8Array.from({ length: 16 }, (_, i) => 0xa0 + i)

  it.each<[string, EscrowKdfParams]>([
    ['the escrow defaults', ESCROW_KDF_DEFAULTS],
    ['the smallest memory', { memoryKiB: 8, passes: 1, lanes: 1 }],
    ['two lanes', { memoryKiB: 1024, passes: 2, lanes: 2 }],
    ['four lanes, memory not a multiple of 4 p', { memoryKiB: 1030, passes: 3, lanes: 4 }],
  ])('gives the same 32 bytes as @noble/hashes (%s)', async (_name, params) => {
    const native = await nativeArgon2id(password, salt, params)
    expect(native).toHaveLength(32)
    expect(native).toEqual(await portableArgon2id(password, salt, params))
  }, 60_000)
})
