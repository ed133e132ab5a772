// A blob download serves exactly the bytes of a blob a live asset of the caller references
// (original, derivative, metadata, provenance), with an ETag, conditional and single-range
// requests that read only the range asked for, and answers 404 for anything else.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { collectGarbage } from '../../src/features/maintenance/gc.service.ts'
import { sha256Hex } from '../../src/sdk/client.ts'
import { problemOf, raw } from '../support/actors.ts'
import { album, ciphertext, signedManifest, uploader, type Uploader } from '../support/albums.ts'
import { deletionFor } from '../support/bundles.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

function bearer(member: Uploader): Record<string, string> {
  return { authorization: `Bearer ${member.client.tokens!.access_token}` }
}

/** The raw answer with its body as bytes. */
async function get(member: Uploader | null, hash: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${server.url}/v1/blobs/${hash}`, { headers: { ...(member === null ? {} : bearer(member)), ...headers } })
  const body = Buffer.from(await response.arrayBuffer())
  let json: Record<string, unknown> | undefined
  try {
    json = JSON.parse(body.toString('utf8')) as Record<string, unknown>
  } catch {
    json = undefined
  }
  return { status: response.status, headers: response.headers, body, json }
}

interface Asset {
  readonly fileId: string
  readonly original: Buffer
  readonly derivative: Buffer
  readonly metadata: Buffer
  readonly manifest: Buffer
}

async function createAsset(member: Uploader, albumId: string, originalSize = 3_000): Promise<Asset> {
  const fileId = randomUUID()
  const original = ciphertext(originalSize)
  const derivative = ciphertext(700)
  const metadata = ciphertext(120)
  let manifest: Uint8Array | undefined
  await member.client.uploadAsset({
    albumId,
    cryptoSuiteId: 1,
    original,
    derivatives: [derivative],
    metadata,
    sign: async (hashes) => {
      const signed = await signedManifest(member, hashes, { albumId, fileId })
      manifest = signed.manifestCbor
      return signed
    },
  })
  return { fileId, original, derivative, metadata, manifest: Buffer.from(manifest!) }
}

async function bytesReadCounter(): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text()
  const line = text.split('\n').find((l) => l.startsWith('coffer_blob_bytes_read_total '))
  if (line === undefined) throw new Error('coffer_blob_bytes_read_total is not exported')
  return Number(line.split(' ')[1])
}

describe('a live asset’s blobs', () => {
  let member: Uploader
  let asset: Asset
  beforeAll(async () => {
    member = await uploader(server, 'download')
    asset = await createAsset(member, await album(member))
  })

  it.each([
    ['original', (a: Asset) => a.original],
    ['derivative', (a: Asset) => a.derivative],
    ['metadata', (a: Asset) => a.metadata],
    ['provenance (the manifest bytes)', (a: Asset) => a.manifest],
  ])('serves the %s: exact bytes, octet-stream, ETag = quoted hash, Accept-Ranges bytes', async (_role, pick) => {
    const bytes = pick(asset)
    const hash = sha256Hex(bytes)
    const answer = await get(member, hash)
    expect(answer.status).toBe(200)
    expect(answer.body.equals(bytes)).toBe(true)
    expect(answer.headers.get('content-type')).toBe('application/octet-stream')
    expect(answer.headers.get('etag')).toBe(`"${hash}"`)
    expect(answer.headers.get('accept-ranges')).toBe('bytes')
    expect(answer.headers.get('content-length')).toBe(String(bytes.length))
    // The SDK reads the same bytes.
    expect(Buffer.from(await member.client.downloadBlob(hash)).equals(bytes)).toBe(true)
  })

  it('answers If-None-Match with the ETag by 304 and no body', async () => {
    const hash = sha256Hex(asset.original)
    const answer = await get(member, hash, { 'if-none-match': `"${hash}"` })
    expect(answer.status).toBe(304)
    expect(answer.body.length).toBe(0)
    expect(answer.headers.get('etag')).toBe(`"${hash}"`)
  })

  it('compares If-None-Match weakly and through a list, as RFC 9110 asks', async () => {
    const hash = sha256Hex(asset.original)
    expect((await get(member, hash, { 'if-none-match': `W/"${hash}"` })).status).toBe(304)
    expect((await get(member, hash, { 'if-none-match': `"${'0'.repeat(64)}", "${hash}"` })).status).toBe(304)
    expect((await get(member, hash, { 'if-none-match': '*' })).status).toBe(304)
  })

  it('serves the whole blob for an If-None-Match naming another tag', async () => {
    const hash = sha256Hex(asset.original)
    const answer = await get(member, hash, { 'if-none-match': `"${sha256Hex(asset.derivative)}"` })
    expect(answer.status).toBe(200)
    expect(answer.body.equals(asset.original)).toBe(true)
  })

  it('answers HEAD with the same headers and no body, reading nothing from storage', async () => {
    const hash = sha256Hex(asset.original)
    const before = await bytesReadCounter()
    const head = await fetch(`${server.url}/v1/blobs/${hash}`, { method: 'HEAD', headers: bearer(member) })
    expect(head.status).toBe(200)
    expect(head.headers.get('content-length')).toBe(String(asset.original.length))
    expect(head.headers.get('etag')).toBe(`"${hash}"`)
    expect(head.headers.get('accept-ranges')).toBe('bytes')
    expect(head.headers.get('content-type')).toBe('application/octet-stream')
    expect((await head.arrayBuffer()).byteLength).toBe(0)
    const ranged = await fetch(`${server.url}/v1/blobs/${hash}`, { method: 'HEAD', headers: { ...bearer(member), range: 'bytes=10-19' } })
    expect(ranged.status).toBe(206)
    expect(ranged.headers.get('content-range')).toBe(`bytes 10-19/${asset.original.length}`)
    expect(ranged.headers.get('content-length')).toBe('10')
    await ranged.arrayBuffer()
    // Give a stray stream time to flow, were one opened.
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect((await bytesReadCounter()) - before).toBe(0)
  })

  describe('ranges', () => {
    const size = () => asset.original.length

    it.each<[string, (n: number) => string, (n: number) => [number, number]]>([
      ['bytes=a-b', () => 'bytes=100-199', () => [100, 199]],
      ['the first byte', () => 'bytes=0-0', () => [0, 0]],
      ['the last byte', (n) => `bytes=${n - 1}-${n - 1}`, (n) => [n - 1, n - 1]],
      ['an open-ended range', () => 'bytes=2500-', (n) => [2500, n - 1]],
      ['a suffix', () => 'bytes=-300', (n) => [n - 300, n - 1]],
      ['a suffix longer than the blob', (n) => `bytes=-${n + 50}`, (n) => [0, n - 1]],
      ['an end past the blob', (n) => `bytes=10-${n + 1000}`, (n) => [10, n - 1]],
    ])('answers %s with 206, Content-Range and exactly those bytes', async (_case, header, expected) => {
      const [start, end] = expected(size())
      const hash = sha256Hex(asset.original)
      const answer = await get(member, hash, { range: header(size()) })
      expect(answer.status).toBe(206)
      expect(answer.headers.get('content-range')).toBe(`bytes ${start}-${end}/${size()}`)
      expect(answer.headers.get('content-length')).toBe(String(end - start + 1))
      expect(answer.headers.get('content-type')).toBe('application/octet-stream')
      expect(answer.body.equals(asset.original.subarray(start, end + 1))).toBe(true)
    })

    it('the SDK reads a range', async () => {
      const hash = sha256Hex(asset.original)
      expect(Buffer.from(await member.client.downloadBlob(hash, { start: 5, end: 24 })).equals(asset.original.subarray(5, 25))).toBe(true)
    })

    it.each([
      ['a start at the size', (n: number) => `bytes=${n}-`],
      ['a start past the size', (n: number) => `bytes=${n + 10}-${n + 20}`],
      ['an empty suffix', () => 'bytes=-0'],
    ])('answers %s with 416 error.request.range_not_satisfiable and Content-Range bytes */size', async (_case, header) => {
      const hash = sha256Hex(asset.original)
      const answer = await get(member, hash, { range: header(size()) })
      expect(answer.status).toBe(416)
      expect(answer.json?.code).toBe('error.request.range_not_satisfiable')
      expect(answer.headers.get('content-range')).toBe(`bytes */${size()}`)
    })

    it.each([
      ['a multi-range', 'bytes=0-9,20-29'],
      ['another unit', 'items=0-9'],
      ['an end before the start', 'bytes=50-10'],
      ['garbage', 'bytes=abc'],
    ])('ignores %s and serves the whole blob with 200', async (_case, header) => {
      const hash = sha256Hex(asset.original)
      const answer = await get(member, hash, { range: header })
      expect(answer.status).toBe(200)
      expect(answer.headers.get('content-range')).toBeNull()
      expect(answer.body.equals(asset.original)).toBe(true)
    })

    it('reads only the range from storage: 100 bytes of a 1 MiB blob count 100 bytes read', async () => {
      const big = await createAsset(member, await album(member), 1024 * 1024)
      const hash = sha256Hex(big.original)
      const before = await bytesReadCounter()
      const answer = await get(member, hash, { range: 'bytes=500000-500099' })
      expect(answer.status).toBe(206)
      expect(answer.body.equals(big.original.subarray(500_000, 500_100))).toBe(true)
      expect((await bytesReadCounter()) - before).toBe(100)
      // The control: a whole read counts the whole blob.
      const whole = await get(member, hash)
      expect(whole.body.length).toBe(1024 * 1024)
      expect((await bytesReadCounter()) - before).toBe(100 + 1024 * 1024)
    })
  })
})

describe('a provenance blob: the signed manifest, held in the database only (decision 0038)', () => {
  let member: Uploader
  let albumId: string
  beforeAll(async () => {
    member = await uploader(server, 'provenance')
    albumId = await album(member)
  })

  it('has no file, and answers ranges, HEAD and 416 from the database as a file would', async () => {
    const { manifest } = await createAsset(member, albumId)
    const hash = sha256Hex(manifest)
    const n = manifest.length
    expect(await server.deps.blobs.size(hash)).toBeNull()
    const ranged = await get(member, hash, { range: 'bytes=10-19' })
    expect([ranged.status, ranged.headers.get('content-range'), ranged.headers.get('content-length')]).toEqual([206, `bytes 10-19/${n}`, '10'])
    expect(ranged.body.equals(manifest.subarray(10, 20))).toBe(true)
    const suffix = await get(member, hash, { range: 'bytes=-5' })
    expect([suffix.status, suffix.body.equals(manifest.subarray(n - 5))]).toEqual([206, true])
    const head = await fetch(`${server.url}/v1/blobs/${hash}`, { method: 'HEAD', headers: bearer(member) })
    expect([head.status, head.headers.get('content-length'), (await head.arrayBuffer()).byteLength]).toEqual([200, String(n), 0])
    const beyond = await get(member, hash, { range: `bytes=${n}-` })
    expect([beyond.status, beyond.json?.code, beyond.headers.get('content-range')]).toEqual([416, 'error.request.range_not_satisfiable', `bytes */${n}`])
    expect(Buffer.from(await member.client.downloadBlob(hash, { start: 3, end: 7 })).equals(manifest.subarray(3, 8))).toBe(true)
  })

  it('comes in a batch beside blobs read from files', async () => {
    const asset = await createAsset(member, albumId)
    const wanted = [asset.original, asset.manifest, asset.metadata, asset.derivative]
    const batch = await member.client.downloadBlobs(wanted.map(sha256Hex))
    expect(batch.refused.size).toBe(0)
    for (const bytes of wanted) expect(Buffer.from(batch.blobs.get(sha256Hex(bytes))!).equals(bytes), sha256Hex(bytes)).toBe(true)
  })

  it('is sent and stored as a file when an asset has those very bytes as its original, which stays downloadable once the manifest’s asset is gone', async () => {
    const first = await createAsset(member, albumId)
    const hash = sha256Hex(first.manifest)
    // Owning the hash as a provenance blob is no proof of possession of a file: the bytes must be sent.
    const session = await member.client.openUploadSession({
      album_id: albumId,
      crypto_suite_id: 1,
      ciphertext_hash: hash,
      blobs: [{ role: 'original', hash, size: first.manifest.length }],
    })
    expect(session.blobs[0]?.present).toBe(false)
    await member.client.abortUploadSession(session.upload_id)
    await member.client.uploadAsset({ albumId, cryptoSuiteId: 1, original: first.manifest, sign: (hashes) => signedManifest(member, hashes, { albumId }) })
    expect(await server.deps.blobs.size(hash)).toBe(first.manifest.length)
    expect((await get(member, hash)).body.equals(first.manifest)).toBe(true)
    // The manifest's asset ends and is collected: its album's feed keeps the manifest, the other asset the file.
    const deletion = await deletionFor(member, { albumId, fileId: first.fileId, head: hash, original: sha256Hex(first.original) })
    await member.client.deleteAsset(albumId, first.fileId, deletion.request)
    await collectGarbage(server.deps)
    expect(await server.deps.blobs.size(hash)).toBe(first.manifest.length)
    expect((await get(member, hash)).body.equals(first.manifest)).toBe(true)
  })

  it('left as a file by a server from before 0038: served, verified deep and collected as before', async () => {
    const asset = await createAsset(member, albumId)
    const hash = sha256Hex(asset.manifest)
    expect(await server.deps.blobs.put(hash, asset.manifest.length, [asset.manifest])).toEqual({ kind: 'stored' })
    expect((await get(member, hash)).body.equals(asset.manifest)).toBe(true)
    const verdicts = await member.client.verifyStorage({ assets: [{ asset_id: asset.fileId, blob_hashes: [hash] }], deep: true })
    expect(verdicts.verdicts[0]?.blobs[0]).toMatchObject({ hash, role: 'provenance', stored: true, deep: 'intact' })
    const deletion = await deletionFor(member, { albumId, fileId: asset.fileId, head: hash, original: sha256Hex(asset.original) })
    await member.client.deleteAsset(albumId, asset.fileId, deletion.request)
    await collectGarbage(server.deps)
    expect(await server.deps.blobs.size(hash)).toBeNull()
    expect((await get(member, hash)).status).toBe(404)
  })

  it('is stored and re-hashed from the database when verified without a file', async () => {
    const asset = await createAsset(member, albumId)
    const hash = sha256Hex(asset.manifest)
    const verdicts = await member.client.verifyStorage({ assets: [{ asset_id: asset.fileId, blob_hashes: [hash, sha256Hex(asset.original)] }], deep: true })
    expect(verdicts.verdicts[0]).toMatchObject({ durable: true })
    expect(verdicts.verdicts[0]?.blobs[0]).toMatchObject({ hash, role: 'provenance', stored: true, deep: 'intact' })
  })
})

describe('blobs the caller may not download (404)', () => {
  it('another account’s asset, exactly like an unknown hash, even when it holds the same bytes unapplied', async () => {
    const owner = await uploader(server, 'owner')
    const stranger = await uploader(server, 'stranger')
    const asset = await createAsset(owner, await album(owner))
    const hash = sha256Hex(asset.original)
    const theirs = await problemOf(stranger.client.downloadBlob(hash))
    const unknown = await problemOf(stranger.client.downloadBlob(sha256Hex(ciphertext(10))))
    expect(theirs.status).toBe(404)
    expect(theirs.code).toBe('error.not_found')
    expect(unknown.status).toBe(404)
    expect(theirs.problem.detail).toBe(unknown.problem.detail)
    for (const other of [asset.derivative, asset.metadata, asset.manifest])
      expect((await problemOf(stranger.client.downloadBlob(sha256Hex(other)))).status).toBe(404)

    // The stranger uploads the very same bytes but applies nothing: still not theirs to read.
    const strangerAlbum = await album(stranger)
    const session = await stranger.client.openUploadSession({
      album_id: strangerAlbum,
      crypto_suite_id: 1,
      ciphertext_hash: hash,
      blobs: [{ role: 'original', hash, size: asset.original.length }],
    })
    await stranger.client.putBlob(session.upload_id, hash, asset.original)
    expect((await problemOf(stranger.client.downloadBlob(hash))).status).toBe(404)
    // The owner still reads it.
    expect(Buffer.from(await owner.client.downloadBlob(hash)).equals(asset.original)).toBe(true)
  })

  it('a blob uploaded but never applied', async () => {
    const member = await uploader(server, 'unapplied')
    const albumId = await album(member)
    const bytes = ciphertext(500)
    const hash = sha256Hex(bytes)
    const session = await member.client.openUploadSession({
      album_id: albumId,
      crypto_suite_id: 1,
      ciphertext_hash: hash,
      blobs: [{ role: 'original', hash, size: bytes.length }],
    })
    await member.client.putBlob(session.upload_id, hash, bytes)
    expect((await member.client.uploadSessionStatus(session.upload_id)).blobs[0]?.present).toBe(true)
    const problem = await problemOf(member.client.downloadBlob(hash))
    expect(problem.status).toBe(404)
    expect(problem.code).toBe('error.not_found')
  })

  it('the blobs of a replaced bundle, once the replace is applied; the new bundle is served', async () => {
    const member = await uploader(server, 'replaced')
    const albumId = await album(member)
    const first = await createAsset(member, albumId)
    const [head] = (await member.client.feed(albumId)).entries
    const next = { original: ciphertext(1_500), derivative: ciphertext(300) }
    await member.client.uploadAsset({
      albumId,
      cryptoSuiteId: 1,
      original: next.original,
      derivatives: [next.derivative],
      sign: (hashes) =>
        signedManifest(member, hashes, {
          albumId,
          fileId: first.fileId,
          action: 'replace',
          prior: head!.envelope_hash,
          originalBlobHash: sha256Hex(first.original),
        }),
    })
    for (const old of [first.original, first.derivative, first.metadata, first.manifest]) {
      const problem = await problemOf(member.client.downloadBlob(sha256Hex(old)))
      expect(problem.status).toBe(404)
    }
    expect(Buffer.from(await member.client.downloadBlob(sha256Hex(next.original))).equals(next.original)).toBe(true)
    expect(Buffer.from(await member.client.downloadBlob(sha256Hex(next.derivative))).equals(next.derivative)).toBe(true)
    const [, replace] = (await member.client.feed(albumId)).entries
    expect(Buffer.from(await member.client.downloadBlob(replace!.envelope_hash)).equals(Buffer.from(replace!.manifest_cbor, 'base64'))).toBe(true)
  })
})

describe('requests refused before any lookup', () => {
  it.each([
    ['uppercase', (h: string) => h.toUpperCase()],
    ['63 characters', (h: string) => h.slice(1)],
    ['65 characters', (h: string) => `${h}0`],
    ['not hex', (h: string) => `${h.slice(1)}g`],
  ])('a malformed hash (%s) with 400', async (_case, mangle) => {
    const member = await uploader(server, 'malformed')
    const answer = await raw(server, 'GET', `/v1/blobs/${mangle(sha256Hex(ciphertext(10)))}`, { headers: bearer(member) })
    expect(answer.status).toBe(400)
    expect(answer.json?.code).toBe('error.request.malformed')
  })

  it('no bearer token with 401 and a Bearer challenge', async () => {
    const member = await uploader(server, 'no-bearer')
    const asset = await createAsset(member, await album(member))
    const answer = await get(null, sha256Hex(asset.original))
    expect(answer.status).toBe(401)
    expect(answer.json?.code).toBe('error.auth.unauthenticated')
    expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer realm="coffer"/)
    expect(answer.body.includes(asset.original.subarray(0, 32))).toBe(false)
    const dead = await get(null, sha256Hex(asset.original), { authorization: 'Bearer not-a-token' })
    expect(dead.status).toBe(401)
  })
})
