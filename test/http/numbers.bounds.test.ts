// Every whole number a client sends, in a query or a JSON body, is a finite integer of at most
// 2^53-1 within its documented range, else 400 (query) or 422 (body), never a 500, and a
// refused request changes nothing.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sha256Hex } from '../../src/sdk/client.ts'
import { raw } from '../support/actors.ts'
import { album, ciphertext, signedManifest, uploader, type Uploader } from '../support/albums.ts'
import { bearer } from '../support/bundles.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
let member: Uploader
let albumId: string
beforeAll(async () => {
  server = await startServer()
  member = await uploader(server, 'numbers')
  albumId = await album(member)
})
afterAll(() => server.close())

/** Numbers JSON.parse reads as something other than a safe whole number, spelled as sent. */
const UNSAFE_JSON = [
  ['1e999 (Infinity)', '1e999'],
  ['-1e999 (-Infinity)', '-1e999'],
  ['2^53 + 1', '9007199254740993'],
  ['1e300', '1e300'],
  ['-1', '-1'],
  ['1.5', '1.5'],
] as const

describe('whole numbers in a query', () => {
  it.each([
    ['Infinity', 'after=Infinity'],
    ['1e400', 'after=1e400'],
    ['NaN', 'after=NaN'],
    ['2^53 + 1', 'after=9007199254740993'],
    ['-1', 'after=-1'],
    ['1.5', 'after=1.5'],
    ['a hex spelling', 'after=0x10'],
    ['limit 0', 'limit=0'],
    ['limit 1001', 'limit=1001'],
    ['limit Infinity', 'limit=Infinity'],
  ])('feed: %s is 400', async (_case, query) => {
    const answer = await raw(server, 'GET', `/v1/albums/${albumId}/feed?${query}`, { headers: bearer(member) })
    expect([answer.status, answer.json?.code], answer.text).toEqual([400, 'error.request.malformed'])
  })

  it('feed: the largest safe integer is a valid position', async () => {
    const answer = await raw(server, 'GET', `/v1/albums/${albumId}/feed?after=${Number.MAX_SAFE_INTEGER}&limit=1000`, { headers: bearer(member) })
    expect(answer.status).toBe(200)
    expect(answer.json).toEqual({ entries: [], next_after: Number.MAX_SAFE_INTEGER })
  })
})

describe('whole numbers in a JSON body', () => {
  const original = ciphertext(64)
  const hash = sha256Hex(original)
  /** An upload-open body with `spelling` put in place of one number. */
  const openWith = (field: 'size' | 'crypto_suite_id', spelling: string) =>
    `{"album_id":"${albumId}","crypto_suite_id":${field === 'crypto_suite_id' ? spelling : '1'},"ciphertext_hash":"${hash}",` +
    `"blobs":[{"role":"original","hash":"${hash}","size":${field === 'size' ? spelling : '64'}}]}`

  it.each(UNSAFE_JSON.flatMap(([name, spelling]) => (['size', 'crypto_suite_id'] as const).map((field) => [`${field} ${name}`, field, spelling] as const)))(
    'open upload: %s is 422 and opens nothing',
    async (_case, field, spelling) => {
      const answer = await raw(server, 'POST', '/v1/upload', {
        headers: { ...bearer(member), 'content-type': 'application/json' },
        body: openWith(field, spelling),
      })
      expect([answer.status, answer.json?.code], answer.text).toEqual([422, 'error.request.invalid'])
      expect((await member.client.readUpgrade(albumId)).in_flight).toBe(0)
    },
  )

  it.each(
    UNSAFE_JSON.flatMap(([name, spelling]) =>
      (['plaintext_size', 'chunk_size', 'amk_version', 'crypto_suite_id'] as const).map((field) => [`${field} ${name}`, field, spelling] as const),
    ),
  )('lifecycle write: envelope %s is 422 and writes nothing', async (_case, field, spelling) => {
    const { envelope, manifestCbor } = await signedManifest(
      member,
      { ciphertextHash: hash, derivativeHashes: [], metadataBlobHash: null },
      { albumId, fileId: randomUUID() },
    )
    const body = JSON.stringify({
      manifest_envelope: { ...envelope, [field]: '__NUMBER__' },
      manifest_cbor: Buffer.from(manifestCbor).toString('base64'),
      metadata_blob: null,
    })
    const answer = await raw(server, 'POST', `/v1/albums/${albumId}/ops`, {
      headers: { ...bearer(member), 'content-type': 'application/json' },
      body: body.replace('"__NUMBER__"', spelling),
    })
    expect([answer.status, answer.json?.code], answer.text).toEqual([422, 'error.request.invalid'])
    expect((await member.client.feed(albumId)).entries).toEqual([])
  })
})
