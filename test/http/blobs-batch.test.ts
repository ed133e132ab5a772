// A batch download answers each hash exactly as the single download would decide it (the bytes
// of a blob a live asset of the caller references; 404 alike for another account's and an
// unknown hash; 451 when taken down), in request order, within a byte budget decided from the
// database before anything is read (413 for the blobs past it); and the SDK splits and re-asks.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decodeCanonical } from '../../src/codec/cbor.ts'
import { BLOB_BATCH_MAX_HASHES } from '../../src/contract/constants.ts'
import { CofferAdmin } from '../../src/sdk/admin.ts'
import { CofferClient, sha256Hex } from '../../src/sdk/client.ts'
import { album, ciphertext, signedManifest, uploader, type Uploader } from '../support/albums.ts'
import { overwriteStored } from '../support/blobs.ts'
import { startBucket, type TestBucket } from '../support/bucket.ts'
import { bearer } from '../support/bundles.ts'
import { startServer, type TestServer } from '../support/server.ts'

/** The test server's BLOB_BATCH_MAX_BYTES: small, so that a few blobs go past it. */
const BUDGET = 100_000
const ADMIN_TOKEN = 'blobs-batch-test-admin-token-0123456789'

let server: TestServer
beforeAll(async () => {
  server = await startServer({ BLOB_BATCH_MAX_BYTES: String(BUDGET), ADMIN_TOKEN })
})
afterAll(() => server.close())

type Item = { hash: string; status: number; bytes?: Uint8Array; code?: string }

interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly body: Buffer
  /** The decoded CBOR array of a 200. */
  readonly items: Item[]
  /** The problem of any other status. */
  readonly problem: Record<string, unknown> | undefined
}

async function batch(target: TestServer, headers: Record<string, string>, body: string): Promise<Answer> {
  const response = await fetch(`${target.url}/v1/blobs/batch`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body })
  const bytes = Buffer.from(await response.arrayBuffer())
  const ok = response.status === 200
  return {
    status: response.status,
    headers: response.headers,
    body: bytes,
    // decodeCanonical: the answer is canonical CBOR, or this throws.
    items: ok ? (decodeCanonical(bytes) as Item[]) : [],
    problem: ok ? undefined : (JSON.parse(bytes.toString('utf8')) as Record<string, unknown>),
  }
}

const ask = (member: Uploader, hashes: readonly string[], target = server) => batch(target, bearer(member), JSON.stringify({ hashes }))

const hex = (bytes: Uint8Array) => sha256Hex(bytes)

interface Asset {
  readonly albumId: string
  readonly fileId: string
  readonly original: Buffer
  readonly derivative: Buffer | undefined
  readonly metadata: Buffer | undefined
  readonly manifest: Buffer
}

async function createAsset(member: Uploader, sizes: { original: number; derivative?: number; metadata?: number }): Promise<Asset> {
  const albumId = await album(member)
  const fileId = randomUUID()
  const original = ciphertext(sizes.original)
  const derivative = sizes.derivative === undefined ? undefined : ciphertext(sizes.derivative)
  const metadata = sizes.metadata === undefined ? undefined : ciphertext(sizes.metadata)
  let manifest: Uint8Array | undefined
  await member.client.uploadAsset({
    albumId,
    cryptoSuiteId: 1,
    original,
    ...(derivative === undefined ? {} : { derivatives: [derivative] }),
    ...(metadata === undefined ? {} : { metadata }),
    sign: async (hashes) => {
      const signed = await signedManifest(member, hashes, { albumId, fileId })
      manifest = signed.manifestCbor
      return signed
    },
  })
  return { albumId, fileId, original, derivative, metadata, manifest: Buffer.from(manifest!) }
}

async function bytesReadCounter(target = server): Promise<number> {
  const text = await (await fetch(`${target.url}/metrics`)).text()
  const line = text.split('\n').find((l) => l.startsWith('coffer_blob_bytes_read_total '))
  if (line === undefined) throw new Error('coffer_blob_bytes_read_total is not exported')
  return Number(line.split(' ')[1])
}

/** An item without its hash: what tells two refusals apart, if anything does. */
const shape = ({ hash: _hash, ...rest }: Item) => rest

