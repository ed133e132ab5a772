// Provisioning binds an album id to one account once (a repeat by that account writes nothing,
// another account's id is refused), the list shows only the caller's albums oldest first, and
// the feed pages through exactly the manifests that were applied, to the owner only.
import { createHash, randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sha256Hex, type Feed } from '../../src/sdk/client.ts'
import { problemOf, raw } from '../support/actors.ts'
import { album, ciphertext, signedManifest, uploader, type Uploader } from '../support/albums.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

const PROTOCOL_CURRENT = '2026-06-01'
const iso = (ms: number) => new Date(ms).toISOString()

function bearer(member: Uploader): Record<string, string> {
  return { authorization: `Bearer ${member.client.tokens!.access_token}` }
}

function provisionRaw(member: Uploader, body: unknown) {
  return raw(server, 'POST', '/v1/albums', { headers: { ...bearer(member), 'content-type': 'application/json' }, body: JSON.stringify(body) })
}

function feedRaw(member: Uploader, albumId: string, query: string) {
  return raw(server, 'GET', `/v1/albums/${albumId}/feed${query}`, { headers: bearer(member) })
}

interface Applied {
  readonly syncSeq: number
  readonly assetId: string
  readonly manifest: Uint8Array
  readonly originalHash: string
  readonly appliedAt: number
}

/** Uploads and applies one bundle; answers what the server was sent and when. */
async function write(
  member: Uploader,
  albumId: string,
  options: { fileId?: string; metadata?: Uint8Array; action?: 'create' | 'replace'; prior?: string; originalBlobHash?: string } = {},
): Promise<Applied> {
  const fileId = options.fileId ?? randomUUID()
  const original = ciphertext(512)
  let manifest: Uint8Array | undefined
  const appliedAt = server.clock.now()
  const result = await member.client.uploadAsset({
    albumId,
    cryptoSuiteId: 1,
    original,
    ...(options.metadata === undefined ? {} : { metadata: options.metadata }),
    sign: async (hashes) => {
      const signed = await signedManifest(member, hashes, {
        albumId,
        fileId,
        action: options.action ?? 'create',
        prior: options.prior ?? null,
        originalBlobHash: options.originalBlobHash ?? null,
      })
      manifest = signed.manifestCbor
      return signed
    },
  })
  expect(result.replayed).toBe(false)
  return { syncSeq: result.sync_seq, assetId: result.asset_id, manifest: manifest!, originalHash: sha256Hex(original), appliedAt }
}

describe('provision', () => {
  it('creates with 201 and the current protocol version, then answers the same account 200 created false writing nothing', async () => {
    const member = await uploader(server, 'provision')
    const albumId = randomUUID()
    const t0 = server.clock.now()
    const first = await provisionRaw(member, { album_id: albumId })
    expect(first.status, first.text).toBe(201)
    expect(first.json).toEqual({ album_id: albumId, protocol_version: PROTOCOL_CURRENT, created: true })

    server.clock.advance(60_000)
    const again = await provisionRaw(member, { album_id: albumId })
    expect(again.status, again.text).toBe(200)
    expect(again.json).toEqual({ album_id: albumId, protocol_version: PROTOCOL_CURRENT, created: false })
    // Nothing written: still one album, created when it was first provisioned.
    expect((await member.client.listAlbums()).albums).toEqual([{ album_id: albumId, protocol_version: PROTOCOL_CURRENT, created_at: iso(t0) }])
  })

  it('the SDK reports created true then false', async () => {
    const member = await uploader(server, 'provision-sdk')
    const albumId = randomUUID()
    expect(await member.client.provisionAlbum(albumId)).toEqual({ album_id: albumId, protocol_version: PROTOCOL_CURRENT, created: true })
    expect(await member.client.provisionAlbum(albumId)).toEqual({ album_id: albumId, protocol_version: PROTOCOL_CURRENT, created: false })
  })

  it('refuses an id another account holds with 422 error.album.id_unavailable, and the album stays the first owner’s', async () => {
    const owner = await uploader(server, 'owner')
    const other = await uploader(server, 'other')
    const albumId = await album(owner)
    const refused = await provisionRaw(other, { album_id: albumId })
    expect(refused.status, refused.text).toBe(422)
    expect(refused.json?.code).toBe('error.album.id_unavailable')
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/)
    expect((await other.client.listAlbums()).albums).toEqual([])
    expect((await owner.client.listAlbums()).albums.map((a) => a.album_id)).toEqual([albumId])
    // The owner still provisions it as its own.
    expect((await owner.client.provisionAlbum(albumId)).created).toBe(false)
  })

  it.each([
    ['an uppercase id', (id: string) => ({ album_id: id.toUpperCase() })],
    ['an id without hyphens', (id: string) => ({ album_id: id.replaceAll('-', '') })],
    ['an id with braces', (id: string) => ({ album_id: `{${id}}` })],
    ['a number id', () => ({ album_id: 42 })],
    ['a missing id', () => ({})],
    ['an unknown key', (id: string) => ({ album_id: id, name: 'Holidays' })],
  ])('refuses %s with 422 and provisions nothing', async (_case, body) => {
    const member = await uploader(server, 'bad-id')
    const id = randomUUID()
    const refused = await provisionRaw(member, body(id))
    expect(refused.status, refused.text).toBe(422)
    expect(refused.json?.code).toBe('error.request.invalid')
    expect((await member.client.listAlbums()).albums).toEqual([])
    // The canonical spelling of the same id is still free.
    expect((await provisionRaw(member, { album_id: id })).status).toBe(201)
  })

  it('refuses a body that is not JSON with 415', async () => {
    const member = await uploader(server, 'media')
    const refused = await raw(server, 'POST', '/v1/albums', {
      headers: { ...bearer(member), 'content-type': 'text/plain' },
      body: JSON.stringify({ album_id: randomUUID() }),
    })
    expect(refused.status).toBe(415)
    expect(refused.json?.code).toBe('error.request.unsupported_media_type')
  })

  it('needs a bearer token', async () => {
    const refused = await raw(server, 'POST', '/v1/albums', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ album_id: randomUUID() }),
    })
    expect(refused.status).toBe(401)
    expect(refused.json?.code).toBe('error.auth.unauthenticated')
  })
})

