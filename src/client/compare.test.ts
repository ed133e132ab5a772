// firstDifference (compare.ts) on chunkings that do not line up (nor on 4 bytes, which its word-wise
// comparison relies on when they do): the stored original comes in
// 64 KiB chunks, a local file in the reader's own; the first differing byte must be found
// wherever the chunks of each side end, a prefix must count as a difference, the stored side
// must be read to its end after one (its last check is at its end), and errors must be told
// apart by side.
import { describe, expect, it } from 'vitest'
import { firstDifference, LocalReadError } from './compare.ts'

const bytes = Uint8Array.from({ length: 1000 }, (_, i) => (i * 7) & 0xff)

function* chunked(data: Uint8Array, size: number): Generator<Uint8Array> {
  for (let at = 0; at < data.length; at += size) yield data.subarray(at, at + size)
}

describe('firstDifference', () => {
  it('finds no difference in the same bytes however they are chunked', async () => {
    for (const [a, b] of [
      [1000, 1000],
      [64, 100],
      [100, 64],
      [1, 999],
      [333, 7],
    ] as const) {
      expect(await firstDifference(chunked(bytes, a), chunked(bytes, b))).toEqual({ offset: null, bytes: 1000 })
    }
  })

  it('finds the first differing byte wherever the chunks end, and reads the stored side to its end', async () => {
    for (const at of [0, 63, 64, 99, 100, 500, 999]) {
      const local = bytes.slice()
      local[at] = local[at]! ^ 0x10
      local[999] = local[999]! ^ 0x20 // a later difference is not the first
      for (const [a, b] of [
        [64, 100],
        [100, 64],
        [7, 1000],
        [6, 10],
        [1000, 1000],
      ] as const)
        expect(await firstDifference(chunked(bytes, a), chunked(local, b)), `${at} ${a} ${b}`).toEqual({ offset: at, bytes: 1000 })
    }
  })

  it('a local file shorter or longer differs where the shorter one ends', async () => {
    expect(await firstDifference(chunked(bytes, 64), chunked(bytes.subarray(0, 700), 100))).toEqual({ offset: 700, bytes: 1000 })
    const longer = new Uint8Array(1001)
    longer.set(bytes)
    expect(await firstDifference(chunked(bytes, 64), chunked(longer, 100))).toEqual({ offset: 1000, bytes: 1000 })
  })

  it('lets the local file go at the first difference', async () => {
    let closed = false
    async function* local(): AsyncGenerator<Uint8Array> {
      try {
        yield Uint8Array.of(1, 2, 3)
        yield Uint8Array.of(4, 5, 6)
      } finally {
        closed = true
      }
    }
    expect(await firstDifference([Uint8Array.of(1, 9, 3, 4, 5, 6)], local())).toEqual({ offset: 1, bytes: 6 })
    expect(closed).toBe(true)
  })

  it("throws the stored side's error as it is, even after a difference, and the local side's as its own", async () => {
    async function* failing(): AsyncGenerator<Uint8Array> {
      yield Uint8Array.of(1, 2, 3)
      throw new Error('the hash at the end')
    }
    await expect(firstDifference(failing(), [Uint8Array.of(1, 9, 3)])).rejects.toThrow(/^the hash at the end$/)
    async function* unreadable(): AsyncGenerator<Uint8Array> {
      yield Uint8Array.of(1)
      throw new Error('EIO')
    }
    await expect(firstDifference([Uint8Array.of(1, 2, 3)], unreadable())).rejects.toThrow(LocalReadError)
  })
})
