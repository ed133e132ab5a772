// Opening an upload session never takes an account's stored plus declared bytes above
// ACCOUNT_QUOTA_BYTES (blobs it already stores add nothing) nor its open sessions above
// MAX_OPEN_UPLOADS: such an open answers 507 and writes nothing; GET /v1/storage/usage shows the
// usage, which follows uploads, lifecycle writes, aborts, expiry and garbage collection.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { maintain } from '../../src/features/maintenance/sweep.service.ts'
import { sha256Hex, type OpenUpload, type UploadSessionView } from '../../src/sdk/client.ts'
import { problemOf, raw } from '../support/actors.ts'
import { album, ciphertext, uploader, type Uploader } from '../support/albums.ts'
import { bearer, blobFiles, openBundle, writeFor } from '../support/bundles.ts'
import { everyRow, readRows } from '../support/database.ts'
import { startServer, type TestServer } from '../support/server.ts'

const QUOTA = 10_000
const MAX_OPEN = 4
const TTL_MS = 86_400 * 1000

let server: TestServer
beforeAll(async () => {
  server = await startServer({ ACCOUNT_QUOTA_BYTES: String(QUOTA), MAX_OPEN_UPLOADS: String(MAX_OPEN) })
})
afterAll(() => server.close())

/** Fresh bytes of these sizes: the first is the original, the others derivatives. */
function blobsOf(sizes: readonly number[]): Buffer[] {
  return sizes.map((size) => ciphertext(size))
}

function declaration(albumId: string, blobs: readonly Buffer[]): OpenUpload {
  const [original] = blobs
  if (original === undefined) throw new Error('a declaration needs an original')
  return {
    album_id: albumId,
    crypto_suite_id: 1,
    ciphertext_hash: sha256Hex(original),
    blobs: blobs.map((bytes) => ({ role: bytes === original ? ('original' as const) : ('derivative' as const), hash: sha256Hex(bytes), size: bytes.length })),
  }
}

async function open(member: Uploader, albumId: string, blobs: readonly Buffer[]): Promise<UploadSessionView> {
  return member.client.openUploadSession(declaration(albumId, blobs))
}

/** Opens a session for `blobs` and sends every one of them. */
async function store(member: Uploader, albumId: string, blobs: readonly Buffer[]): Promise<UploadSessionView> {
  const session = await open(member, albumId, blobs)
  for (const bytes of blobs) await member.client.putBlob(session.upload_id, sha256Hex(bytes), bytes)
  return session
}

/** The account's blob rows summed in the database itself, beside what the usage says. */
async function storedInRows(member: Uploader): Promise<number> {
  const [row] = await readRows(server.database, `select coalesce(sum(size), 0) as bytes from blobs where owner_id = '${member.userId}'`)
  return Number(row?.bytes)
}

async function expectUsage(member: Uploader, expected: { stored: number; pending: number; open: number }): Promise<void> {
  expect(await member.client.storageUsage()).toEqual({
    stored_bytes: expected.stored,
    pending_bytes: expected.pending,
    quota_bytes: QUOTA,
    open_uploads: expected.open,
    max_open_uploads: MAX_OPEN,
  })
  expect(await storedInRows(member)).toBe(expected.stored)
}

/** Runs a refused open and checks that it answered 507 `code` and wrote nothing at all. */
async function expectRefusedOpen(member: Uploader, albumId: string, blobs: readonly Buffer[], code: string) {
  // Read first: a token refresh it may make is not the open's doing.
  const usageBefore = await member.client.storageUsage()
  const rowsBefore = await everyRow(server.database)
  const filesBefore = await blobFiles(server)
  const problem = await problemOf(open(member, albumId, blobs))
  expect(problem.status).toBe(507)
  expect(problem.code).toBe(code)
  expect(await everyRow(server.database)).toEqual(rowsBefore)
  expect(await blobFiles(server)).toEqual(filesBefore)
  expect(await member.client.storageUsage()).toEqual(usageBefore)
  return problem
}

describe('GET /v1/storage/usage', () => {
  it('shows a new account using nothing, with the configured quota and cap', async () => {
    const member = await uploader(server, 'usage-new')
    await expectUsage(member, { stored: 0, pending: 0, open: 0 })
  })

  it('counts what open sessions declare as pending, a hash declared by two sessions once, and each open session', async () => {
    const member = await uploader(server, 'usage-pending')
    const albumId = await album(member)
    const [original, derivative] = blobsOf([3000, 500])
    await open(member, albumId, [original!, derivative!])
    await expectUsage(member, { stored: 0, pending: 3500, open: 1 })
    // Opened again (a client retrying): the same bytes are still to come once.
    await open(member, albumId, [original!])
    await expectUsage(member, { stored: 0, pending: 3500, open: 2 })
  })

  it('answers 401 without a bearer token', async () => {
    const answer = await raw(server, 'GET', '/v1/storage/usage')
    expect(answer.status).toBe(401)
    expect(answer.json?.code).toBe('error.auth.unauthenticated')
  })
})