describe('list own albums', () => {
  it('lists only the caller’s albums, oldest first, with album_id, protocol_version and created_at', async () => {
    const member = await uploader(server, 'lister')
    const stranger = await uploader(server, 'stranger')
    // Ids in descending order, so the order can only come from the creation time.
    const ids: string[] = [randomUUID(), randomUUID(), randomUUID()].sort().reverse()
    const times: number[] = []
    for (const id of ids) {
      times.push(server.clock.now())
      await member.client.provisionAlbum(id)
      server.clock.advance(1_000)
      await album(stranger)
    }
    const listed = await member.client.listAlbums()
    expect(listed).toEqual({ albums: ids.map((id, i) => ({ album_id: id, protocol_version: PROTOCOL_CURRENT, created_at: iso(times[i]!) })) })
    const theirs = (await stranger.client.listAlbums()).albums
    expect(theirs).toHaveLength(3)
    expect(theirs.some((a) => ids.includes(a.album_id))).toBe(false)
  })

  it('is empty for an account without albums', async () => {
    const member = await uploader(server, 'none')
    expect(await member.client.listAlbums()).toEqual({ albums: [] })
  })
})

describe('feed', () => {
  let owner: Uploader
  let albumId: string
  let applied: Applied[]
  let metadata: Buffer

  beforeAll(async () => {
    owner = await uploader(server, 'feed')
    albumId = await album(owner)
    metadata = ciphertext(77)
    const first = await write(owner, albumId, { metadata })
    server.clock.advance(5_000)
    const second = await write(owner, albumId)
    server.clock.advance(5_000)
    // A replace of the first asset continues its chain.
    const third = await write(owner, albumId, {
      fileId: first.assetId,
      action: 'replace',
      prior: sha256Hex(first.manifest),
      originalBlobHash: first.originalHash,
    })
    applied = [first, second, third]
    // Another album of the same account does not show up in this feed.
    await write(owner, await album(owner))
  })

  it('answers every applied manifest in order with its exact bytes, hash, metadata hash and time', async () => {
    const feed = await owner.client.feed(albumId)
    const seqs = applied.map((a) => a.syncSeq)
    expect(seqs[0]! < seqs[1]! && seqs[1]! < seqs[2]!).toBe(true)
    expect(feed.entries).toHaveLength(3)
    expect(feed.next_after).toBe(seqs[2])
    const [first, second, third] = feed.entries
    expect(first).toEqual({
      sync_seq: seqs[0],
      asset_id: applied[0]!.assetId,
      action: 'create',
      manifest_cbor: Buffer.from(applied[0]!.manifest).toString('base64'),
      envelope_hash: createHash('sha256').update(applied[0]!.manifest).digest('hex'),
      metadata_blob_hash: sha256Hex(metadata),
      applied_at: iso(applied[0]!.appliedAt),
    })
    // No metadata blob: the member is absent, not null.
    expect(second).toEqual({
      sync_seq: seqs[1],
      asset_id: applied[1]!.assetId,
      action: 'create',
      manifest_cbor: Buffer.from(applied[1]!.manifest).toString('base64'),
      envelope_hash: sha256Hex(applied[1]!.manifest),
      applied_at: iso(applied[1]!.appliedAt),
    })
    expect(second).not.toHaveProperty('metadata_blob_hash')
    expect(third).toEqual({
      sync_seq: seqs[2],
      asset_id: applied[0]!.assetId,
      action: 'replace',
      manifest_cbor: Buffer.from(applied[2]!.manifest).toString('base64'),
      envelope_hash: sha256Hex(applied[2]!.manifest),
      applied_at: iso(applied[2]!.appliedAt),
    })
    // The base64 decodes back to exactly the bytes that were applied.
    for (const [i, entry] of feed.entries.entries()) expect(Buffer.from(entry.manifest_cbor, 'base64').equals(Buffer.from(applied[i]!.manifest))).toBe(true)
  })

  it('pages with after and limit; next_after is the last sync_seq, or after itself on an empty page', async () => {
    const seqs = applied.map((a) => a.syncSeq)
    const pages: Feed[] = []
    let after = 0
    for (;;) {
      const page = await owner.client.feed(albumId, after, 1)
      pages.push(page)
      if (page.entries.length === 0) break
      expect(page.entries).toHaveLength(1)
      expect(page.next_after).toBe(page.entries[0]!.sync_seq)
      after = page.next_after
    }
    expect(pages.flatMap((p) => p.entries.map((e) => e.sync_seq))).toEqual(seqs)
    expect(pages.at(-1)).toEqual({ entries: [], next_after: seqs[2] })

    const two = await owner.client.feed(albumId, 0, 2)
    expect(two.entries.map((e) => e.sync_seq)).toEqual(seqs.slice(0, 2))
    expect(two.next_after).toBe(seqs[1])
    const rest = await owner.client.feed(albumId, seqs[0]!, 1000)
    expect(rest.entries.map((e) => e.sync_seq)).toEqual(seqs.slice(1))
    expect(await owner.client.feed(albumId, 999_999, 10)).toEqual({ entries: [], next_after: 999_999 })
  })

  it('defaults to after=0 and limit=100', async () => {
    const response = await feedRaw(owner, albumId, '')
    expect(response.status).toBe(200)
    expect((response.json as unknown as Feed).entries.map((e) => e.sync_seq)).toEqual(applied.map((a) => a.syncSeq))
  })

  it('answers an empty album’s feed with no entries and next_after = after', async () => {
    const empty = await album(owner)
    expect(await owner.client.feed(empty)).toEqual({ entries: [], next_after: 0 })
    expect(await owner.client.feed(empty, 17, 5)).toEqual({ entries: [], next_after: 17 })
  })

  it.each([
    ['limit=0', '?after=0&limit=0'],
    ['limit=1001', '?after=0&limit=1001'],
    ['limit=-1', '?limit=-1'],
    ['limit=abc', '?limit=abc'],
    ['limit=1.5', '?limit=1.5'],
    ['after=-1', '?after=-1&limit=10'],
    ['after=abc', '?after=abc'],
  ])('refuses %s with 400', async (_case, query) => {
    const response = await feedRaw(owner, albumId, query)
    expect(response.status, response.text).toBe(400)
    expect(response.json?.code).toBe('error.request.malformed')
  })

  it('accepts limit=1 and limit=1000', async () => {
    expect((await feedRaw(owner, albumId, '?limit=1')).status).toBe(200)
    expect((await feedRaw(owner, albumId, '?limit=1000')).status).toBe(200)
  })

  it('answers another account’s album exactly like an unknown one (404)', async () => {
    const stranger = await uploader(server, 'feed-stranger')
    const theirs = await problemOf(stranger.client.feed(albumId))
    const unknown = await problemOf(stranger.client.feed(randomUUID()))
    expect(theirs.status).toBe(404)
    expect(theirs.code).toBe('error.not_found')
    const { instance: _a, ...theirsRest } = theirs.problem
    const { instance: _b, ...unknownRest } = unknown.problem
    expect(theirsRest).toEqual(unknownRest)
    expect(unknown.status).toBe(404)
  })

  it('refuses a malformed album id in the path with 400', async () => {
    const response = await feedRaw(owner, albumId.toUpperCase(), '')
    expect(response.status).toBe(400)
    expect(response.json?.code).toBe('error.request.malformed')
  })
})