describe('a batch of the caller’s blobs', () => {
  let member: Uploader
  let asset: Asset
  beforeAll(async () => {
    member = await uploader(server, 'batch')
    // The original is past the size at which the answer passes bytes through uncopied; the others are below it.
    asset = await createAsset(member, { original: 30_000, derivative: 700, metadata: 120 })
  })

  it('answers every hash in request order with its exact bytes, as canonical CBOR, not stored by any cache', async () => {
    const blobs = [asset.metadata!, asset.manifest, asset.original, asset.derivative!]
    const answer = await ask(member, blobs.map(hex))
    expect(answer.status).toBe(200)
    expect(answer.headers.get('content-type')).toBe('application/cbor')
    expect(answer.headers.get('content-length')).toBe(String(answer.body.length))
    expect(answer.headers.get('cache-control')).toBe('no-store')
    expect(answer.headers.get('x-request-id')).toBeTruthy()
    expect(answer.items.map((item) => Object.keys(item).sort())).toEqual(blobs.map(() => ['bytes', 'hash', 'status']))
    answer.items.forEach((item, i) => {
      expect(item.hash).toBe(hex(blobs[i]!))
      expect(item.status).toBe(200)
      expect(Buffer.from(item.bytes!).equals(blobs[i]!)).toBe(true)
    })
    // Another order, another answer order.
    const reversed = await ask(member, blobs.map(hex).reverse())
    expect(reversed.items.map((item) => item.hash)).toEqual(blobs.map(hex).reverse())
  })

  it('echoes X-Request-Id, as every answer does', async () => {
    const answer = await batch(server, { ...bearer(member), 'x-request-id': 'batch-request-7' }, JSON.stringify({ hashes: [hex(asset.derivative!)] }))
    expect(answer.status).toBe(200)
    expect(answer.headers.get('x-request-id')).toBe('batch-request-7')
  })

  it('counts the bytes it reads in coffer_blob_bytes_read_total', async () => {
    const before = await bytesReadCounter()
    expect((await ask(member, [hex(asset.original), hex(asset.derivative!)])).status).toBe(200)
    expect((await bytesReadCounter()) - before).toBe(asset.original.length + asset.derivative!.length)
  })

  it(`takes ${BLOB_BATCH_MAX_HASHES} hashes, each unknown one answered 404`, async () => {
    const hashes = [hex(asset.derivative!), ...Array.from({ length: BLOB_BATCH_MAX_HASHES - 1 }, () => hex(ciphertext(8)))]
    const answer = await ask(member, hashes)
    expect(answer.status).toBe(200)
    expect(answer.items).toHaveLength(BLOB_BATCH_MAX_HASHES)
    expect(answer.items[0]?.status).toBe(200)
    for (const item of answer.items.slice(1)) expect(item).toEqual({ hash: item.hash, status: 404, code: 'error.not_found' })
  })
})

