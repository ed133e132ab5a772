// What STREAM is for: a stream cut short, reordered, spliced, extended or altered fails to
// decrypt, each with its own error code; and the streaming API gives the one-shot bytes
// whatever the pieces it is fed; all of it on WebCrypto and on node:crypto's primitives.
import { describe, expect, it } from 'vitest'
import { onEachPrimitives } from '../../../test/support/primitives.ts'
import { ClientFormatError, type FormatErrorCode } from './errors.ts'
import { generateFileKey, deriveAlbumKey, unwrapFileKey, wrapFileKey } from './keys.ts'
import { ciphertextSize, decryptBytes, decryptStream, encryptBytes, encryptStream, HEADER_BYTES } from './stream.ts'

const CHUNK = 16
const SEALED = CHUNK + 16
const fileKey = generateFileKey()
const plaintext = Uint8Array.from({ length: 40 }, (_, i) => i) // chunks of 16, 16 and 8 bytes
const options = { role: 'original', chunkSize: CHUNK } as const
const cat = (...parts: Uint8Array[]): Uint8Array => Uint8Array.from(parts.flatMap((part) => [...part]))

function split(stream: Uint8Array): { header: Uint8Array; chunks: Uint8Array[] } {
  const chunks: Uint8Array[] = []
  for (let at = HEADER_BYTES; at < stream.length; at += SEALED) chunks.push(stream.slice(at, at + SEALED))
  return { header: stream.slice(0, HEADER_BYTES), chunks }
}

async function failure(promise: Promise<unknown>): Promise<{ code: FormatErrorCode; message: string }> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(ClientFormatError)
  return { code: (error as ClientFormatError).code, message: (error as Error).message }
}

