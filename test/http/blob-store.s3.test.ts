// What a deployment on a bucket adds: several instances sharing one database and one bucket
// and no folder, downloads redirected to presigned URLs, and a bucket that goes away (readiness,
// 503 with Retry-After, nothing written, nothing left in staging after the next pass). The
// bucket is s3rver, reached through a TCP proxy the test breaks.
import { ListObjectsV2Command } from '@aws-sdk/client-s3'
import { randomUUID } from 'node:crypto'
import { existsSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { S3BlobStore } from '../../src/blob-store/s3.ts'
import { maintain } from '../../src/features/maintenance/sweep.service.ts'
import { sha256Hex } from '../../src/sdk/client.ts'
import { CofferAdmin } from '../../src/sdk/admin.ts'
import { album, ciphertext, signedManifest, uploader, type Uploader } from '../support/albums.ts'
import { startBucket, type TestBucket } from '../support/bucket.ts'
import { bearer, deletionFor } from '../support/bundles.ts'
import { startInstances, startServer, type TestServer } from '../support/server.ts'
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts'

let bucket: TestBucket
beforeAll(async () => {
  bucket = await startBucket()
})
afterAll(() => bucket.close())

interface Asset {
  readonly albumId: string
  readonly fileId: string
  readonly original: Buffer
  readonly head: string
}

async function uploaded(member: Uploader, size = 40_000): Promise<Asset> {
  const albumId = await album(member)
  const fileId = randomUUID()
  const original = ciphertext(size)
  const result = await member.client.uploadAsset({
    albumId,
    cryptoSuiteId: 1,
    original,
    sign: (hashes) => signedManifest(member, hashes, { albumId, fileId }),
  })
  return { albumId, fileId, original, head: result.manifestHash }
}

async function objectsUnder(store: S3BlobStore, prefix: string): Promise<string[]> {
  const listed = await store.client.send(new ListObjectsV2Command({ Bucket: store.bucket, Prefix: prefix }))
  return (listed.Contents ?? []).map((object) => object.Key ?? '')
}

describe('two instances, one database, one bucket, no shared folder', () => {
  it('an upload through one is downloaded, verified and collected through the other', async () => {
    const { instances, close } = await startInstances(2, bucket.env(`two-${randomUUID()}`))
    try {
      const [first, second] = instances as [TestServer, TestServer]
      expect(first.deps.blobs.kind).toBe('s3')
      const member = await uploader(first, 'two-instances')
      const asset = await uploaded(member)
      const hash = sha256Hex(asset.original)
      // Nothing went to a folder: the bytes are in the bucket only.
      expect(existsSync(first.deps.config.blobDir)).toBe(false)

      const onSecond = second.client()
      onSecond.tokens = member.client.tokens
      expect(Buffer.from(await onSecond.downloadBlob(hash)).equals(asset.original)).toBe(true)
      const verdicts = await onSecond.verifyStorage({ assets: [{ asset_id: asset.fileId, blob_hashes: [hash] }], deep: true })
      expect(verdicts.verdicts[0]?.blobs[0]).toMatchObject({ stored: true, deep: 'intact' })

      const deletion = await deletionFor(member, { albumId: asset.albumId, fileId: asset.fileId, head: asset.head, original: hash })
      await onSecond.deleteAsset(asset.albumId, asset.fileId, deletion.request)
      expect((await maintain(second.deps)).garbage.files).toBeGreaterThanOrEqual(1)
      expect(await first.deps.blobs.size(hash)).toBeNull()
    } finally {
      await close()
    }
  })
})

describe('BLOB_DOWNLOAD=redirect', () => {
  let server: TestServer
  let member: Uploader
  let asset: Asset
  beforeAll(async () => {
    server = await startServer({ ...bucket.env(`redirect-${randomUUID()}`), BLOB_DOWNLOAD: 'redirect', ADMIN_TOKEN: 'a'.repeat(40) })
    member = await uploader(server, 'redirect')
    asset = await uploaded(member)
  })
  afterAll(() => server.close())

  it('answers 307 to a presigned URL that serves the bytes (and ranges) without Coffer, never cached', async () => {
    const hash = sha256Hex(asset.original)
    const answer = await fetch(`${server.url}/v1/blobs/${hash}`, { headers: bearer(member), redirect: 'manual' })
    expect(answer.status).toBe(307)
    expect(answer.headers.get('cache-control')).toBe('no-store')
    const location = answer.headers.get('location') ?? ''
    expect(location.startsWith(bucket.endpoint)).toBe(true)
    expect(location).toContain('X-Amz-Expires=300')
    const direct = await fetch(location)
    expect(direct.status).toBe(200)
    expect(Buffer.from(await direct.arrayBuffer()).equals(asset.original)).toBe(true)
    const ranged = await fetch(location, { headers: { range: 'bytes=100-199' } })
    expect(ranged.status).toBe(206)
    expect(Buffer.from(await ranged.arrayBuffer()).equals(asset.original.subarray(100, 200))).toBe(true)
    // The SDK follows it (fetch drops Authorization on the way to another origin).
    expect(Buffer.from(await member.client.downloadBlob(hash)).equals(asset.original)).toBe(true)
  })

  it('answers a provenance blob itself (200, its bytes): the database holds them, no object of the bucket does', async () => {
    expect(await server.deps.blobs.size(asset.head)).toBeNull()
    const answer = await fetch(`${server.url}/v1/blobs/${asset.head}`, { headers: { ...bearer(member), range: 'bytes=2-9' }, redirect: 'manual' })
    expect(answer.status).toBe(206)
    const manifest = Buffer.from((await member.client.feed(asset.albumId)).entries[0]!.manifest_cbor, 'base64')
    expect(sha256Hex(manifest)).toBe(asset.head)
    expect(Buffer.from(await answer.arrayBuffer()).equals(manifest.subarray(2, 10))).toBe(true)
    expect(Buffer.from(await member.client.downloadBlob(asset.head)).equals(manifest)).toBe(true)
  })

  it('checks first: 304 for a held copy, 404 for another account, 451 once taken down', async () => {
    const hash = sha256Hex(asset.original)
    expect((await fetch(`${server.url}/v1/blobs/${hash}`, { headers: { ...bearer(member), 'if-none-match': `"${hash}"` }, redirect: 'manual' })).status).toBe(
      304,
    )
    const stranger = await uploader(server, 'stranger')
    expect((await fetch(`${server.url}/v1/blobs/${hash}`, { headers: bearer(stranger), redirect: 'manual' })).status).toBe(404)
    await new CofferAdmin({ baseUrl: server.url, adminToken: 'a'.repeat(40) }).takeDown(asset.fileId, 'test')
    expect((await fetch(`${server.url}/v1/blobs/${hash}`, { headers: bearer(member), redirect: 'manual' })).status).toBe(451)
  })
})

describe('a bucket that goes away', () => {
  let proxy: TcpProxy
  let server: TestServer
  let store: S3BlobStore
  let member: Uploader
  beforeAll(async () => {
    proxy = await startTcpProxy({ host: '127.0.0.1', port: bucket.port })
    server = await startServer({ ...bucket.env(`faults-${randomUUID()}`), S3_ENDPOINT: proxy.route(bucket.endpoint) })
    store = server.deps.blobs as S3BlobStore
    member = await uploader(server, 'faults')
  })
  afterAll(async () => {
    await server.close()
    await proxy.close()
  })

  it('fails readiness while it cannot be reached, and passes again when it can', async () => {
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200)
    // New connections refused, and the kept-alive ones cut.
    proxy.setMode('refuse')
    proxy.cut()
    try {
      const answer = await fetch(`${server.url}/readyz`)
      expect(answer.status).toBe(503)
      expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/)
    } finally {
      proxy.setMode('forward')
    }
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200)
  })

  it('a download while it is down answers 503 with Retry-After, naming no internals', async () => {
    const asset = await uploaded(member)
    const hash = sha256Hex(asset.original)
    proxy.setMode('refuse')
    proxy.cut()
    try {
      const answer = await fetch(`${server.url}/v1/blobs/${hash}`, { headers: bearer(member) })
      expect(answer.status).toBe(503)
      expect(answer.headers.get('retry-after')).toMatch(/^\d+$/)
      const problem = (await answer.json()) as { code: string; detail: string }
      expect(problem.code).toBe('error.unavailable')
      expect(problem.detail).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|s3/i)
    } finally {
      proxy.setMode('forward')
    }
    expect(Buffer.from(await member.client.downloadBlob(hash)).equals(asset.original)).toBe(true)
  })

  it('a download cut off mid-way ends the answer short, and the next one is whole', async () => {
    const asset = await uploaded(member, 12 * 1024 * 1024)
    const hash = sha256Hex(asset.original)
    const answer = await fetch(`${server.url}/v1/blobs/${hash}`, { headers: bearer(member) })
    expect(answer.status).toBe(200)
    const reader = answer.body!.getReader()
    await reader.read()
    proxy.cut()
    const rest = async () => {
      let received = 0
      for (;;) {
        const { done, value } = await reader.read()
        if (done) return received
        received += value.length
      }
    }
    // The body stops before its Content-Length: the client can tell it is incomplete.
    await expect(rest()).rejects.toThrow()
    expect(Buffer.from(await member.client.downloadBlob(hash)).equals(asset.original)).toBe(true)
  })

  it('an upload cut off mid-way answers a problem, writes no row, and the next pass leaves nothing in staging', async () => {
    const albumId = await album(member)
    const bytes = ciphertext(20 * 1024 * 1024)
    const hash = sha256Hex(bytes)
    const session = await member.client.openUploadSession({
      album_id: albumId,
      crypto_suite_id: 1,
      ciphertext_hash: hash,
      blobs: [{ role: 'original', hash, size: bytes.length }],
    })
    const url = new URL(`${server.url}/v1/upload/${session.upload_id}/blobs/${hash}`)
    type Answer = { status: number; retryAfter: string | undefined; body: string }
    const answer = new Promise<Answer>((resolve, reject) => {
      const request = httpRequest(
        url,
        { method: 'PUT', headers: { ...bearer(member), 'content-type': 'application/octet-stream', 'content-length': bytes.length } },
        (response) => {
          let body = ''
          response.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')))
          response.on('end', () => resolve({ status: response.statusCode ?? 0, retryAfter: response.headers['retry-after'] as string | undefined, body }))
        },
      )
      request.on('error', reject)
      // Half the bytes, then the bucket goes away, then the rest.
      request.write(bytes.subarray(0, 10 * 1024 * 1024), () => {
        setTimeout(() => {
          proxy.setMode('refuse')
          proxy.cut()
          request.end(bytes.subarray(10 * 1024 * 1024))
        }, 200)
      })
    })
    let outcome: Answer
    try {
      outcome = await answer
    } finally {
      proxy.setMode('forward')
    }
    expect(outcome.status).toBe(503)
    expect(outcome.retryAfter).toMatch(/^\d+$/)
    expect(JSON.parse(outcome.body)).toMatchObject({ code: 'error.unavailable' })
    // No row: the session still waits for the blob, and the bucket has no such blob.
    const status = await member.client.uploadSessionStatus(session.upload_id)
    expect(status.blobs).toEqual([expect.objectContaining({ hash, present: false })])
    expect(await store.size(hash)).toBeNull()
    await maintain(server.deps)
    expect(await objectsUnder(store, store.stagingPrefix)).toEqual([])
    // Sent again once the bucket is back, it is stored.
    await member.client.putBlob(session.upload_id, hash, bytes)
    expect(await store.size(hash)).toBe(bytes.length)
  })
})
