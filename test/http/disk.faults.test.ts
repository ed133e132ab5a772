// The disk under the blob folder full or failing while bytes are stored: the write answers 507
// (error.storage.full for ENOSPC, error.storage.failing for EIO), its temporary file is gone,
// nothing is recorded (no owner row, no feed entry, no receipt, no extra declared), and the
// server keeps serving: the same write succeeds once the disk is back. Faults are injected into
// the real blob store's writes; once, as root, a real 1 MiB tmpfs fills up.
import { execFileSync } from 'node:child_process'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { BlobStore } from '../../src/blob-store/port.ts'
import { sha256Hex } from '../../src/sdk/client.ts'
import { problemOf } from '../support/actors.ts'
import { album, ciphertext, uploader, type Uploader } from '../support/albums.ts'
import { albumState, openBundle, writeFor } from '../support/bundles.ts'
import { startServer, type TestServer } from '../support/server.ts'
import { folderOf } from '../support/blobs.ts'

/** An error as the file system raises it. */
function systemError(code: 'ENOSPC' | 'EIO'): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: simulated by the test`), { code, errno: code === 'ENOSPC' ? -28 : -5, syscall: 'write' })
}

/** Bytes that fail with `code` once the store has begun writing them to its temporary file. */
async function* failingAfterFirstChunk(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, code: 'ENOSPC' | 'EIO'): AsyncIterable<Uint8Array> {
  for await (const chunk of source) {
    yield chunk
    throw systemError(code)
  }
  throw systemError(code)
}

async function temporaryFiles(server: TestServer): Promise<string[]> {
  return readdir(path.join(folderOf(server).root, 'tmp'))
}

describe("faults injected into the blob store's writes", () => {
  let server: TestServer
  let member: Uploader
  let albumId: string
  let realPut: BlobStore['put']
  beforeAll(async () => {
    server = await startServer()
    member = await uploader(server, 'disk-faults')
    albumId = await album(member)
    realPut = server.deps.blobs.put.bind(server.deps.blobs)
  })
  afterEach(() => {
    server.deps.blobs.put = realPut
  })
  afterAll(() => server.close())

  /** The store fails the `nth` write from now (1-based) with `code`, the others as usual. */
  function failWrite(nth: number, code: 'ENOSPC' | 'EIO'): void {
    let writes = 0
    server.deps.blobs.put = (hash, size, source) => realPut(hash, size, ++writes === nth ? failingAfterFirstChunk(source, code) : source)
  }

  it.each([
    ['EIO', 'error.storage.failing'],
    ['ENOSPC', 'error.storage.full'],
  ] as const)('a blob PUT failing with %s: 507 %s, nothing kept, and the PUT succeeds once the disk is back', async (code, problem) => {
    const bundle = await openBundle(member, albumId, { send: 'none' })
    const before = await albumState(server, member, albumId)
    failWrite(1, code)
    const refused = await problemOf(member.client.putBlob(bundle.uploadId, bundle.hashes.ciphertextHash, bundle.original))
    expect([refused.status, refused.code]).toEqual([507, problem])
    expect(await temporaryFiles(server)).toEqual([])
    expect(await albumState(server, member, albumId)).toEqual(before)
    expect(server.logs.some((line) => line.includes('"level":50') && line.includes(`"cause":"${code}"`))).toBe(true)

    server.deps.blobs.put = realPut
    await member.client.putBlob(bundle.uploadId, bundle.hashes.ciphertextHash, bundle.original)
    expect((await member.client.uploadSessionStatus(bundle.uploadId)).blobs.find((b) => b.hash === bundle.hashes.ciphertextHash)?.present).toBe(true)
  })

  it('a lifecycle write whose metadata cannot be stored: 507, nothing applied or declared, and the same write succeeds after', async () => {
    const bundle = await openBundle(member, albumId)
    const write = await writeFor(member, bundle)
    const before = await albumState(server, member, albumId)
    failWrite(1, 'ENOSPC')
    const refused = await problemOf(member.client.applyManifest(albumId, write.request))
    expect([refused.status, refused.code]).toEqual([507, 'error.storage.full'])
    expect(await temporaryFiles(server)).toEqual([])
    expect(await albumState(server, member, albumId)).toEqual(before)

    server.deps.blobs.put = realPut
    const applied = await member.client.applyManifest(albumId, write.request)
    expect(applied.replayed).toBe(false)
    expect(Buffer.from(await member.client.downloadBlob(write.manifestHash)).equals(write.manifest)).toBe(true)
  })

  it('a lifecycle write stores no file for its manifest: a second blob write set to fail, it is applied (it makes one, the metadata’s)', async () => {
    const bundle = await openBundle(member, albumId)
    const write = await writeFor(member, bundle)
    failWrite(2, 'ENOSPC')
    expect((await member.client.applyManifest(albumId, write.request)).replayed).toBe(false)
    expect(Buffer.from(await member.client.downloadBlob(write.manifestHash)).equals(write.manifest)).toBe(true)
  })
})

// Mounting needs root (CAP_SYS_ADMIN); CI runs as root.
describe.runIf(process.getuid?.() === 0)('a real disk that fills up (a 1 MiB tmpfs under the blob folder)', () => {
  let server: TestServer
  let member: Uploader
  let albumId: string
  let mountPoint: string
  beforeAll(async () => {
    mountPoint = await mkdtemp(path.join(tmpdir(), 'coffer-tmpfs-'))
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mountPoint])
    server = await startServer({ BLOB_DIR: mountPoint })
    member = await uploader(server, 'tmpfs')
    albumId = await album(member)
  })
  afterAll(async () => {
    await server.close()
    execFileSync('umount', [mountPoint])
    await rm(mountPoint, { recursive: true, force: true })
  })

  it('answers 507 error.storage.full for bytes that do not fit, keeps nothing, and stores what fits next', async () => {
    const big = ciphertext(1_500_000)
    const session = await member.client.openUploadSession({
      album_id: albumId,
      crypto_suite_id: 1,
      ciphertext_hash: sha256Hex(big),
      blobs: [{ role: 'original', hash: sha256Hex(big), size: big.length }],
    })
    const before = await albumState(server, member, albumId)
    const refused = await problemOf(member.client.putBlob(session.upload_id, sha256Hex(big), big))
    expect([refused.status, refused.code]).toEqual([507, 'error.storage.full'])
    expect(await temporaryFiles(server)).toEqual([])
    expect(await albumState(server, member, albumId)).toEqual(before)

    const bundle = await openBundle(member, albumId)
    const applied = await member.client.applyManifest(albumId, (await writeFor(member, bundle)).request)
    expect(applied.replayed).toBe(false)
    expect(Buffer.from(await member.client.downloadBlob(bundle.hashes.ciphertextHash)).equals(bundle.original)).toBe(true)
  })
})