onEachPrimitives('the stream format', () => {
  describe('STREAM over AES-256-GCM', () => {
    it('round-trips and has the documented size', async () => {
      for (const size of [0, 1, 15, 16, 17, 32, 40, 100]) {
        const data = plaintext.length >= size ? plaintext.subarray(0, size) : new Uint8Array(size).fill(7)
        const sealed = await encryptBytes(fileKey, data, options)
        expect(sealed.length).toBe(ciphertextSize(size, CHUNK))
        expect(await decryptBytes(fileKey, sealed)).toEqual(data)
      }
    })

    it('streams: any split of the input gives the same bytes, fed back a byte at a time', async () => {
      const salt = new Uint8Array(16).fill(9)
      const whole = await encryptBytes(fileKey, plaintext, { ...options, salt })
      async function* bytewise(data: Uint8Array) {
        for (const byte of data) yield Uint8Array.of(byte)
      }
      const pieces: Uint8Array[] = []
      for await (const piece of encryptStream(fileKey, bytewise(plaintext), { ...options, salt })) pieces.push(piece)
      expect(cat(...pieces)).toEqual(whole)
      expect(pieces.map((p) => p.length)).toEqual([HEADER_BYTES, SEALED, SEALED, 8 + 16])
      const out: Uint8Array[] = []
      for await (const piece of decryptStream(fileKey, bytewise(whole))) out.push(piece)
      expect(out.map((p) => p.length)).toEqual([16, 16, 8])
      expect(cat(...out)).toEqual(plaintext)
    })

    it('keeps memory flat: 16 MiB through encryption and decryption, no piece larger than a chunk', async () => {
      const chunkSize = 65_536
      async function* source() {
        for (let i = 0; i < 256; i++) yield new Uint8Array(chunkSize).fill(i)
      }
      let largest = 0
      let total = 0
      for await (const piece of decryptStream(fileKey, encryptStream(fileKey, source(), { role: 'original', chunkSize }))) {
        largest = Math.max(largest, piece.length)
        total += piece.length
      }
      expect([largest, total]).toEqual([chunkSize, 256 * chunkSize])
    })

    it('refuses a stream whose last chunk is dropped (cut at a chunk boundary): truncated', async () => {
      const { header, chunks } = split(await encryptBytes(fileKey, plaintext, options))
      expect(await failure(decryptBytes(fileKey, cat(header, chunks[0]!, chunks[1]!)))).toMatchObject({
        code: 'truncated',
        message: expect.stringMatching(/not the last/),
      })
      expect((await failure(decryptBytes(fileKey, cat(header, chunks[0]!)))).code).toBe('truncated')
      expect((await failure(decryptBytes(fileKey, header))).code).toBe('truncated')
      expect((await failure(decryptBytes(fileKey, header.subarray(0, 10)))).code).toBe('truncated')
    })

    it('refuses a stream cut inside a chunk: the last chunk fails to authenticate', async () => {
      const sealed = await encryptBytes(fileKey, plaintext, options)
      expect((await failure(decryptBytes(fileKey, sealed.subarray(0, sealed.length - 1)))).code).toBe('authentication')
    })

    it('refuses reordered chunks', async () => {
      const { header, chunks } = split(await encryptBytes(fileKey, plaintext, options))
      expect(await failure(decryptBytes(fileKey, cat(header, chunks[1]!, chunks[0]!, chunks[2]!)))).toMatchObject({
        code: 'authentication',
        message: expect.stringMatching(/chunk 0/),
      })
    })

    it('refuses a chunk appended after the last: trailing-data', async () => {
      const { header, chunks } = split(await encryptBytes(fileKey, plaintext.subarray(0, 32), options))
      expect((await failure(decryptBytes(fileKey, cat(header, chunks[0]!, chunks[1]!, chunks[0]!)))).code).toBe('trailing-data')
    })

    it('refuses a flipped bit anywhere: header, chunk or tag', async () => {
      const sealed = await encryptBytes(fileKey, plaintext, options)
      for (const at of [1, 7, HEADER_BYTES - 1, HEADER_BYTES, HEADER_BYTES + SEALED + 3, sealed.length - 1]) {
        const altered = sealed.slice()
        altered[at]! ^= 0x01
        expect((await failure(decryptBytes(fileKey, altered))).code, `byte ${at}`).toMatch(/^(authentication|malformed)$/)
      }
      const version = sealed.slice()
      version[0] = 2
      expect((await failure(decryptBytes(fileKey, version))).code).toBe('malformed')
    })

    it('refuses chunks spliced from another stream under the same file key', async () => {
      const a = split(await encryptBytes(fileKey, plaintext, options))
      const b = split(await encryptBytes(fileKey, plaintext, options))
      expect((await failure(decryptBytes(fileKey, cat(a.header, a.chunks[0]!, b.chunks[1]!, a.chunks[2]!)))).code).toBe('authentication')
      expect((await failure(decryptBytes(fileKey, cat(b.header, ...a.chunks)))).code).toBe('authentication')
    })

    it('refuses a derivative read as an original, and a wrong key', async () => {
      const derivative = await encryptBytes(fileKey, plaintext, { role: 'derivative', chunkSize: CHUNK })
      expect((await failure(decryptBytes(fileKey, derivative, { role: 'original' }))).code).toBe('malformed')
      const relabelled = derivative.slice()
      relabelled[1] = 1
      expect((await failure(decryptBytes(fileKey, relabelled, { role: 'original' }))).code).toBe('authentication')
      expect((await failure(decryptBytes(generateFileKey(), derivative))).code).toBe('authentication')
    })
  })

  describe('file-key wrapping', () => {
    it('unwraps only for the album key, album and asset it was made for', async () => {
      const master = crypto.getRandomValues(new Uint8Array(32))
      const albumId = crypto.randomUUID()
      const ids = { albumId, fileId: crypto.randomUUID() }
      const albumKey = await deriveAlbumKey(master, albumId, 1)
      const wrapped = await wrapFileKey(albumKey, ids, fileKey)
      expect(await unwrapFileKey(albumKey, ids, wrapped)).toEqual(fileKey)
      expect((await failure(unwrapFileKey(albumKey, { ...ids, fileId: crypto.randomUUID() }, wrapped))).code).toBe('authentication')
      expect((await failure(unwrapFileKey(await deriveAlbumKey(master, albumId, 2), ids, wrapped))).code).toBe('authentication')
      expect((await failure(unwrapFileKey(albumKey, ids, wrapped.subarray(1)))).code).toBe('malformed')
    })
  })

  describe('continuing a stream (firstChunk)', () => {
    it("gives the stream's own chunks from chunk i on, and needs the stream's salt", async () => {
      const salt = new Uint8Array(16).fill(7)
      const whole = await encryptBytes(fileKey, plaintext, { ...options, salt })
      for (const first of [1, 2]) {
        const rest = await encryptBytes(fileKey, plaintext.subarray(first * CHUNK), { ...options, salt, firstChunk: first })
        expect(rest).toEqual(whole.subarray(HEADER_BYTES + first * SEALED))
      }
      // Another salt is another stream: its chunks do not continue this one.
      const other = await encryptBytes(fileKey, plaintext.subarray(CHUNK), { ...options, salt: new Uint8Array(16).fill(8), firstChunk: 1 })
      expect(await failure(decryptBytes(fileKey, cat(whole.subarray(0, HEADER_BYTES + SEALED), other)))).toMatchObject({ code: 'authentication' })
      await expect(encryptBytes(fileKey, plaintext, { ...options, firstChunk: 1 })).rejects.toThrow(/salt/)
    })
  })
})
