// One contract, both blob stores: the folder (BLOB_DIR) and an S3-compatible bucket
// (BLOB_STORE_URL, s3rver here). Each is a server's own store, so that garbage collection and
// holds are those of a real server on the test's database.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BlobStoreUnavailableError, type BlobStore } from '../../src/blob-store/port.ts'
import { openS3BlobStore } from '../../src/blob-store/s3.ts'
import { collectGarbage } from '../../src/features/maintenance/gc.service.ts'
import { maintain } from '../../src/features/maintenance/sweep.service.ts'
import { sha256Hex } from '../../src/sdk/client.ts'
import { album, ciphertext, uploader } from '../support/albums.ts'
import { startBucket, type TestBucket } from '../support/bucket.ts'
import { flipStoredByte, partFiles, storedHashes, writesInProgress } from '../support/blobs.ts'
import { startServer, type TestServer } from '../support/server.ts'

let bucket: TestBucket
beforeAll(async () => {
  bucket = await startBucket()
})
afterAll(() => bucket.close())

async function read(store: BlobStore, hash: string, range?: { start: number; end: number }): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of await store.open(hash, range)) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

async function readPart(store: BlobStore, uploadId: string, hash: string, name: string): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of await store.openPart(uploadId, hash, name)) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

async function partUploads(store: BlobStore): Promise<string[]> {
  const uploads: string[] = []
  for await (const uploadId of store.partUploads()) uploads.push(uploadId)
  return uploads.sort()
}

async function* slowly(bytes: Buffer, pieces: number, pause: () => Promise<void> = async () => {}): AsyncGenerator<Buffer> {
  const step = Math.ceil(bytes.length / pieces)
  for (let at = 0; at < bytes.length; at += step) {
    await pause()
    yield bytes.subarray(at, at + step)
  }
}

