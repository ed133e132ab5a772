// An upload session accepts exactly the blobs it declared, keeps bytes only when their SHA-256
// and size match the declaration (nothing at all otherwise), tells the client which bytes it
// already stores, is the owner's alone, and counts in its album's in_flight while it is open.
import { randomUUID } from 'node:crypto'
import { request as httpRequest } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sha256Hex, type OpenUpload, type UploadSessionView } from '../../src/sdk/client.ts'
import { type Member, problemOf, raw, registered } from '../support/actors.ts'
import { album, ciphertext, signedManifest, uploader, type Uploader } from '../support/albums.ts'
import { countRows } from '../support/database.ts'
import { startServer, type TestServer } from '../support/server.ts'
import { deleteStored, isStored, storedBytes } from '../support/blobs.ts'
import { blobFiles } from '../support/bundles.ts'

const MAX_BLOB_BYTES = 65_536
const TTL_S = 86_400

let server: TestServer
beforeAll(async () => {
  server = await startServer({ MAX_BLOB_BYTES: String(MAX_BLOB_BYTES) })
})
afterAll(() => server.close())

const iso = (ms: number) => new Date(ms).toISOString()

type Declared = OpenUpload['blobs'][number]

interface Bundle {
  readonly original: Buffer
  readonly derivatives: Buffer[]
  readonly bytes: Map<string, Buffer>
  readonly blobs: Declared[]
  readonly ciphertextHash: string
}

function bundle(originalSize = 300, derivativeSizes: readonly number[] = [100]): Bundle {
  const original = ciphertext(originalSize)
  const derivatives = derivativeSizes.map((size) => ciphertext(size))
  const blobs: Declared[] = [
    { role: 'original', hash: sha256Hex(original), size: original.length },
    ...derivatives.map((bytes) => ({ role: 'derivative' as const, hash: sha256Hex(bytes), size: bytes.length })),
  ]
  const bytes = new Map([original, ...derivatives].map((b) => [sha256Hex(b), b]))
  return { original, derivatives, bytes, blobs, ciphertextHash: sha256Hex(original) }
}

function declaration(albumId: string, b: Bundle): OpenUpload {
  return { album_id: albumId, crypto_suite_id: 1, ciphertext_hash: b.ciphertextHash, blobs: b.blobs }
}

function bearer(member: Member): Record<string, string> {
  return { authorization: `Bearer ${member.client.tokens!.access_token}` }
}

function openRaw(member: Member, body: unknown) {
  return raw(server, 'POST', '/v1/upload', { headers: { ...bearer(member), 'content-type': 'application/json' }, body: JSON.stringify(body) })
}

function putRaw(
  member: Member,
  uploadId: string,
  hash: string,
  body: Uint8Array,
  headers: Record<string, string> = { 'content-type': 'application/octet-stream' },
) {
  return raw(server, 'PUT', `/v1/upload/${uploadId}/blobs/${hash}`, { headers: { ...bearer(member), ...headers }, body })
}

/** A PUT announcing more bytes than it sends (fetch refuses a Content-Length that differs from the body). */
function putWithLength(
  member: Member,
  uploadId: string,
  hash: string,
  body: Buffer,
  contentLength: number,
): Promise<{ status: number; json: Record<string, unknown> | undefined }> {
  const url = new URL(`${server.url}/v1/upload/${uploadId}/blobs/${hash}`)
  return new Promise((resolve, reject) => {
    let answered = false
    const req = httpRequest(
      url,
      { method: 'PUT', headers: { ...bearer(member), 'content-type': 'application/octet-stream', 'content-length': String(contentLength) } },
      (response) => {
        answered = true
        let text = ''
        response.setEncoding('utf8')
        response.on('data', (chunk: string) => (text += chunk))
        response.on('end', () => {
          let json: Record<string, unknown> | undefined
          try {
            json = JSON.parse(text) as Record<string, unknown>
          } catch {
            json = undefined
          }
          resolve({ status: response.statusCode ?? 0, json })
          req.destroy()
        })
      },
    )
    req.on('error', (error) => {
      if (!answered) reject(error)
    })
    // The header claims more than is sent and the request never ends: the server must answer
    // without waiting for the rest.
    req.write(body)
  })
}