describe('what the caller may not read', () => {
  it('another account’s blob answers 404 exactly like an unknown hash, even when the caller uploaded the same bytes unapplied; the caller’s own are still served', async () => {
    const owner = await uploader(server, 'owner')
    const stranger = await uploader(server, 'stranger')
    const theirs = await createAsset(owner, { original: 2_000, metadata: 100 })
    const own = await createAsset(stranger, { original: 1_500 })
    const unknown = hex(ciphertext(10))
    const answer = await ask(stranger, [hex(theirs.original), unknown, hex(own.original), hex(theirs.metadata!)])
    expect(answer.status).toBe(200)
    const [other, none, mine, otherMetadata] = answer.items as [Item, Item, Item, Item]
    expect(other).toEqual({ hash: hex(theirs.original), status: 404, code: 'error.not_found' })
    expect(shape(other)).toEqual(shape(none))
    expect(shape(otherMetadata)).toEqual(shape(none))
    expect(Buffer.from(mine.bytes!).equals(own.original)).toBe(true)

    // The stranger uploads the very same bytes but applies nothing: still not theirs to read.
    const strangerAlbum = await album(stranger)
    const hash = hex(theirs.original)
    const session = await stranger.client.openUploadSession({
      album_id: strangerAlbum,
      crypto_suite_id: 1,
      ciphertext_hash: hash,
      blobs: [{ role: 'original', hash, size: theirs.original.length }],
    })
    await stranger.client.putBlob(session.upload_id, hash, theirs.original)
    const again = await ask(stranger, [hash, unknown])
    expect(shape(again.items[0]!)).toEqual(shape(again.items[1]!))
    // The owner still reads it.
    expect(Buffer.from((await ask(owner, [hash])).items[0]!.bytes!).equals(theirs.original)).toBe(true)
  })

  it('a taken-down asset’s blobs answer 451 error.moderation.taken_down, the rest of the batch is served, and no withheld byte is read', async () => {
    const member = await uploader(server, 'taken-down')
    const gone = await createAsset(member, { original: 3_000, metadata: 100 })
    const kept = await createAsset(member, { original: 2_500 })
    await new CofferAdmin({ baseUrl: server.url, adminToken: ADMIN_TOKEN }).takeDown(gone.fileId, 'test')
    const before = await bytesReadCounter()
    const answer = await ask(member, [hex(gone.original), hex(kept.original), hex(gone.metadata!)])
    expect(answer.status).toBe(200)
    expect(answer.items[0]).toEqual({ hash: hex(gone.original), status: 451, code: 'error.moderation.taken_down' })
    expect(Buffer.from(answer.items[1]!.bytes!).equals(kept.original)).toBe(true)
    expect(answer.items[2]).toEqual({ hash: hex(gone.metadata!), status: 451, code: 'error.moderation.taken_down' })
    expect((await bytesReadCounter()) - before).toBe(kept.original.length)
    // As the single download says.
    expect((await fetch(`${server.url}/v1/blobs/${hex(gone.original)}`, { headers: bearer(member) })).status).toBe(451)
  })
})

describe(`the byte budget (BLOB_BATCH_MAX_BYTES=${BUDGET})`, () => {
  let member: Uploader
  let blobs: Buffer[]
  let larger: Buffer
  beforeAll(async () => {
    member = await uploader(server, 'budget')
    blobs = []
    for (const size of [40_000, 40_000, 40_000, 10_000]) blobs.push((await createAsset(member, { original: size })).original)
    larger = (await createAsset(member, { original: BUDGET + 1 })).original
  })

  it('serves blobs while their sizes fit, in request order, answers 413 error.request.too_large for each past it, and reads only the served ones', async () => {
    const before = await bytesReadCounter()
    const answer = await ask(member, blobs.map(hex))
    expect(answer.status).toBe(200)
    expect(answer.items.map((item) => item.status)).toEqual([200, 200, 413, 200])
    expect(answer.items[2]).toEqual({ hash: hex(blobs[2]!), status: 413, code: 'error.request.too_large' })
    for (const i of [0, 1, 3]) expect(Buffer.from(answer.items[i]!.bytes!).equals(blobs[i]!)).toBe(true)
    // Decided from the database before reading: the refused blob was never read.
    expect((await bytesReadCounter()) - before).toBe(40_000 + 40_000 + 10_000)
    // The refused one is served in the next batch.
    const next = await ask(member, [hex(blobs[2]!)])
    expect(Buffer.from(next.items[0]!.bytes!).equals(blobs[2]!)).toBe(true)
  })

  it('answers 413 for a blob larger than the whole budget, however it is asked for; the single download serves it', async () => {
    const answer = await ask(member, [hex(larger), hex(blobs[3]!)])
    expect(answer.items.map((item) => item.status)).toEqual([413, 200])
    const single = await fetch(`${server.url}/v1/blobs/${hex(larger)}`, { headers: bearer(member) })
    expect(Buffer.from(await single.arrayBuffer()).equals(larger)).toBe(true)
  })

  it('a blob of exactly the budget is served (the control for the case above)', async () => {
    const exact = (await createAsset(member, { original: BUDGET })).original
    const answer = await ask(member, [hex(exact), hex(blobs[3]!)])
    expect(answer.items.map((item) => item.status)).toEqual([200, 413])
    expect(Buffer.from(answer.items[0]!.bytes!).equals(exact)).toBe(true)
  })
})