describe.each([
  { kind: 'folder', env: (): Record<string, string> => ({}) },
  { kind: 's3', env: (): Record<string, string> => bucket.env(`contract-${Math.random().toString(36).slice(2)}`) },
])('the $kind store', ({ kind, env }) => {
  let server: TestServer
  let store: BlobStore
  beforeAll(async () => {
    // The folder store explicitly, whatever the run's default.
    server = await startServer(kind === 'folder' ? { BLOB_DIR: `${process.env.TMPDIR ?? '/tmp'}/coffer-contract-${process.pid}-${Date.now()}` } : env())
    store = server.deps.blobs
    expect(store.kind).toBe(kind)
  })
  afterAll(() => server.close())

  it('puts exactly the bytes under their hash, lists and sizes them, and reads them back whole', async () => {
    const bytes = ciphertext(70_000)
    const hash = sha256Hex(bytes)
    expect(await store.size(hash)).toBeNull()
    expect(await store.put(hash, bytes.length, slowly(bytes, 7))).toEqual({ kind: 'stored' })
    expect(await store.size(hash)).toBe(bytes.length)
    expect((await read(store, hash)).equals(bytes)).toBe(true)
    expect(await storedHashes(server)).toContain(hash)
    expect(await writesInProgress(server)).toEqual([])
  })

  it('stores an empty blob', async () => {
    const empty = Buffer.alloc(0)
    expect(await store.put(sha256Hex(empty), 0, [])).toEqual({ kind: 'stored' })
    expect(await store.size(sha256Hex(empty))).toBe(0)
    expect((await read(store, sha256Hex(empty))).length).toBe(0)
  })

  it('dedupes: the same bytes put again are one blob, and concurrent puts of one hash all succeed intact', async () => {
    const bytes = ciphertext(300_000)
    const hash = sha256Hex(bytes)
    expect(await store.put(hash, bytes.length, [bytes])).toEqual({ kind: 'stored' })
    const outcomes = await Promise.all(Array.from({ length: 6 }, () => store.put(hash, bytes.length, slowly(bytes, 5))))
    expect(outcomes).toEqual(Array.from({ length: 6 }, () => ({ kind: 'stored' })))
    expect((await read(store, hash)).equals(bytes)).toBe(true)
    expect((await storedHashes(server)).filter((name) => name === hash)).toEqual([hash])
    expect(await writesInProgress(server)).toEqual([])
  })

  it('reads ranges, reading only the range; a blob larger than a multipart part round-trips whole and across part boundaries', async () => {
    const bytes = ciphertext(20 * 1024 * 1024 + 12_345)
    const hash = sha256Hex(bytes)
    expect(await store.put(hash, bytes.length, slowly(bytes, 40))).toEqual({ kind: 'stored' })
    const boundary = 8 * 1024 * 1024
    for (const range of [
      { start: 0, end: 0 },
      { start: boundary - 10, end: boundary + 10 },
      { start: bytes.length - 100, end: bytes.length - 1 },
    ]) {
      expect((await read(store, hash, range)).equals(bytes.subarray(range.start, range.end + 1))).toBe(true)
    }
    const counted = () => server.deps.metrics.blobBytesRead.get().then((metric) => metric.values[0]?.value ?? 0)
    const before = await counted()
    await read(store, hash, { start: 5, end: 1_004 })
    expect((await counted()) - before).toBe(1_000)
    expect((await read(store, hash)).equals(bytes)).toBe(true)
  })

  it('re-hashes what it holds, reading (and counting) every byte: a blob of several reads, an empty one, a rewritten one; a missing one rejects', async () => {
    // Not a whole number of the folder's 64 KiB reads, so that the last read is short.
    const bytes = ciphertext(5 * 64 * 1024 + 777)
    const hash = sha256Hex(bytes)
    expect(await store.put(hash, bytes.length, slowly(bytes, 3))).toEqual({ kind: 'stored' })
    const counted = () => server.deps.metrics.blobBytesRead.get().then((metric) => metric.values[0]?.value ?? 0)
    const before = await counted()
    expect(await store.sha256(hash)).toBe(hash)
    expect((await counted()) - before).toBe(bytes.length)
    const empty = sha256Hex(Buffer.alloc(0))
    expect(await store.put(empty, 0, [])).toEqual({ kind: 'stored' })
    expect(await store.sha256(empty)).toBe(empty)
    // The same length, one byte changed: the stored bytes' hash, not the name's.
    await flipStoredByte(server, hash, bytes.length - 1)
    const damaged = Buffer.from(bytes)
    damaged[bytes.length - 1] = damaged[bytes.length - 1]! ^ 0xff
    expect(await store.sha256(hash)).toBe(sha256Hex(damaged))
    await expect(store.sha256(sha256Hex(Buffer.from('never stored')))).rejects.toThrow()
  })

  it.each([
    ['another hash', (bytes: Buffer) => ({ hash: sha256Hex(Buffer.concat([bytes, Buffer.from('x')])), size: bytes.length })],
    ['more bytes than declared', (bytes: Buffer) => ({ hash: sha256Hex(bytes), size: bytes.length - 1 })],
    ['fewer bytes than declared', (bytes: Buffer) => ({ hash: sha256Hex(bytes), size: bytes.length + 1 })],
  ])('keeps nothing when the bytes have %s', async (_what, declare) => {
    const bytes = ciphertext(9 * 1024 * 1024)
    const { hash, size } = declare(bytes)
    const outcome = await store.put(hash, size, slowly(bytes, 9))
    expect(outcome.kind).toBe('mismatch')
    expect(await store.size(hash)).toBeNull()
    expect(await writesInProgress(server)).toEqual([])
  })

  it('an interrupted upload (the source breaks) fails with the source’s error and leaves nothing', async () => {
    const bytes = ciphertext(10 * 1024 * 1024)
    const hash = sha256Hex(bytes)
    async function* breaking(): AsyncGenerator<Buffer> {
      yield bytes.subarray(0, 9 * 1024 * 1024)
      throw new Error('the client went away')
    }
    await expect(store.put(hash, bytes.length, breaking())).rejects.toThrow('the client went away')
    expect(await store.size(hash)).toBeNull()
    expect(await writesInProgress(server)).toEqual([])
  })

  it('a cleanup spares a put in progress and removes what this process left behind', async () => {
    const bytes = ciphertext(64_000)
    const hash = sha256Hex(bytes)
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => (release = resolve))
    let pieces = 0
    const putting = store.put(
      hash,
      bytes.length,
      slowly(bytes, 4, async () => (pieces++ === 2 ? gate : undefined)),
    )
    await expect.poll(() => writesInProgress(server).then((names) => names.length), { timeout: 5_000 }).toBe(kind === 'folder' ? 1 : 0)
    expect(await store.cleanLeftovers()).toBe(0)
    release()
    expect(await putting).toEqual({ kind: 'stored' })
    expect(await writesInProgress(server)).toEqual([])
  })

  it('cleanups running among many puts never fail on a write that finished meanwhile, and spare every one', async () => {
    const blobs = Array.from({ length: 40 }, (_, i) => ciphertext(20_000 + i))
    let putting = true
    const puts = Promise.all(blobs.map((bytes) => store.put(sha256Hex(bytes), bytes.length, slowly(bytes, 3)))).finally(() => (putting = false))
    let cleanups = 0
    while (putting) {
      // A write listed by the cleanup is published (renamed away) before its turn comes: no throw.
      expect(await store.cleanLeftovers()).toBe(0)
      cleanups++
    }
    expect((await puts).every((outcome) => outcome.kind === 'stored')).toBe(true)
    expect(cleanups).toBeGreaterThan(0)
    for (const bytes of blobs) expect(await store.size(sha256Hex(bytes))).toBe(bytes.length)
    expect(await writesInProgress(server)).toEqual([])
  })

  it('removes by name, once; keeps a blob published after the caller decided', async () => {
    const bytes = ciphertext(2_000)
    const hash = sha256Hex(bytes)
    await store.put(hash, bytes.length, [bytes])
    const decidedBefore = Date.now() - 5_000
    expect(await store.remove(hash, decidedBefore)).toBe(false)
    expect(await store.size(hash)).toBe(bytes.length)
    expect(await store.remove(hash, Date.now() + 1)).toBe(true)
    expect(await store.size(hash)).toBeNull()
    expect(await store.remove(hash)).toBe(false)
    expect(await storedHashes(server)).not.toContain(hash)
  })

  it('keeps parts apart from blobs: verified, durable, read back, listed by upload, removed by blob or upload', async () => {
    const [first, second] = [randomUUID(), randomUUID()]
    const part = ciphertext(40_000)
    const blob = sha256Hex(ciphertext(10))
    const other = sha256Hex(ciphertext(10))
    // The part's own hash as a name it is not stored under: no blob appears.
    expect(await store.putPart(first, blob, '0-aa', part.length, slowly(part, 5), sha256Hex(part))).toEqual({ kind: 'stored' })
    expect(await store.putPart(first, blob, '40000-bb', 100, [part.subarray(0, 100)])).toEqual({ kind: 'stored' })
    expect(await store.putPart(first, other, '0-cc', 10, [part.subarray(0, 10)])).toEqual({ kind: 'stored' })
    expect(await store.putPart(second, blob, '0-dd', 10, [part.subarray(0, 10)])).toEqual({ kind: 'stored' })
    expect((await readPart(store, first, blob, '0-aa')).equals(part)).toBe(true)
    expect(await partUploads(store)).toEqual([first, second].sort())
    expect(await partFiles(server)).toEqual([`${first}/${blob}/0-aa`, `${first}/${blob}/40000-bb`, `${first}/${other}/0-cc`, `${second}/${blob}/0-dd`].sort())
    // Never a blob: not listed, not sized, not opened.
    expect(await storedHashes(server)).not.toContain(blob)
    expect(await storedHashes(server)).not.toContain(sha256Hex(part))
    expect(await store.size(sha256Hex(part))).toBeNull()
    expect(await store.size(blob)).toBeNull()
    expect(await writesInProgress(server)).toEqual([])

    // Bytes that differ from the size or the digest are not kept.
    expect(await store.putPart(first, blob, '1-ee', part.length, [part], sha256Hex(ciphertext(5)))).toMatchObject({ kind: 'mismatch' })
    expect(await store.putPart(first, blob, '1-ff', part.length + 1, [part])).toMatchObject({ kind: 'mismatch' })
    expect(await store.putPart(first, blob, '1-ab', part.length - 1, [part])).toMatchObject({ kind: 'mismatch' })
    expect((await partFiles(server)).filter((name) => name.includes('/1-'))).toEqual([])
    expect(await writesInProgress(server)).toEqual([])
    // Names are checked: nothing is written outside the parts of that upload's blob.
    await expect(store.putPart(first, blob, '../x', 1, [part.subarray(0, 1)])).rejects.toThrow()
    await expect(store.putPart('../x', blob, '0-aa', 1, [part.subarray(0, 1)])).rejects.toThrow()

    await store.removePart(first, blob, '40000-bb')
    await store.removePart(first, blob, '40000-bb') // gone already: nothing to do
    expect(await partFiles(server)).toEqual([`${first}/${blob}/0-aa`, `${first}/${other}/0-cc`, `${second}/${blob}/0-dd`].sort())
    await store.removeParts(first, blob)
    expect(await partFiles(server)).toEqual([`${first}/${other}/0-cc`, `${second}/${blob}/0-dd`].sort())
    await expect(store.openPart(first, blob, '0-aa')).rejects.toThrow()
    await store.removeParts(second)
    await store.removeParts(first)
    await store.removeParts(first) // idempotent
    expect(await partFiles(server)).toEqual([])
    expect(await partUploads(store)).toEqual([])
  })

  it('garbage collection removes what no asset needs, and a hold keeps it until released', async () => {
    const member = await uploader(server, `contract-${kind}`)
    const albumId = await album(member)
    const bytes = ciphertext(5_000)
    const hash = sha256Hex(bytes)
    const session = await member.client.openUploadSession({
      album_id: albumId,
      crypto_suite_id: 1,
      ciphertext_hash: hash,
      blobs: [{ role: 'original', hash, size: bytes.length }],
    })
    await member.client.putBlob(session.upload_id, hash, bytes)
    await member.client.abortUploadSession(session.upload_id)

    const now = server.clock.now()
    await server.deps.storage.takeGcHold({ holdId: `contract-${kind}`, reason: 'test', createdAt: now, expiresAt: now + 60_000 })
    expect(await collectGarbage(server.deps)).toMatchObject({ files: 0, held: true })
    expect(await store.size(hash)).toBe(bytes.length)
    await server.deps.storage.releaseGcHold(`contract-${kind}`)
    expect(await maintain(server.deps)).toMatchObject({ garbage: { files: 1 }, leftovers: 0 })
    expect(await store.size(hash)).toBeNull()
  })
})

describe('a bucket that cannot be reached', () => {
  it('fails every operation with BlobStoreUnavailableError, naming no internals', async () => {
    // A port nothing listens on: connections are refused at once.
    const store = openS3BlobStore({ ...bucket.settings('gone'), endpoint: 'http://127.0.0.1:9' })
    const bytes = ciphertext(100)
    const hash = sha256Hex(bytes)
    for (const attempt of [
      () => store.ping(),
      () => store.size(hash),
      () => store.open(hash),
      () => store.sha256(hash),
      () => store.put(hash, bytes.length, [bytes]),
      () => store.remove(hash),
      () => store.cleanLeftovers(),
      () => store.putPart(randomUUID(), hash, '0-aa', bytes.length, [bytes]),
      () => store.openPart(randomUUID(), hash, '0-aa'),
      () => store.removeParts(randomUUID()),
    ]) {
      await expect(attempt()).rejects.toBeInstanceOf(BlobStoreUnavailableError)
    }
    const walk = async () => {
      for await (const _ of store.list()) throw new Error('nothing can be listed')
    }
    await expect(walk()).rejects.toBeInstanceOf(BlobStoreUnavailableError)
  })
})
