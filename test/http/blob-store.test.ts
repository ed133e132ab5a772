// The blob folder holds a blob under its content address with exactly its bytes or not at
// all: writes in progress live only in tmp/, a refused or interrupted write leaves nothing,
// and the start-up cleanup removes what dead writers left while sparing live ones.
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdir, mkdtemp, readdir, readFile, rm, stat, unlink, utimes, writeFile } from 'node:fs/promises'
import { request as httpRequest } from 'node:http'
import { hostname, tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CofferProblem, sha256Hex, type OpenUpload } from '../../src/sdk/client.ts'
import { album, ciphertext, signedManifest, uploader, type Uploader } from '../support/albums.ts'
import { startServer, type TestServer } from '../support/server.ts'
import { folderOf } from '../support/blobs.ts'

let server: TestServer
let member: Uploader
let albumId: string
beforeAll(async () => {
  server = await startServer()
  member = await uploader(server, 'store')
  albumId = await album(member)
})
afterAll(() => server.close())

const tmpDir = () => path.join(folderOf(server).root, 'tmp')

async function files(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true })
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(directory, path.join(entry.parentPath, entry.name)))
    .sort()
}

const tmpFiles = () => files(tmpDir())
const blobFiles = () => files(folderOf(server).root)

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  )
}

/** Polls until `check` holds (cleanup after an interrupted request happens after the client gave up). */
async function until(check: () => Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

function onlyOriginal(bytes: Buffer): OpenUpload {
  const hash = sha256Hex(bytes)
  return { album_id: albumId, crypto_suite_id: 1, ciphertext_hash: hash, blobs: [{ role: 'original', hash, size: bytes.length }] }
}

/** The documented layout: <root>/<2 hex>/<2 hex>/<64 hex>. */
const addressOf = (hash: string) => path.join(hash.slice(0, 2), hash.slice(2, 4), hash)

describe('content-addressed files', () => {
  it('puts exactly the uploaded bytes at pathOf(hash) and nothing else, leaving tmp/ empty', async () => {
    const bytes = ciphertext(10_000)
    const hash = sha256Hex(bytes)
    const session = await member.client.openUploadSession(onlyOriginal(bytes))
    const before = await blobFiles()
    await member.client.putBlob(session.upload_id, hash, bytes)
    const after = await blobFiles()
    expect(after.filter((file) => !before.includes(file))).toEqual([addressOf(hash)])
    expect(folderOf(server).pathOf(hash)).toBe(path.join(folderOf(server).root, addressOf(hash)))
    expect((await readFile(folderOf(server).pathOf(hash))).equals(bytes)).toBe(true)
    expect(await tmpFiles()).toEqual([])
  })

  it('opens a stream that loses nothing to a consumer attached later, and counts the bytes it passes on', async () => {
    const bytes = ciphertext(300_000)
    const hash = sha256Hex(bytes)
    const session = await member.client.openUploadSession(onlyOriginal(bytes))
    await member.client.putBlob(session.upload_id, hash, bytes)
    const counted = () => server.deps.metrics.blobBytesRead.get().then((metric) => metric.values[0]?.value ?? 0)
    const before = await counted()
    const stream = await server.deps.blobs.open(hash)
    // A consumer that awaits something first, as a copy or a hash behind a database call does.
    await new Promise((resolve) => setTimeout(resolve, 50))
    const chunks: Buffer[] = []
    for await (const chunk of stream) chunks.push(chunk as Buffer)
    expect(Buffer.concat(chunks).equals(bytes)).toBe(true)
    await new Promise((resolve) => setImmediate(resolve))
    expect((await counted()) - before).toBe(bytes.length)
  })

  it('stores the metadata blob of a lifecycle write at its address, and its manifest (provenance) in the database only', async () => {
    const original = ciphertext(2_000)
    const derivative = ciphertext(500)
    const metadata = ciphertext(90)
    let manifest: Uint8Array | undefined
    const before = await blobFiles()
    await member.client.uploadAsset({
      albumId,
      cryptoSuiteId: 1,
      original,
      derivatives: [derivative],
      metadata,
      sign: async (hashes) => {
        const signed = await signedManifest(member, hashes, { albumId })
        manifest = signed.manifestCbor
        return signed
      },
    })
    const expected = new Map<string, Uint8Array>([original, derivative, metadata].map((bytes) => [sha256Hex(bytes), bytes]))
    const added = (await blobFiles()).filter((file) => !before.includes(file))
    expect(added).toEqual([...expected.keys()].map(addressOf).sort())
    for (const [hash, bytes] of expected) expect((await readFile(folderOf(server).pathOf(hash))).equals(Buffer.from(bytes))).toBe(true)
    expect(await tmpFiles()).toEqual([])
    // The provenance blob still downloads, exactly the signed manifest's bytes.
    const manifestHash = sha256Hex(manifest!)
    expect(await server.deps.blobs.size(manifestHash)).toBeNull()
    expect(Buffer.from(await member.client.downloadBlob(manifestHash)).equals(Buffer.from(manifest!))).toBe(true)
  })

  it('streams a blob larger than BODY_LIMIT_BYTES (the per-blob limit is MAX_BLOB_BYTES)', async () => {
    const bytes = ciphertext(server.deps.config.bodyLimitBytes * 3 + 7)
    const hash = sha256Hex(bytes)
    const session = await member.client.openUploadSession(onlyOriginal(bytes))
    await member.client.putBlob(session.upload_id, hash, bytes)
    expect((await readFile(folderOf(server).pathOf(hash))).equals(bytes)).toBe(true)
    expect(await tmpFiles()).toEqual([])
  })

  it('takes the same bytes sent twice at once: both succeed, one complete file, no temporary file', async () => {
    const bytes = ciphertext(300_000)
    const hash = sha256Hex(bytes)
    const session = await member.client.openUploadSession(onlyOriginal(bytes))
    await Promise.all([member.client.putBlob(session.upload_id, hash, bytes), member.client.putBlob(session.upload_id, hash, bytes)])
    expect((await readFile(folderOf(server).pathOf(hash))).equals(bytes)).toBe(true)
    expect(await tmpFiles()).toEqual([])
    expect((await member.client.uploadSessionStatus(session.upload_id)).blobs[0]?.present).toBe(true)
  })

  it('leaves no file, temporary or final, after a refused put', async () => {
    const bytes = ciphertext(10_000)
    const hash = sha256Hex(bytes)
    const session = await member.client.openUploadSession(onlyOriginal(bytes))
    const before = await blobFiles()
    const wrong = Buffer.from(bytes)
    wrong[5_000] = wrong[5_000]! ^ 0xff
    const error = await member.client.putBlob(session.upload_id, hash, wrong).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CofferProblem)
    expect((error as CofferProblem).code).toBe('error.upload.hash_mismatch')
    expect(await blobFiles()).toEqual(before)
    expect(await tmpFiles()).toEqual([])
  })

  it('leaves nothing when the byte source fails mid-write (store level)', async () => {
    const bytes = ciphertext(4_096)
    const hash = sha256Hex(bytes)
    const before = await blobFiles()
    async function* failing(): AsyncGenerator<Uint8Array> {
      yield bytes.subarray(0, 1_000)
      throw new Error('the source broke')
    }
    await expect(server.deps.blobs.put(hash, bytes.length, failing())).rejects.toThrow('the source broke')
    expect(await blobFiles()).toEqual(before)
    expect(await exists(folderOf(server).pathOf(hash))).toBe(false)
  })
})

