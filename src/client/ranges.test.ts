// OriginalRanges: a range of an original's plaintext from only the chunks holding it, each
// authenticated at its place; a server that sends other bytes (altered, from another place or
// stream, cut short) is caught at the chunk it touched.
import { describe, expect, it } from 'vitest'
import type { OpenedAsset } from './files.ts'
import { randomBytes } from './format/bytes.ts'
import { ClientFormatError } from './format/errors.ts'
import { encryptBytes } from './format/stream.ts'
import { OriginalRanges } from './ranges.ts'

const CHUNK = 64
const fileKey = randomBytes(32)

async function stored(size: number, chunkSize = CHUNK) {
  const plaintext = randomBytes(size)
  const ciphertext = await encryptBytes(fileKey, plaintext, { role: 'original', chunkSize })
  const asset = { assetId: 'a', fileKey, envelope: { chunk_size: chunkSize }, metadata: { size } } as unknown as OpenedAsset
  return { plaintext, ciphertext, asset }
}

/** A server answering Range requests from `bytes`, counting what it sent. */
function server(bytes: () => Uint8Array) {
  const asked: [number, number][] = []
  const fetch = async (start: number, end: number) => {
    asked.push([start, end])
    return bytes().slice(start, end + 1)
  }
  return { asked, fetch, sent: () => asked.reduce((sum, [start, end]) => sum + end - start + 1, 0) }
}

describe('OriginalRanges', () => {
  it('reads any range of the plaintext, from the start, the middle, across chunks and to the end', async () => {
    const { plaintext, ciphertext, asset } = await stored(1000)
    const ranges = new OriginalRanges(asset, server(() => ciphertext).fetch)
    for (const [start, end] of [
      [0, 0],
      [0, 999],
      [63, 64],
      [500, 700],
      [999, 999],
      [960, 5000],
      [128, 191],
    ] as const)
      expect([...(await ranges.read(start, end))], `${start}-${end}`).toEqual([...plaintext.subarray(start, Math.min(end, 999) + 1)])
    await expect(ranges.read(1000, 1000)).rejects.toThrow(RangeError)
    await expect(ranges.read(-1, 3)).rejects.toThrow(RangeError)
  })

  it('fetches only the chunks holding the range (and the header once): a read near the end sends nothing of what comes before', async () => {
    const size = 64 * 1000
    const { plaintext, ciphertext, asset } = await stored(size)
    const remote = server(() => ciphertext)
    const ranges = new OriginalRanges(asset, remote.fetch)
    const at = Math.floor(size * 0.9)
    expect([...(await ranges.read(at, at + 99))]).toEqual([...plaintext.subarray(at, at + 100)])
    // The header (22 bytes) and the two chunks of 64 + 16 bytes holding the 100 bytes asked for.
    expect(remote.asked).toHaveLength(2)
    expect(remote.sent()).toBe(22 + 2 * 80)
    await ranges.read(10, 20)
    expect(remote.asked).toHaveLength(3) // the header is not asked for again
    expect(remote.asked[2]).toEqual([22, 22 + 79])
  })

  it('a first read from the start takes the header in the same request', async () => {
    const { ciphertext, asset } = await stored(500)
    const remote = server(() => ciphertext)
    await new OriginalRanges(asset, remote.fetch).read(0, 10)
    expect(remote.asked).toEqual([[0, 22 + 79]])
  })

  it('reads an empty original and one of exactly whole chunks', async () => {
    const empty = await stored(0)
    await expect(new OriginalRanges(empty.asset, server(() => empty.ciphertext).fetch).read(0, 0)).rejects.toThrow(RangeError)
    const whole = await stored(CHUNK * 3)
    const ranges = new OriginalRanges(whole.asset, server(() => whole.ciphertext).fetch)
    expect([...(await ranges.read(CHUNK * 2, CHUNK * 3 - 1))]).toEqual([...whole.plaintext.subarray(CHUNK * 2)])
  })

  it('a server that alters a chunk, sends another place or stream, or cuts it short is caught at the chunk it touched', async () => {
    const { plaintext, ciphertext, asset } = await stored(64 * 20)
    const altered = ciphertext.slice()
    altered[22 + 10 * 80 + 5]! ^= 1 // chunk 10
    const ranges = new OriginalRanges(asset, server(() => altered).fetch)
    expect([...(await ranges.read(0, 63))]).toEqual([...plaintext.subarray(0, 64)]) // chunk 0 untouched
    await expect(ranges.read(640, 650)).rejects.toMatchObject({ code: 'authentication' })

    // Chunk 3's bytes where chunk 12 is asked for.
    const moved = new OriginalRanges(asset, async (start, end) => ciphertext.slice(start === 0 ? 0 : start - 9 * 80, (start === 0 ? end : end - 9 * 80) + 1))
    await expect(moved.read(64 * 12, 64 * 12 + 1)).rejects.toMatchObject({ code: 'authentication' })

    // Another stream of the same size under the same key: its header gives another stream key.
    const other = await stored(64 * 20)
    const spliced = new OriginalRanges(asset, async (start, end) => (start === 0 ? other.ciphertext : ciphertext).slice(start, end + 1))
    await expect(spliced.read(64 * 5, 64 * 5)).rejects.toBeInstanceOf(ClientFormatError)

    const short = new OriginalRanges(asset, async (start, end) => ciphertext.slice(start, end))
    await expect(short.read(100, 200)).rejects.toMatchObject({ code: 'truncated' })

    // The last chunk flag: a full chunk sealed as not-last cannot pass for the last one.
    const longer = await stored(64 * 21)
    const cut = new OriginalRanges(asset, async (start, end) => longer.ciphertext.slice(start, end + 1))
    await expect(cut.read(64 * 19, 64 * 20 - 1)).rejects.toMatchObject({ code: 'authentication' })
  })
})