describe('ACCOUNT_QUOTA_BYTES', () => {
  it('lets sessions open up to exactly the quota, and refuses one more byte with 507 error.quota.exceeded, writing nothing', async () => {
    const member = await uploader(server, 'quota-edge')
    const albumId = await album(member)
    await open(member, albumId, blobsOf([6000, 1000]))
    await open(member, albumId, blobsOf([3000]))
    await expectUsage(member, { stored: 0, pending: QUOTA, open: 2 })

    const problem = await expectRefusedOpen(member, albumId, blobsOf([1]), 'error.quota.exceeded')
    expect(problem.problem).toMatchObject({ quota_bytes: QUOTA, used_bytes: QUOTA, requested_bytes: 1 })
    await expectUsage(member, { stored: 0, pending: QUOTA, open: 2 })
  })

  it('refuses a session larger than the whole quota, naming what it would add', async () => {
    const member = await uploader(server, 'quota-large')
    const albumId = await album(member)
    const problem = await expectRefusedOpen(member, albumId, blobsOf([QUOTA, 1]), 'error.quota.exceeded')
    expect(problem.problem).toMatchObject({ quota_bytes: QUOTA, used_bytes: 0, requested_bytes: QUOTA + 1 })
  })

  it('counts blobs the account already stores as nothing: a session of them opens at the quota, one adding a byte does not', async () => {
    const member = await uploader(server, 'quota-present')
    const albumId = await album(member)
    const [kept] = blobsOf([4000])
    await store(member, albumId, [kept!])
    await open(member, albumId, blobsOf([6000]))
    await expectUsage(member, { stored: 4000, pending: 6000, open: 2 })

    const again = await open(member, albumId, [kept!])
    expect(again.blobs).toEqual([{ hash: sha256Hex(kept!), role: 'original', size: 4000, present: true, received: 4000 }])
    await expectUsage(member, { stored: 4000, pending: 6000, open: 3 })

    const [extra] = blobsOf([1])
    const problem = await expectRefusedOpen(member, albumId, [kept!, extra!], 'error.quota.exceeded')
    expect(problem.problem).toMatchObject({ used_bytes: QUOTA, requested_bytes: 1 })
  })

  it('counts the bytes of another account’s identical blob for this account, which must send them itself', async () => {
    const [shared] = blobsOf([2500])
    const first = await uploader(server, 'quota-shared-a')
    await store(first, await album(first), [shared!])
    const second = await uploader(server, 'quota-shared-b')
    await open(second, await album(second), [shared!])
    await expectUsage(second, { stored: 0, pending: 2500, open: 1 })
  })
})