describe('start-up cleanup of interrupted writes', () => {
  // The same sanitizing as src/blob-store/local-folder.ts.
  const host = hostname().replace(/[^A-Za-z0-9.-]/g, '_')
  const hex = () => randomBytes(8).toString('hex')

  function deadPid(): number {
    const child = spawnSync(process.execPath, ['-e', ''])
    const pid = child.pid
    if (pid === undefined) throw new Error('no child pid')
    // Not running any more (and not reused by now, in all likelihood): check.
    expect(() => process.kill(pid, 0)).toThrow()
    return pid
  }

  it('removes a dead writer’s file and an unparsable name, keeps a live writer’s and a recent foreign one', async () => {
    const dead = `${host}-${deadPid()}-${hex()}.part`
    const unparsable = 'leftover-without-a-pid.tmp'
    const unparsablePart = `${host}-notapid-${hex()}.part`
    const live = `${host}-${process.pid}-${hex()}.part`
    const foreignRecent = `another-host.example-${process.pid}-${hex()}.part`
    const foreignStale = `another-host.example-1-${hex()}.part`
    for (const name of [dead, unparsable, unparsablePart, live, foreignRecent, foreignStale]) await writeFile(path.join(tmpDir(), name), randomBytes(64))
    // Another instance's file untouched for two days: its writer is gone too.
    const twoDaysAgo = new Date(Date.now() - 48 * 3600 * 1000)
    await utimes(path.join(tmpDir(), foreignStale), twoDaysAgo, twoDaysAgo)
    const blobsBefore = (await blobFiles()).filter((file) => !file.startsWith('tmp'))

    const removed = await server.deps.blobs.cleanLeftovers()
    expect(await tmpFiles()).toEqual([live, foreignRecent].sort())
    expect(removed).toBe(4)
    // Blobs themselves are never touched.
    expect((await blobFiles()).filter((file) => !file.startsWith('tmp'))).toEqual(blobsBefore)

    // A second run finds nothing more to do.
    expect(await server.deps.blobs.cleanLeftovers()).toBe(0)
    expect(await tmpFiles()).toEqual([live, foreignRecent].sort())
    for (const name of [live, foreignRecent]) await unlink(path.join(tmpDir(), name))
  })

  it('runs at start-up: a server opened on a folder with leftovers starts without the dead ones', async () => {
    const folder = await mkdtemp(path.join(tmpdir(), 'coffer-leftovers-'))
    try {
      await mkdir(path.join(folder, 'tmp'))
      const dead = `${host}-${deadPid()}-${hex()}.part`
      const live = `${host}-${process.pid}-${hex()}.part`
      for (const name of [dead, 'junk', live]) await writeFile(path.join(folder, 'tmp', name), randomBytes(16))
      const other = await startServer({ BLOB_DIR: folder })
      try {
        expect(folderOf(other).root).toBe(folder)
        expect(await files(path.join(folder, 'tmp'))).toEqual([live])
      } finally {
        await other.close()
      }
    } finally {
      await rm(folder, { recursive: true, force: true })
    }
  })

  it('keeps the temporary file of a put in progress on this instance, not one an earlier process with its pid left', async () => {
    // A restarted container's server often has the pid of the one before: its names differ by incarnation.
    const earlier = `${host}-${process.pid}-i${'0'.repeat(16)}-${hex()}.part`
    await writeFile(path.join(tmpDir(), earlier), randomBytes(64))
    const bytes = ciphertext(20_000)
    const hash = sha256Hex(bytes)
    const session = await member.client.openUploadSession(onlyOriginal(bytes))
    const request = openStreamingPut(session.upload_id, hash, bytes.length)
    request.write(bytes.subarray(0, 5_000))
    await until(async () => (await tmpFiles()).length === 2, 'the temporary file')
    const inProgress = (await tmpFiles()).filter((name) => name !== earlier)
    expect(inProgress[0]).toMatch(new RegExp(`^${host.replace(/\./g, '\\.')}-${process.pid}-i[0-9a-f]{16}-[0-9a-f]+\\.part$`))
    expect(await server.deps.blobs.cleanLeftovers()).toBe(1)
    expect(await tmpFiles()).toEqual(inProgress)
    request.end(bytes.subarray(5_000))
    expect((await request.answer).status).toBe(204)
    expect((await readFile(folderOf(server).pathOf(hash))).equals(bytes)).toBe(true)
    expect(await tmpFiles()).toEqual([])
  })
})