describe('requests refused as a whole', () => {
  let member: Uploader
  let hash: string
  beforeAll(async () => {
    member = await uploader(server, 'refused')
    hash = hex((await createAsset(member, { original: 500 })).original)
  })

  it.each<[string, () => unknown]>([
    ['no hashes', () => ({ hashes: [] })],
    [`${BLOB_BATCH_MAX_HASHES + 1} hashes`, () => ({ hashes: Array.from({ length: BLOB_BATCH_MAX_HASHES + 1 }, () => hex(ciphertext(8))) })],
    ['a hash twice', () => ({ hashes: [hash, hex(ciphertext(8)), hash] })],
    ['an uppercase hash', () => ({ hashes: [hash.toUpperCase()] })],
    ['a hash that is not hex', () => ({ hashes: [`${hash.slice(1)}g`] })],
    ['a hash of 63 characters', () => ({ hashes: [hash.slice(1)] })],
    ['a hash that is not a string', () => ({ hashes: [42] })],
    ['hashes that are not an array', () => ({ hashes: hash })],
    ['no hashes member', () => ({})],
    ['an unknown member (the body is strict)', () => ({ hashes: [hash], extra: true })],
    ['a body that is not an object', () => [hash]],
  ])('%s: 422 error.request.invalid', async (_case, body) => {
    const answer = await batch(server, bearer(member), JSON.stringify(body()))
    expect(answer.status).toBe(422)
    expect(answer.problem?.code).toBe('error.request.invalid')
    expect(answer.headers.get('content-type')).toContain('application/problem+json')
  })

  it('the same request with one valid hash is served (the control for the cases above)', async () => {
    expect((await ask(member, [hash])).items[0]?.status).toBe(200)
  })

  it('malformed JSON: 400 error.request.malformed', async () => {
    const answer = await batch(server, bearer(member), '{"hashes": [')
    expect(answer.status).toBe(400)
    expect(answer.problem?.code).toBe('error.request.malformed')
  })

  it('another media type: 415 error.request.unsupported_media_type', async () => {
    const response = await fetch(`${server.url}/v1/blobs/batch`, {
      method: 'POST',
      headers: { ...bearer(member), 'content-type': 'application/cbor' },
      body: JSON.stringify({ hashes: [hash] }),
    })
    expect(response.status).toBe(415)
    expect(((await response.json()) as { code: string }).code).toBe('error.request.unsupported_media_type')
  })

  it('no bearer token, or a dead one: 401 with a Bearer challenge and no byte of the blob', async () => {
    for (const headers of [{}, { authorization: 'Bearer not-a-token' }]) {
      const answer = await batch(server, headers, JSON.stringify({ hashes: [hash] }))
      expect(answer.status).toBe(401)
      expect(answer.problem?.code).toBe('error.auth.unauthenticated')
      expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer realm="coffer"/)
    }
  })

  it('a stored blob whose length is not the recorded one: 500 error.internal, never wrong bytes', async () => {
    const damaged = await createAsset(member, { original: 6_000 })
    await overwriteStored(server, hex(damaged.original), damaged.original.subarray(0, 5_000))
    const answer = await ask(member, [hash, hex(damaged.original)])
    expect(answer.status).toBe(500)
    expect(answer.problem?.code).toBe('error.internal')
    expect(answer.body.includes(damaged.original.subarray(0, 64))).toBe(false)
  })
})