async function* inChunks(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let offset = 0; offset < bytes.length; offset += size) yield bytes.subarray(offset, offset + size)
}

function byHash<T extends { hash: string }>(blobs: readonly T[]): T[] {
  return [...blobs].sort((a, b) => a.hash.localeCompare(b.hash))
}

function presence(view: UploadSessionView): Record<string, boolean> {
  return Object.fromEntries(view.blobs.map((blob) => [blob.hash, blob.present]))
}

async function inFlight(member: Member, albumId: string): Promise<number> {
  return (await member.client.readUpgrade(albumId)).in_flight
}

describe('open an upload session', () => {
  it('answers 201 with upload_id, album_id, expires_at now + UPLOAD_SESSION_TTL_S and the declared blobs, none present', async () => {
    const member = await uploader(server, 'open')
    const albumId = await album(member)
    const b = bundle(300, [100, 50])
    const opened = await openRaw(member, declaration(albumId, b))
    expect(opened.status, opened.text).toBe(201)
    const view = opened.json as unknown as UploadSessionView
    expect(view.upload_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    expect(view.album_id).toBe(albumId)
    expect(view.expires_at).toBe(iso(server.clock.now() + TTL_S * 1000))
    expect(byHash(view.blobs)).toEqual(byHash(b.blobs.map((blob) => ({ ...blob, present: false, received: 0 }))))
    expect(Object.keys(view).sort()).toEqual(['album_id', 'blobs', 'expires_at', 'upload_id'])
    // Each session has its own id.
    const second = await member.client.openUploadSession(declaration(albumId, b))
    expect(second.upload_id).not.toBe(view.upload_id)
  })

  it('answers 409 error.directory.required before the account published a directory', async () => {
    const member = await registered(server, 'no-directory')
    const albumId = randomUUID()
    await member.client.provisionAlbum(albumId)
    const problem = await problemOf(member.client.openUploadSession(declaration(albumId, bundle())))
    expect(problem.status).toBe(409)
    expect(problem.code).toBe('error.directory.required')
    expect(await inFlight(member, albumId)).toBe(0)
  })

  it('answers another account’s album with 404 exactly like an unknown one', async () => {
    const owner = await uploader(server, 'album-owner')
    const stranger = await uploader(server, 'album-stranger')
    const albumId = await album(owner)
    const theirs = await problemOf(stranger.client.openUploadSession(declaration(albumId, bundle())))
    const unknown = await problemOf(stranger.client.openUploadSession(declaration(randomUUID(), bundle())))
    expect(theirs.status).toBe(404)
    expect(theirs.code).toBe('error.not_found')
    expect(unknown.status).toBe(404)
    expect(theirs.problem.detail).toBe(unknown.problem.detail)
    expect(await inFlight(owner, albumId)).toBe(0)
  })

  describe('refuses with 422, opening nothing', () => {
    let member: Uploader
    let albumId: string
    beforeAll(async () => {
      member = await uploader(server, 'refusals')
      albumId = await album(member)
    })

    const b = bundle(300, [100])
    const [original, derivative] = b.blobs as [Declared, Declared]
    const base = (): Record<string, unknown> => ({ ...declaration('00000000-0000-0000-0000-000000000000', b) })
    it.each<[string, (body: Record<string, unknown>) => Record<string, unknown>]>([
      ['a crypto_suite_id not in CRYPTO_SUITES', (body) => ({ ...body, crypto_suite_id: 2 })],
      ['no original', (body) => ({ ...body, ciphertext_hash: derivative.hash, blobs: [derivative] })],
      ['two originals', (body) => ({ ...body, blobs: [original, { ...derivative, role: 'original' }] })],
      ['a ciphertext_hash that is not the original’s', (body) => ({ ...body, ciphertext_hash: derivative.hash })],
      ['a ciphertext_hash no blob declares', (body) => ({ ...body, ciphertext_hash: 'a'.repeat(64) })],
      ['a hash declared twice', (body) => ({ ...body, blobs: [original, derivative, { ...derivative }] })],
      ['a blob over MAX_BLOB_BYTES', (body) => ({ ...body, blobs: [original, { ...derivative, size: MAX_BLOB_BYTES + 1 }] })],
      ['an uppercase hash', (body) => ({ ...body, blobs: [original, { ...derivative, hash: derivative.hash.toUpperCase() }] })],
      ['a hash of 63 characters', (body) => ({ ...body, blobs: [original, { ...derivative, hash: derivative.hash.slice(1) }] })],
      ['an uppercase ciphertext_hash', (body) => ({ ...body, ciphertext_hash: original.hash.toUpperCase() })],
      ['a negative size', (body) => ({ ...body, blobs: [original, { ...derivative, size: -1 }] })],
      ['a role other than original or derivative', (body) => ({ ...body, blobs: [original, { ...derivative, role: 'metadata' }] })],
      ['no blobs', (body) => ({ ...body, blobs: [] })],
      ['an unknown key', (body) => ({ ...body, title: 'x' })],
      ['an unknown key in a blob', (body) => ({ ...body, blobs: [original, { ...derivative, mime: 'image/jpeg' }] })],
      ['a missing album_id', ({ album_id: _, ...body }) => body],
    ])('%s', async (_case, change) => {
      const body = change({ ...base(), album_id: albumId })
      const refused = await openRaw(member, body)
      expect(refused.status, refused.text).toBe(422)
      expect(refused.json?.code).toBe('error.request.invalid')
      expect(await inFlight(member, albumId)).toBe(0)
    })

    it('accepts a blob of exactly MAX_BLOB_BYTES (the control for the case above)', async () => {
      const opened = await openRaw(member, { ...base(), album_id: albumId, blobs: [original, { ...derivative, size: MAX_BLOB_BYTES }] })
      expect(opened.status, opened.text).toBe(201)
      await member.client.abortUploadSession((opened.json as unknown as UploadSessionView).upload_id)
    })
  })

  describe('with a manifest_envelope', () => {
    it('accepts an envelope within the protocol range', async () => {
      const member = await uploader(server, 'envelope-ok')
      const albumId = await album(member)
      const b = bundle()
      const { envelope } = await signedManifest(member, { ciphertextHash: b.ciphertextHash, derivativeHashes: [], metadataBlobHash: null }, { albumId })
      const opened = await openRaw(member, { ...declaration(albumId, b), manifest_envelope: envelope })
      expect(opened.status, opened.text).toBe(201)
    })

    it.each([
      ['older than the album’s version', '2026-05-31'],
      ['older than PROTOCOL_MIN', '2024-12-31'],
      ['newer than PROTOCOL_MAX', '2026-11-02'],
    ])('answers a protocol_version %s with 426 and the accepted range', async (_case, version) => {
      const member = await uploader(server, 'envelope-426')
      const albumId = await album(member)
      const b = bundle()
      const { envelope } = await signedManifest(
        member,
        { ciphertextHash: b.ciphertextHash, derivativeHashes: [], metadataBlobHash: null },
        { albumId, protocolVersion: version },
      )
      const refused = await openRaw(member, { ...declaration(albumId, b), manifest_envelope: envelope })
      expect(refused.status, refused.text).toBe(426)
      expect(refused.json?.code).toBe('error.protocol.out_of_range')
      // The album is pinned to 2026-06-01, later than PROTOCOL_MIN.
      expect(refused.json?.protocol_min).toBe('2026-06-01')
      expect(refused.json?.protocol_max).toBe('2026-11-01')
      expect(await inFlight(member, albumId)).toBe(0)
    })

    it('refuses an envelope with an unknown key or naming another hash with 422', async () => {
      const member = await uploader(server, 'envelope-422')
      const albumId = await album(member)
      const b = bundle()
      const { envelope } = await signedManifest(member, { ciphertextHash: b.ciphertextHash, derivativeHashes: [], metadataBlobHash: null }, { albumId })
      const unknownKey = await openRaw(member, { ...declaration(albumId, b), manifest_envelope: { ...envelope, extra: 1 } })
      expect(unknownKey.status, unknownKey.text).toBe(422)
      const otherHash = await openRaw(member, { ...declaration(albumId, b), manifest_envelope: { ...envelope, ciphertext_hash: 'b'.repeat(64) } })
      expect(otherHash.status, otherHash.text).toBe(422)
      expect(await inFlight(member, albumId)).toBe(0)
    })
  })

  describe('present', () => {
    it('is true for bytes the caller already stores, and false for another account with the same bytes', async () => {
      const member = await uploader(server, 'present')
      const albumId = await album(member)
      const b = bundle(300, [100])
      const first = await member.client.openUploadSession(declaration(albumId, b))
      expect(Object.values(presence(first))).toEqual([false, false])
      // Only the original goes up.
      await member.client.putBlob(first.upload_id, b.ciphertextHash, b.original)

      const again = await member.client.openUploadSession(declaration(albumId, b))
      expect(presence(again)).toEqual({ [b.ciphertextHash]: true, [b.blobs[1]!.hash]: false })

      const other = await uploader(server, 'present-other')
      const otherAlbum = await album(other)
      const theirs = await other.client.openUploadSession(declaration(otherAlbum, b))
      expect(presence(theirs)).toEqual({ [b.ciphertextHash]: false, [b.blobs[1]!.hash]: false })
      // So the other account must send the bytes itself; then they are present for it too.
      await other.client.putBlob(theirs.upload_id, b.ciphertextHash, b.original)
      expect(presence(await other.client.uploadSessionStatus(theirs.upload_id))[b.ciphertextHash]).toBe(true)
    })

    it('is false when the file is gone from the folder even though the account once stored it', async () => {
      const member = await uploader(server, 'present-lost')
      const albumId = await album(member)
      const b = bundle(200, [])
      const first = await member.client.openUploadSession(declaration(albumId, b))
      await member.client.putBlob(first.upload_id, b.ciphertextHash, b.original)
      await deleteStored(server, b.ciphertextHash)
      const again = await member.client.openUploadSession(declaration(albumId, b))
      expect(presence(again)).toEqual({ [b.ciphertextHash]: false })
      // And a PUT really writes it again.
      await member.client.putBlob(again.upload_id, b.ciphertextHash, b.original)
      expect((await storedBytes(server, b.ciphertextHash))?.equals(b.original)).toBe(true)
    })
  })
})

describe('put blob bytes', () => {
  let member: Uploader
  let albumId: string
  beforeAll(async () => {
    member = await uploader(server, 'put')
    albumId = await album(member)
  })

  it('stores exactly the declared bytes with 204', async () => {
    const b = bundle(300, [100])
    const session = await member.client.openUploadSession(declaration(albumId, b))
    for (const [hash, bytes] of b.bytes) {
      const put = await putRaw(member, session.upload_id, hash, bytes)
      expect(put.status, put.text).toBe(204)
      expect(put.text).toBe('')
      expect((await storedBytes(server, hash))?.equals(bytes)).toBe(true)
    }
  })

  it('stores a zero-byte blob', async () => {
    const b = bundle(300, [0])
    const session = await member.client.openUploadSession(declaration(albumId, b))
    const empty = b.derivatives[0]!
    expect((await putRaw(member, session.upload_id, sha256Hex(empty), empty)).status).toBe(204)
    expect(presence(await member.client.uploadSessionStatus(session.upload_id))[sha256Hex(empty)]).toBe(true)
    expect((await storedBytes(server, sha256Hex(empty)))?.length).toBe(0)
  })

  function flipped(bytes: Buffer, at: number): Buffer {
    const copy = Buffer.from(bytes)
    copy[at] = copy[at]! ^ 0x01
    return copy
  }

  describe('answers wrong bytes with 422 error.upload.hash_mismatch and keeps nothing', () => {
    const wrong: [string, (bytes: Buffer) => Buffer][] = [
      ['one byte flipped (first)', (bytes) => flipped(bytes, 0)],
      ['one byte flipped (last)', (bytes) => flipped(bytes, bytes.length - 1)],
      ['one byte short', (bytes) => bytes.subarray(0, bytes.length - 1)],
      ['one byte extra', (bytes) => Buffer.concat([bytes, Buffer.from([0])])],
      ['empty', () => Buffer.alloc(0)],
      ['another blob’s bytes of the same size', (bytes) => ciphertext(bytes.length)],
    ]

    async function expectNothingKept(uploadId: string, hash: string, before: string[], send: () => Promise<{ status: number; code: unknown }>): Promise<void> {
      const rowsBefore = await countRows(server.database, ['blobs', 'upload_sessions', 'upload_blobs'])
      const answer = await send()
      expect(answer.status).toBe(422)
      expect(answer.code).toBe('error.upload.hash_mismatch')
      // A refused write cleans up before it answers.
      expect(await blobFiles(server)).toEqual(before)
      expect(await countRows(server.database, ['blobs', 'upload_sessions', 'upload_blobs'])).toEqual(rowsBefore)
      expect(await isStored(server, hash)).toBe(false)
      expect(presence(await member.client.uploadSessionStatus(uploadId))[hash]).toBe(false)
    }

    it.each(wrong)('%s, sent with a Content-Length', async (_case, corrupt) => {
      const b = bundle(4096, [])
      const session = await member.client.openUploadSession(declaration(albumId, b))
      const before = await blobFiles(server)
      await expectNothingKept(session.upload_id, b.ciphertextHash, before, async () => {
        const put = await putRaw(member, session.upload_id, b.ciphertextHash, corrupt(b.original))
        return { status: put.status, code: put.json?.code }
      })
      // The session still takes the right bytes afterwards.
      expect((await putRaw(member, session.upload_id, b.ciphertextHash, b.original)).status).toBe(204)
    })

    it.each(wrong)('%s, streamed in chunks without a Content-Length', async (_case, corrupt) => {
      const b = bundle(4096, [])
      const session = await member.client.openUploadSession(declaration(albumId, b))
      const before = await blobFiles(server)
      await expectNothingKept(session.upload_id, b.ciphertextHash, before, async () => {
        const problem = await problemOf(member.client.putBlob(session.upload_id, b.ciphertextHash, inChunks(corrupt(b.original), 100)))
        return { status: problem.status, code: problem.code }
      })
      await member.client.putBlob(session.upload_id, b.ciphertextHash, inChunks(b.original, 100))
      expect((await storedBytes(server, b.ciphertextHash))?.equals(b.original)).toBe(true)
    })

    // (A Content-Length smaller than the declaration is the "one byte short" case above: HTTP
    // gives no way to send more bytes than the header announces.)
    it('the right bytes under a Content-Length larger than declared, answered without waiting for the rest', async () => {
      const b = bundle(4096, [])
      const session = await member.client.openUploadSession(declaration(albumId, b))
      const before = await blobFiles(server)
      await expectNothingKept(session.upload_id, b.ciphertextHash, before, async () => {
        const put = await putWithLength(member, session.upload_id, b.ciphertextHash, b.original, b.original.length + 1)
        return { status: put.status, code: put.json?.code }
      })
    })
  })

  it('answers a hash the session did not declare with 404, storing nothing', async () => {
    const b = bundle(300, [])
    const session = await member.client.openUploadSession(declaration(albumId, b))
    const stray = ciphertext(300)
    const before = await blobFiles(server)
    const put = await putRaw(member, session.upload_id, sha256Hex(stray), stray)
    expect(put.status, put.text).toBe(404)
    expect(put.json?.code).toBe('error.not_found')
    expect(await blobFiles(server)).toEqual(before)
  })

  it('answers another account’s session with 404 exactly like an unknown one, storing nothing', async () => {
    const b = bundle(300, [])
    const session = await member.client.openUploadSession(declaration(albumId, b))
    const stranger = await uploader(server, 'put-stranger')
    const before = await blobFiles(server)
    const theirs = await putRaw(stranger, session.upload_id, b.ciphertextHash, b.original)
    const unknown = await putRaw(stranger, randomUUID(), b.ciphertextHash, b.original)
    expect(theirs.status).toBe(404)
    expect(theirs.json?.code).toBe('error.not_found')
    expect(unknown.status).toBe(404)
    expect(theirs.json?.detail).toBe(unknown.json?.detail)
    expect(await blobFiles(server)).toEqual(before)
    expect(presence(await member.client.uploadSessionStatus(session.upload_id))[b.ciphertextHash]).toBe(false)
  })

  it('answers a repeat PUT of a stored blob with 204 and leaves the bytes as they were', async () => {
    const b = bundle(300, [])
    const session = await member.client.openUploadSession(declaration(albumId, b))
    expect((await putRaw(member, session.upload_id, b.ciphertextHash, b.original)).status).toBe(204)
    const before = await blobFiles(server)
    expect((await putRaw(member, session.upload_id, b.ciphertextHash, b.original)).status).toBe(204)
    expect(await blobFiles(server)).toEqual(before)
    expect((await storedBytes(server, b.ciphertextHash))?.equals(b.original)).toBe(true)
  })

  it('answers 404 after the session is aborted, storing nothing', async () => {
    const b = bundle(300, [])
    const session = await member.client.openUploadSession(declaration(albumId, b))
    await member.client.abortUploadSession(session.upload_id)
    const before = await blobFiles(server)
    const put = await putRaw(member, session.upload_id, b.ciphertextHash, b.original)
    expect(put.status).toBe(404)
    expect(put.json?.code).toBe('error.not_found')
    expect(await blobFiles(server)).toEqual(before)
  })

  it('answers 404 once the session has expired, and 204 just before', async () => {
    const fresh = await uploader(server, 'put-expiry')
    const freshAlbum = await album(fresh)
    const early = bundle(300, [])
    const late = bundle(300, [])
    const session = await fresh.client.openUploadSession({
      ...declaration(freshAlbum, early),
      blobs: [...early.blobs, { ...late.blobs[0]!, role: 'derivative' }],
    })
    server.clock.advance(TTL_S * 1000 - 1)
    await fresh.client.putBlob(session.upload_id, early.ciphertextHash, early.original)
    server.clock.advance(1)
    const problem = await problemOf(fresh.client.putBlob(session.upload_id, late.ciphertextHash, late.original))
    expect(problem.status).toBe(404)
    expect(problem.code).toBe('error.not_found')
    expect(await isStored(server, late.ciphertextHash)).toBe(false)
  })

  it.each([
    ['application/json', { 'content-type': 'application/json' }],
    ['text/plain', { 'content-type': 'text/plain' }],
    ['application/cbor', { 'content-type': 'application/cbor' }],
  ])('refuses a Content-Type of %s with 415, storing nothing', async (_case, headers) => {
    const b = bundle(300, [])
    const session = await member.client.openUploadSession(declaration(albumId, b))
    const before = await blobFiles(server)
    const put = await putRaw(member, session.upload_id, b.ciphertextHash, b.original, headers)
    expect(put.status, put.text).toBe(415)
    expect(put.json?.code).toBe('error.request.unsupported_media_type')
    expect(await blobFiles(server)).toEqual(before)
  })

  it('refuses a malformed hash or upload id in the path with 400', async () => {
    const b = bundle(300, [])
    const session = await member.client.openUploadSession(declaration(albumId, b))
    expect((await putRaw(member, session.upload_id, b.ciphertextHash.toUpperCase(), b.original)).status).toBe(400)
    expect((await putRaw(member, session.upload_id, b.ciphertextHash.slice(1), b.original)).status).toBe(400)
    expect((await putRaw(member, session.upload_id.toUpperCase(), b.ciphertextHash, b.original)).status).toBe(400)
  })

  it('streams a blob sent through the SDK as many small chunks, stored and served back exactly', async () => {
    const original = ciphertext(50_000)
    const hash = sha256Hex(original)
    const session = await member.client.openUploadSession({
      album_id: albumId,
      crypto_suite_id: 1,
      ciphertext_hash: hash,
      blobs: [{ role: 'original', hash, size: original.length }],
    })
    let chunks = 0
    async function* counted(): AsyncGenerator<Uint8Array> {
      for await (const chunk of inChunks(original, 37)) {
        chunks++
        yield chunk
      }
    }
    await member.client.putBlob(session.upload_id, hash, counted())
    expect(chunks).toBe(Math.ceil(original.length / 37))
    expect((await storedBytes(server, hash))?.equals(original)).toBe(true)

    // uploadAsset finds the bytes already present, sends nothing and applies the create.
    const applied = await member.client.uploadAsset({ albumId, cryptoSuiteId: 1, original, sign: (hashes) => signedManifest(member, hashes, { albumId }) })
    expect(applied.sent).toBe(0)
    expect(Buffer.from(await member.client.downloadBlob(hash)).equals(original)).toBe(true)
  })
})

describe('session status', () => {
  it('has the open answer’s shape, with present flags and received following the blobs as they arrive', async () => {
    const member = await uploader(server, 'status')
    const albumId = await album(member)
    const b = bundle(300, [100, 50])
    const opened = await member.client.openUploadSession(declaration(albumId, b))
    const [, first, second] = b.blobs as [Declared, Declared, Declared]
    const expected = (present: string[]) => ({
      ...opened,
      blobs: byHash(b.blobs.map((blob) => ({ ...blob, present: present.includes(blob.hash), received: present.includes(blob.hash) ? blob.size : 0 }))),
    })
    const sorted = (view: UploadSessionView) => ({ ...view, blobs: byHash(view.blobs) })

    expect(sorted(await member.client.uploadSessionStatus(opened.upload_id))).toEqual(expected([]))
    server.clock.advance(1_000) // expires_at does not move
    await member.client.putBlob(opened.upload_id, first.hash, b.bytes.get(first.hash)!)
    expect(sorted(await member.client.uploadSessionStatus(opened.upload_id))).toEqual(expected([first.hash]))
    await member.client.putBlob(opened.upload_id, b.ciphertextHash, b.original)
    expect(sorted(await member.client.uploadSessionStatus(opened.upload_id))).toEqual(expected([first.hash, b.ciphertextHash]))
    await member.client.putBlob(opened.upload_id, second.hash, b.bytes.get(second.hash)!)
    expect(sorted(await member.client.uploadSessionStatus(opened.upload_id))).toEqual(expected(b.blobs.map((blob) => blob.hash)))
  })

  it('answers another account’s session with 404 exactly like an unknown one', async () => {
    const owner = await uploader(server, 'status-owner')
    const stranger = await uploader(server, 'status-stranger')
    const session = await owner.client.openUploadSession(declaration(await album(owner), bundle()))
    const theirs = await problemOf(stranger.client.uploadSessionStatus(session.upload_id))
    const unknown = await problemOf(stranger.client.uploadSessionStatus(randomUUID()))
    expect(theirs.status).toBe(404)
    expect(theirs.code).toBe('error.not_found')
    expect(unknown.status).toBe(404)
    expect(theirs.problem.detail).toBe(unknown.problem.detail)
  })
})

describe('abort', () => {
  it('answers 204, again 204 for the owner, and 404 for another account, whose attempt changes nothing', async () => {
    const owner = await uploader(server, 'abort-owner')
    const stranger = await uploader(server, 'abort-stranger')
    const albumId = await album(owner)
    const b = bundle(300, [])
    const mine = await owner.client.openUploadSession(declaration(albumId, b))
    const kept = await owner.client.openUploadSession(declaration(albumId, bundle()))

    const strangers = await raw(server, 'DELETE', `/v1/upload/${kept.upload_id}`, { headers: bearer(stranger) })
    expect(strangers.status).toBe(404)
    expect(strangers.json?.code).toBe('error.not_found')
    const unknown = await raw(server, 'DELETE', `/v1/upload/${randomUUID()}`, { headers: bearer(stranger) })
    expect(unknown.status).toBe(404)
    expect(strangers.json?.detail).toBe(unknown.json?.detail)
    expect(await inFlight(owner, albumId)).toBe(2)

    const first = await raw(server, 'DELETE', `/v1/upload/${mine.upload_id}`, { headers: bearer(owner) })
    expect(first.status).toBe(204)
    expect(first.text).toBe('')
    const second = await raw(server, 'DELETE', `/v1/upload/${mine.upload_id}`, { headers: bearer(owner) })
    expect(second.status).toBe(204)
    expect(await inFlight(owner, albumId)).toBe(1)
    // The session the stranger tried to abort still takes bytes.
    const kb = kept.blobs[0]!
    const stillOpen = await problemOf(owner.client.putBlob(kept.upload_id, kb.hash, ciphertext(kb.size)))
    expect(stillOpen.code).toBe('error.upload.hash_mismatch') // not 404: the session is open
  })
})

describe('in_flight', () => {
  it('counts open sessions of the album until they are aborted, closed by a lifecycle write or expired', async () => {
    const member = await uploader(server, 'in-flight')
    const albumId = await album(member)
    const otherAlbum = await album(member)
    expect(await inFlight(member, albumId)).toBe(0)

    const toAbort = await member.client.openUploadSession(declaration(albumId, bundle()))
    const toApply = bundle(300, [100])
    const applied = await member.client.openUploadSession(declaration(albumId, toApply))
    const toExpire = await member.client.openUploadSession(declaration(albumId, bundle()))
    await member.client.openUploadSession(declaration(otherAlbum, bundle()))
    expect(await inFlight(member, albumId)).toBe(3)
    expect(await inFlight(member, otherAlbum)).toBe(1)

    await member.client.abortUploadSession(toAbort.upload_id)
    expect(await inFlight(member, albumId)).toBe(2)

    for (const [hash, bytes] of toApply.bytes) await member.client.putBlob(applied.upload_id, hash, bytes)
    const { envelope, manifestCbor } = await signedManifest(
      member,
      { ciphertextHash: toApply.ciphertextHash, derivativeHashes: [], metadataBlobHash: null },
      { albumId },
    )
    await member.client.applyManifest(albumId, {
      manifest_envelope: envelope,
      manifest_cbor: Buffer.from(manifestCbor).toString('base64'),
      metadata_blob: null,
    })
    expect(await inFlight(member, albumId)).toBe(1)
    // The applied session is closed: it takes no more bytes.
    const closed = await problemOf(member.client.putBlob(applied.upload_id, toApply.ciphertextHash, toApply.original))
    expect(closed.status).toBe(404)

    const status = await member.client.uploadSessionStatus(toExpire.upload_id)
    server.clock.set(Date.parse(status.expires_at) - 1)
    expect(await inFlight(member, albumId)).toBe(1)
    server.clock.advance(1)
    expect(await inFlight(member, albumId)).toBe(0)
    expect(await inFlight(member, otherAlbum)).toBe(0)
  })
})