describe('usage follows the blobs', () => {
  it('moves bytes from pending to stored as they are sent; bytes beyond the declaration are refused and counted nowhere', async () => {
    const member = await uploader(server, 'follow-put')
    const albumId = await album(member)
    const [original, derivative] = blobsOf([2000, 700])
    const session = await open(member, albumId, [original!, derivative!])

    const longer = Buffer.concat([original!, Buffer.from([0])])
    const put = await raw(server, 'PUT', `/v1/upload/${session.upload_id}/blobs/${sha256Hex(original!)}`, {
      headers: { ...bearer(member), 'content-type': 'application/octet-stream' },
      body: longer,
    })
    expect(put.status).toBe(422)
    expect(put.json?.code).toBe('error.upload.hash_mismatch')
    await expectUsage(member, { stored: 0, pending: 2700, open: 1 })

    await member.client.putBlob(session.upload_id, sha256Hex(original!), original!)
    await expectUsage(member, { stored: 2000, pending: 700, open: 1 })
    await member.client.putBlob(session.upload_id, sha256Hex(derivative!), derivative!)
    await expectUsage(member, { stored: 2700, pending: 0, open: 1 })
  })

  it('counts a lifecycle write’s metadata and manifest as stored, and its session as closed', async () => {
    const member = await uploader(server, 'follow-write')
    const albumId = await album(member)
    const bundle = await openBundle(member, albumId)
    const sent = bundle.original.length + bundle.derivatives.reduce((sum, bytes) => sum + bytes.length, 0)
    await expectUsage(member, { stored: sent, pending: 0, open: 1 })

    const write = await writeFor(member, bundle)
    await member.client.applyManifest(albumId, write.request)
    await expectUsage(member, { stored: sent + bundle.metadata!.length + write.manifest.length, pending: 0, open: 0 })
  })

  it('frees an aborted session’s pending bytes and place, then its sent blobs once garbage collection takes them', async () => {
    const member = await uploader(server, 'follow-abort')
    const albumId = await album(member)
    const [original, derivative] = blobsOf([5000, 1000])
    const session = await open(member, albumId, [original!, derivative!])
    await member.client.putBlob(session.upload_id, sha256Hex(original!), original!)
    await expectUsage(member, { stored: 5000, pending: 1000, open: 1 })

    await member.client.abortUploadSession(session.upload_id)
    await expectUsage(member, { stored: 5000, pending: 0, open: 0 })
    await maintain(server.deps)
    await expectUsage(member, { stored: 0, pending: 0, open: 0 })
    // The whole quota is there again.
    await open(member, albumId, blobsOf([QUOTA]))
  })

  it('frees an expired session’s pending bytes and place at expires_at, before any sweep', async () => {
    const member = await uploader(server, 'follow-expiry')
    const albumId = await album(member)
    await open(member, albumId, blobsOf([QUOTA]))
    await expectRefusedOpen(member, albumId, blobsOf([1]), 'error.quota.exceeded')

    server.clock.advance(TTL_MS)
    await expectUsage(member, { stored: 0, pending: 0, open: 0 })
    await open(member, albumId, blobsOf([QUOTA]))
  })

  it('keeps a replaced bundle’s blobs counted until garbage collection takes them', async () => {
    const member = await uploader(server, 'follow-replace')
    const albumId = await album(member)
    const first = await openBundle(member, albumId)
    const created = await writeFor(member, first)
    await member.client.applyManifest(albumId, created.request)
    const firstBytes = first.original.length + first.derivatives[0]!.length + first.metadata!.length + created.manifest.length

    const second = await openBundle(member, albumId)
    const replaced = await writeFor(member, second, {
      fileId: created.envelope.file_id,
      action: 'replace',
      prior: created.manifestHash,
      originalBlobHash: first.hashes.ciphertextHash,
    })
    await member.client.applyManifest(albumId, replaced.request)
    const secondBytes = second.original.length + second.derivatives[0]!.length + second.metadata!.length + replaced.manifest.length
    await expectUsage(member, { stored: firstBytes + secondBytes, pending: 0, open: 0 })

    await maintain(server.deps)
    await expectUsage(member, { stored: secondBytes, pending: 0, open: 0 })
  })
})

describe('MAX_OPEN_UPLOADS', () => {
  it('refuses the open past the cap with 507 error.quota.too_many_uploads, writing nothing; closing one makes room', async () => {
    const member = await uploader(server, 'cap')
    const albumId = await album(member)
    const sessions = []
    for (let i = 0; i < MAX_OPEN; i++) sessions.push(await open(member, albumId, blobsOf([10])))
    await expectUsage(member, { stored: 0, pending: 10 * MAX_OPEN, open: MAX_OPEN })

    await expectRefusedOpen(member, albumId, blobsOf([10]), 'error.quota.too_many_uploads')
    // A session adding nothing takes a place too.
    const [kept] = blobsOf([10])
    const other = await uploader(server, 'cap-present')
    const otherAlbum = await album(other)
    await store(other, otherAlbum, [kept!])
    for (let i = 1; i < MAX_OPEN; i++) await open(other, otherAlbum, blobsOf([1]))
    await expectRefusedOpen(other, otherAlbum, [kept!], 'error.quota.too_many_uploads')

    await member.client.abortUploadSession(sessions[0]!.upload_id)
    await open(member, albumId, blobsOf([10]))
    await expectUsage(member, { stored: 0, pending: 10 * MAX_OPEN, open: MAX_OPEN })
  })
})

describe('ACCOUNT_QUOTA_BYTES=0', () => {
  let unlimited: TestServer
  beforeAll(async () => {
    unlimited = await startServer({ ACCOUNT_QUOTA_BYTES: '0', MAX_BLOB_BYTES: String(2 ** 50) })
  })
  afterAll(() => unlimited.close())

  it('sets no byte quota: the usage has no quota_bytes and a session declaring 1 PiB opens', async () => {
    const member = await uploader(unlimited, 'unlimited')
    const albumId = await album(member)
    const huge = { role: 'original' as const, hash: sha256Hex(ciphertext(32)), size: 2 ** 50 }
    await member.client.openUploadSession({ album_id: albumId, crypto_suite_id: 1, ciphertext_hash: huge.hash, blobs: [huge] })
    expect(await member.client.storageUsage()).toEqual({ stored_bytes: 0, pending_bytes: 2 ** 50, open_uploads: 1, max_open_uploads: 256 })
  })
})