describe('the SDK’s downloadBlobs', () => {
  let member: Uploader
  /** Requests the client sent, as "METHOD path". */
  let sent: string[]
  beforeAll(async () => {
    member = await uploader(server, 'sdk')
  })

  /** A client on the member's session whose requests are recorded. */
  function recordingClient(): CofferClient {
    sent = []
    return new CofferClient({
      baseUrl: server.url,
      tokens: member.client.tokens,
      now: server.clock.now,
      fetch: (input, init) => {
        sent.push(`${init?.method ?? 'GET'} ${new URL(String(input)).pathname}`)
        return fetch(input, init)
      },
    })
  }

  it(`splits more than ${BLOB_BATCH_MAX_HASHES} hashes into batches of at most ${BLOB_BATCH_MAX_HASHES}; every hash is served or refused`, async () => {
    const asset = await createAsset(member, { original: 3_000, derivative: 500, metadata: 100 })
    const mine = [asset.original, asset.derivative!, asset.metadata!]
    const unknown = Array.from({ length: 2 * BLOB_BATCH_MAX_HASHES + 7 }, () => hex(ciphertext(8)))
    const got = await recordingClient().downloadBlobs([...unknown.slice(0, 150), ...mine.map(hex), ...unknown.slice(150)])
    expect(sent).toEqual(['POST /v1/blobs/batch', 'POST /v1/blobs/batch', 'POST /v1/blobs/batch'])
    expect([...got.blobs.keys()].sort()).toEqual(mine.map(hex).sort())
    for (const bytes of mine) expect(Buffer.from(got.blobs.get(hex(bytes))!).equals(bytes)).toBe(true)
    expect(got.refused.size).toBe(unknown.length)
    for (const hash of unknown) expect(got.refused.get(hash)).toEqual({ status: 404, code: 'error.not_found' })
  })

  it('asks again in a next batch for the blobs the budget left out, and alone for one larger than the whole budget', async () => {
    const fit = []
    for (const size of [45_000, 45_000, 45_000]) fit.push((await createAsset(member, { original: size })).original)
    const larger = (await createAsset(member, { original: BUDGET + 10 })).original
    const got = await recordingClient().downloadBlobs([larger, ...fit].map(hex))
    // First batch: the larger one 413 before anything was served (fetched alone), two served, one
    // left out; the second batch serves that one.
    expect(sent).toEqual(['POST /v1/blobs/batch', `GET /v1/blobs/${hex(larger)}`, 'POST /v1/blobs/batch'])
    expect(got.refused.size).toBe(0)
    for (const bytes of [larger, ...fit]) expect(Buffer.from(got.blobs.get(hex(bytes))!).equals(bytes)).toBe(true)
  })

  it('reports a taken-down blob as refused with 451, before its size is weighed (a blob larger than the budget too)', async () => {
    const larger = await createAsset(member, { original: BUDGET + 20 })
    const small = await createAsset(member, { original: 1_000 })
    const admin = new CofferAdmin({ baseUrl: server.url, adminToken: ADMIN_TOKEN })
    await admin.takeDown(larger.fileId, 'test')
    await admin.takeDown(small.fileId, 'test')
    const got = await recordingClient().downloadBlobs([hex(larger.original), hex(small.original)])
    expect(sent).toEqual(['POST /v1/blobs/batch'])
    expect(got.blobs.size).toBe(0)
    expect(got.refused.get(hex(larger.original))).toEqual({ status: 451, code: 'error.moderation.taken_down' })
    expect(got.refused.get(hex(small.original))).toEqual({ status: 451, code: 'error.moderation.taken_down' })
  })
})

describe('BLOB_DOWNLOAD=redirect on a bucket', () => {
  let bucket: TestBucket
  let redirecting: TestServer
  beforeAll(async () => {
    bucket = await startBucket()
    redirecting = await startServer({ ...bucket.env(`batch-${randomUUID()}`), BLOB_DOWNLOAD: 'redirect' })
  })
  afterAll(async () => {
    await redirecting?.close()
    await bucket?.close()
  })

  it('the batch streams the bytes itself where the single download redirects', async () => {
    const member = await uploader(redirecting, 'redirect')
    const asset = await createAsset(member, { original: 20_000, metadata: 200 })
    expect(redirecting.deps.blobs.kind).toBe('s3')
    const single = await fetch(`${redirecting.url}/v1/blobs/${hex(asset.original)}`, { headers: bearer(member), redirect: 'manual' })
    expect(single.status).toBe(307)
    const before = await bytesReadCounter(redirecting)
    const answer = await ask(member, [hex(asset.original), hex(asset.metadata!)], redirecting)
    expect(answer.status).toBe(200)
    expect(Buffer.from(answer.items[0]!.bytes!).equals(asset.original)).toBe(true)
    expect(Buffer.from(answer.items[1]!.bytes!).equals(asset.metadata!)).toBe(true)
    expect((await bytesReadCounter(redirecting)) - before).toBe(asset.original.length + asset.metadata!.length)
  })
})