/** A PUT over node:http whose body the test writes piece by piece. */
function openStreamingPut(uploadId: string, hash: string, contentLength?: number) {
  const headers: Record<string, string> = {
    authorization: `Bearer ${member.client.tokens!.access_token}`,
    'content-type': 'application/octet-stream',
    ...(contentLength === undefined ? {} : { 'content-length': String(contentLength) }),
  }
  const request = httpRequest(new URL(`${server.url}/v1/upload/${uploadId}/blobs/${hash}`), { method: 'PUT', headers })
  const answer = new Promise<{ status: number }>((resolve, reject) => {
    request.on('response', (response) => {
      response.resume()
      response.on('end', () => resolve({ status: response.statusCode ?? 0 }))
    })
    request.on('error', reject)
  })
  answer.catch(() => {}) // an aborted request rejects; the tests that abort do not wait on it
  return Object.assign(request, { answer })
}

describe('an interrupted upload', () => {
  it('aborted mid-stream by the client (fetch, AbortController) leaves no blob and no temporary file; a retry completes', async () => {
    const bytes = ciphertext(200_000)
    const hash = sha256Hex(bytes)
    const session = await member.client.openUploadSession(onlyOriginal(bytes))
    const before = await blobFiles()
    const controller = new AbortController()
    // Sends the first part, then never ends: only the abort finishes the request.
    const body = new ReadableStream<Uint8Array>({
      start(stream) {
        stream.enqueue(bytes.subarray(0, 60_000))
      },
    })
    const pending = fetch(`${server.url}/v1/upload/${session.upload_id}/blobs/${hash}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${member.client.tokens!.access_token}`, 'content-type': 'application/octet-stream' },
      body,
      duplex: 'half',
      signal: controller.signal,
    } as RequestInit).then(
      (response) => response.status,
      (error: unknown) => error,
    )
    await until(async () => (await tmpFiles()).length === 1, 'the write to start')
    controller.abort()
    const outcome = await pending
    expect(outcome).toBeInstanceOf(Error)
    expect((outcome as Error).name).toBe('AbortError')

    await until(async () => (await tmpFiles()).length === 0, 'the temporary file to go')
    expect(await blobFiles()).toEqual(before)
    expect(await exists(folderOf(server).pathOf(hash))).toBe(false)
    expect((await member.client.uploadSessionStatus(session.upload_id)).blobs[0]?.present).toBe(false)

    await member.client.putBlob(session.upload_id, hash, bytes)
    expect((await readFile(folderOf(server).pathOf(hash))).equals(bytes)).toBe(true)
    expect((await member.client.uploadSessionStatus(session.upload_id)).blobs[0]?.present).toBe(true)
    expect(await tmpFiles()).toEqual([])
  })

  it('cut off under a Content-Length leaves no blob and no temporary file; a retry completes', async () => {
    const bytes = ciphertext(200_000)
    const hash = sha256Hex(bytes)
    const session = await member.client.openUploadSession(onlyOriginal(bytes))
    const before = await blobFiles()
    const request = openStreamingPut(session.upload_id, hash, bytes.length)
    request.write(bytes.subarray(0, 100_000))
    await until(async () => (await tmpFiles()).length === 1, 'the write to start')
    request.destroy()

    await until(async () => (await tmpFiles()).length === 0, 'the temporary file to go')
    expect(await blobFiles()).toEqual(before)
    expect(await exists(folderOf(server).pathOf(hash))).toBe(false)

    await member.client.putBlob(session.upload_id, hash, bytes)
    expect((await readFile(folderOf(server).pathOf(hash))).equals(bytes)).toBe(true)
    expect(await tmpFiles()).toEqual([])
  })

  it('the server keeps answering after an interrupted upload', async () => {
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
    // An interruption is the client's doing, not a fault of the server.
    const faults = server.logs.map((line) => JSON.parse(line) as { level: number; msg?: string }).filter((entry) => entry.level >= 50)
    expect(faults).toEqual([])
  })
})
