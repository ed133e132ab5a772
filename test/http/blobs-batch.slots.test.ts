// Batch downloads in flight are capped (decision 0045): per account on all instances together,
// in the database (429 `error.batch.too_many`), and per process (503 `error.batch.server_busy`),
// both with Retry-After; a slot whose holder died is free again after its lease; and the SDK
// waits out Retry-After and asks again.
import { randomUUID } from 'node:crypto'
import { request } from 'node:http'
import type { Readable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { BATCH_SLOT_LEASE_MS } from '../../src/features/blobs/batch-slots.ts'
import { CofferClient, sha256Hex } from '../../src/sdk/client.ts'
import { album, ciphertext, signedManifest, uploader, type Uploader } from '../support/albums.ts'
import { bearer } from '../support/bundles.ts'
import { readRows } from '../support/database.ts'
import { startServer, type TestServer } from '../support/server.ts'

const PER_ACCOUNT = 2
const PER_PROCESS = 3

/** The per-account cap, with the per-process one (16) above any burst here. */
let server: TestServer
/** The per-process cap, with the per-account one (4) above it. */
let busy: TestServer
beforeAll(async () => {
  server = await startServer({ BATCH_DOWNLOADS_PER_ACCOUNT: String(PER_ACCOUNT) })
  busy = await startServer({ BATCH_DOWNLOADS_PER_PROCESS: String(PER_PROCESS) })
})
afterAll(async () => {
  await server.close()
  await busy.close()
})

/** A member with one asset; the hash of its original, which a batch reads from the blob store. */
async function withAsset(label: string, target = server): Promise<{ member: Uploader; hash: string }> {
  const member = await uploader(target, label)
  const albumId = await album(member)
  const fileId = randomUUID()
  const original = ciphertext(4096)
  await member.client.uploadAsset({ albumId, cryptoSuiteId: 1, original, sign: (hashes) => signedManifest(member, hashes, { albumId, fileId }) })
  return { member, hash: sha256Hex(original) }
}

interface Answer {
  readonly status: number
  readonly retryAfter: string | null
  readonly code: unknown
}

async function batch(member: Uploader, hash: string, target = server): Promise<Answer> {
  const response = await fetch(`${target.url}/v1/blobs/batch`, {
    method: 'POST',
    headers: { ...bearer(member), 'content-type': 'application/json' },
    body: JSON.stringify({ hashes: [hash] }),
  })
  const body = Buffer.from(await response.arrayBuffer())
  const code = response.status === 200 ? undefined : (JSON.parse(body.toString('utf8')) as { code: unknown }).code
  return { status: response.status, retryAfter: response.headers.get('retry-after'), code }
}

/**
 * A blob store whose reads wait until `open()` is called (a slow disk): every batch that got
 * its slots stays in flight. `reading(n)` resolves once n reads are waiting.
 */
function slowStore(target = server) {
  const original = target.deps.blobs.open.bind(target.deps.blobs)
  let openGate!: () => void
  const gate = new Promise<void>((resolve) => {
    openGate = resolve
  })
  const waiting: Array<{ count: number; resolve: () => void }> = []
  let reads = 0
  const spy = vi.spyOn(target.deps.blobs, 'open').mockImplementation(async (hash, range): Promise<Readable> => {
    reads++
    for (const waiter of waiting.filter((w) => w.count <= reads)) waiter.resolve()
    await gate
    return original(hash, range)
  })
  return {
    reading: (count: number) => (reads >= count ? Promise.resolve() : new Promise<void>((resolve) => waiting.push({ count, resolve }))),
    reads: () => reads,
    open: () => {
      openGate()
      spy.mockRestore()
    },
  }
}

/** Resolves with the first `count` of `answers` to arrive. */
function first<T>(answers: ReadonlyArray<Promise<T>>, count: number): Promise<T[]> {
  const arrived: T[] = []
  return new Promise((resolve, reject) => {
    for (const answer of answers) {
      answer.then((value) => {
        arrived.push(value)
        if (arrived.length === count) resolve([...arrived])
      }, reject)
    }
  })
}

/** Resolves once every slot of the account is free again (the releases run as answers close). */
async function slotsFreed(userId: string, target = server): Promise<void> {
  for (;;) {
    const rows = await readRows(target.database, `select slot from batch_download_slots where user_id = '${userId}'`)
    if (rows.length === 0) return
    await new Promise((resolve) => setImmediate(resolve))
  }
}

describe('batch downloads in flight', () => {
  it(`are at most ${PER_ACCOUNT} per account: a burst gets that many served and 429 with Retry-After for the rest`, async () => {
    const { member, hash } = await withAsset('burst')
    const store = slowStore()
    const burst = Array.from({ length: 8 }, () => batch(member, hash))
    const refused = await first(burst, 8 - PER_ACCOUNT)
    await store.reading(PER_ACCOUNT)
    expect(refused).toEqual(Array.from({ length: 8 - PER_ACCOUNT }, () => ({ status: 429, retryAfter: '1', code: 'error.batch.too_many' })))
    expect(store.reads()).toBe(PER_ACCOUNT)
    store.open()
    const answers = await Promise.all(burst)
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(PER_ACCOUNT)
    await slotsFreed(member.userId)
    expect((await batch(member, hash)).status).toBe(200)
  })

  it(`are at most ${PER_PROCESS} per process, all accounts together: the next is 503 with Retry-After`, async () => {
    const a = await withAsset('process-a', busy)
    const b = await withAsset('process-b', busy)
    const store = slowStore(busy)
    const held = Array.from({ length: PER_PROCESS }, () => batch(a.member, a.hash, busy))
    await store.reading(PER_PROCESS)
    expect(await batch(b.member, b.hash, busy)).toEqual({ status: 503, retryAfter: '1', code: 'error.batch.server_busy' })
    store.open()
    expect((await Promise.all(held)).map((answer) => answer.status)).toEqual([200, 200, 200])
    expect((await batch(b.member, b.hash, busy)).status).toBe(200)
  })

  it('a batch whose client goes while it waits for its slots frees them: the process cap is not worn down', async () => {
    const { member, hash } = await withAsset('gone', busy)
    const take = busy.deps.storage.takeBatchDownloadSlot.bind(busy.deps.storage)
    let entered!: () => void
    const waiting = new Promise<void>((resolve) => {
      entered = resolve
    })
    let proceed!: () => void
    const gate = new Promise<void>((resolve) => {
      proceed = resolve
    })
    vi.spyOn(busy.deps.storage, 'takeBatchDownloadSlot').mockImplementationOnce(async (...args) => {
      entered()
      await gate
      return take(...args)
    })
    const connections = () =>
      new Promise<number>((resolve, reject) => busy.app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))))
    const outgoing = request(new URL(`${busy.url}/v1/blobs/batch`), {
      method: 'POST',
      agent: false,
      headers: { ...bearer(member), 'content-type': 'application/json' },
    })
    outgoing.on('error', () => {})
    outgoing.end(JSON.stringify({ hashes: [hash] }))
    await waiting
    const open = await connections()
    outgoing.destroy()
    while ((await connections()) >= open) await new Promise((resolve) => setImmediate(resolve))
    proceed()
    await slotsFreed(member.userId, busy)
    // All of the process's slots are there: as many batches as it allows are served at once.
    const store = slowStore(busy)
    const held = Array.from({ length: PER_PROCESS }, () => batch(member, hash, busy))
    await store.reading(PER_PROCESS)
    store.open()
    expect((await Promise.all(held)).map((answer) => answer.status)).toEqual([200, 200, 200])
  })

  it('are counted in the database: slots another instance holds count, and a dead holder’s are free after the lease', async () => {
    const { member, hash } = await withAsset('lease')
    const now = server.clock.now()
    for (let i = 0; i < PER_ACCOUNT; i++) {
      const slot = await server.deps.storage.takeBatchDownloadSlot(member.userId, `killed-${i}`, now, { slots: PER_ACCOUNT, leaseMs: BATCH_SLOT_LEASE_MS })
      expect(slot).toBe(i)
    }
    expect(await batch(member, hash)).toEqual({ status: 429, retryAfter: '1', code: 'error.batch.too_many' })
    server.clock.advance(BATCH_SLOT_LEASE_MS - 1)
    expect((await batch(member, hash)).status).toBe(429)
    server.clock.advance(1)
    expect((await batch(member, hash)).status).toBe(200)
  })

  it('the SDK waits out Retry-After and asks again', async () => {
    const { member, hash } = await withAsset('sdk')
    const now = server.clock.now()
    for (let i = 0; i < PER_ACCOUNT; i++) {
      await server.deps.storage.takeBatchDownloadSlot(member.userId, `other-${i}`, now, { slots: PER_ACCOUNT, leaseMs: BATCH_SLOT_LEASE_MS })
    }
    const statuses: number[] = []
    // The other batches end when this client is first told to wait.
    const watching: typeof fetch = async (input, init) => {
      const response = await fetch(input, init)
      statuses.push(response.status)
      if (response.status === 429) {
        for (let i = 0; i < PER_ACCOUNT; i++) await server.deps.storage.releaseBatchDownloadSlot(member.userId, i, `other-${i}`)
      }
      return response
    }
    const client = new CofferClient({ baseUrl: server.url, now: server.clock.now, fetch: watching })
    client.tokens = member.client.tokens
    const downloaded = await client.downloadBlobs([hash])
    expect(statuses).toEqual([429, 200])
    expect(downloaded.refused).toEqual(new Map())
    expect(sha256Hex(downloaded.blobs.get(hash)!)).toBe(hash)
  })
})
