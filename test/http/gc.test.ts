// Garbage collection deletes exactly the blobs nothing needs any more (no live asset, no
// replaced bundle under a future retention floor, no open upload session, no other account
// holding the same bytes), file and row, several collections at once remove each once, and
// what a crash leaves between a row and its file is reclaimed by the next maintenance pass.
import { randomUUID } from 'node:crypto'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { collectGarbage } from '../../src/features/maintenance/gc.service.ts'
import { maintain } from '../../src/features/maintenance/sweep.service.ts'
import { CofferProblem, sha256Hex, type OpenUpload } from '../../src/sdk/client.ts'
import { album, ciphertext, signedManifest, uploader, type Uploader } from '../support/albums.ts'
import { unownedBlobs } from '../support/files.ts'
import { startServer, type TestServer } from '../support/server.ts'
import { deleteStored, isStored, storedHashes } from '../support/blobs.ts'

let server: TestServer
beforeEach(async () => {
  server = await startServer()
})
afterEach(() => server.close())

const TTL_MS = 86_400 * 1000

/** Whether the account still has its owner row for the bytes. */
async function owns(member: Uploader, hash: string): Promise<boolean> {
  return (await server.deps.storage.ownedBlobHashes(member.userId, [hash])).has(hash)
}

async function downloadStatus(member: Uploader, hash: string): Promise<number> {
  try {
    await member.client.downloadBlob(hash)
    return 200
  } catch (error) {
    if (error instanceof CofferProblem) return error.status
    throw error
  }
}

interface Written {
  readonly fileId: string
  /** Hashes of the bundle: original first, then derivatives, metadata and the manifest. */
  readonly original: string
  readonly hashes: string[]
  /** The hashes stored as files: all but the manifest, which the feed's row holds (decision 0038). */
  readonly files: string[]
  readonly bytes: Map<string, Buffer>
}

/** A create, or a replace continuing `previous` (its envelope_hash read from the feed). */
async function write(
  member: Uploader,
  albumId: string,
  options: { previous?: Written; original?: Buffer; derivatives?: Buffer[]; metadata?: Buffer; retentionUntil?: string } = {},
): Promise<Written> {
  const fileId = options.previous?.fileId ?? randomUUID()
  const original = options.original ?? ciphertext(1_000)
  const derivatives = options.derivatives ?? [ciphertext(200)]
  let prior: string | null = null
  if (options.previous) {
    const entries = (await member.client.feed(albumId, 0, 1000)).entries.filter((entry) => entry.asset_id === fileId)
    prior = entries.at(-1)!.envelope_hash
  }
  let manifest: Uint8Array | undefined
  await member.client.uploadAsset({
    albumId,
    cryptoSuiteId: 1,
    original,
    derivatives,
    ...(options.metadata === undefined ? {} : { metadata: options.metadata }),
    sign: async (hashes) => {
      const signed = await signedManifest(member, hashes, {
        albumId,
        fileId,
        action: options.previous ? 'replace' : 'create',
        prior,
        originalBlobHash: options.previous?.original ?? null,
        retentionUntil: options.retentionUntil ?? null,
      })
      manifest = signed.manifestCbor
      return signed
    },
  })
  const all = [original, ...derivatives, ...(options.metadata ? [options.metadata] : []), Buffer.from(manifest!)]
  const hashes = all.map(sha256Hex)
  return { fileId, original: sha256Hex(original), hashes, files: hashes.slice(0, -1), bytes: new Map(all.map((b) => [sha256Hex(b), b])) }
}

function openFor(albumId: string, blobs: Buffer[]): OpenUpload {
  const [original, ...derivatives] = blobs
  return {
    album_id: albumId,
    crypto_suite_id: 1,
    ciphertext_hash: sha256Hex(original!),
    blobs: [
      { role: 'original', hash: sha256Hex(original!), size: original!.length },
      ...derivatives.map((bytes) => ({ role: 'derivative' as const, hash: sha256Hex(bytes), size: bytes.length })),
    ],
  }
}

describe('after a replace', () => {
  it('deletes the replaced bundle’s files and rows, keeps the new bundle’s, which still download', async () => {
    const member = await uploader(server, 'replace')
    const albumId = await album(member)
    const first = await write(member, albumId, { metadata: ciphertext(64) })
    const other = await write(member, albumId)
    // Nothing is garbage yet.
    expect(await collectGarbage(server.deps)).toEqual({ rows: 0, files: 0 })
    expect(await storedHashes(server)).toEqual([...first.files, ...other.files].sort())

    const second = await write(member, albumId, { previous: first })
    expect(await storedHashes(server)).toEqual([...first.files, ...other.files, ...second.files].sort())
    const collected = await collectGarbage(server.deps)
    expect(collected).toEqual({ rows: first.hashes.length, files: first.files.length })
    expect(await storedHashes(server)).toEqual([...other.files, ...second.files].sort())
    for (const hash of first.hashes) {
      expect(await isStored(server, hash)).toBe(false)
      expect(await owns(member, hash)).toBe(false)
    }
    for (const [hash, bytes] of [...second.bytes, ...other.bytes]) {
      expect(await owns(member, hash)).toBe(true)
      expect(Buffer.from(await member.client.downloadBlob(hash)).equals(bytes)).toBe(true)
    }
    // The feed keeps the chain's history (manifests live in the feed, not only as blobs).
    expect((await member.client.feed(albumId)).entries.map((e) => e.envelope_hash)).toEqual([first.hashes.at(-1), other.hashes.at(-1), second.hashes.at(-1)])
    // A second pass finds nothing.
    expect(await collectGarbage(server.deps)).toEqual({ rows: 0, files: 0 })
  })

  it('still releases a garbage blob whose file is already gone from the folder', async () => {
    const member = await uploader(server, 'file-gone')
    const albumId = await album(member)
    const first = await write(member, albumId)
    await write(member, albumId, { previous: first })
    await deleteStored(server, first.original)
    // Its row goes; `files` counts only the files this pass removed.
    expect(await collectGarbage(server.deps)).toEqual({ rows: first.hashes.length, files: first.files.length - 1 })
    for (const hash of first.hashes) {
      expect(await owns(member, hash)).toBe(false)
      expect(await isStored(server, hash)).toBe(false)
    }
  })

  it('keeps a blob the new bundle shares with the replaced one', async () => {
    const member = await uploader(server, 'shared-derivative')
    const albumId = await album(member)
    const thumbnail = ciphertext(300)
    const first = await write(member, albumId, { derivatives: [thumbnail] })
    await write(member, albumId, { previous: first, derivatives: [thumbnail] })
    const collected = await collectGarbage(server.deps)
    // The old original and the old manifest go (the manifest had no file); the shared thumbnail stays.
    expect(collected).toEqual({ rows: 2, files: 1 })
    expect(await isStored(server, sha256Hex(thumbnail))).toBe(true)
    expect(Buffer.from(await member.client.downloadBlob(sha256Hex(thumbnail))).equals(thumbnail)).toBe(true)
    expect(await isStored(server, first.original)).toBe(false)
  })

  it('keeps the replaced bundle while the asset’s retention_until is in the future, and collects it once the clock passes it', async () => {
    const member = await uploader(server, 'retention')
    const albumId = await album(member)
    const first = await write(member, albumId)
    const retentionUntil = server.clock.now() + 3_600_000
    const second = await write(member, albumId, { previous: first, retentionUntil: new Date(retentionUntil).toISOString() })
    const everything = [...first.files, ...second.files].sort()

    expect(await collectGarbage(server.deps)).toEqual({ rows: 0, files: 0 })
    server.clock.set(retentionUntil - 1)
    expect(await maintain(server.deps)).toMatchObject({ garbage: { rows: 0, files: 0 } })
    expect(await storedHashes(server)).toEqual(everything)
    for (const hash of first.hashes) expect(await owns(member, hash)).toBe(true)
    // Kept is not live: the replaced original is not served meanwhile.
    expect(await downloadStatus(member, first.original)).toBe(404)

    server.clock.set(retentionUntil + 1)
    expect(await collectGarbage(server.deps)).toEqual({ rows: first.hashes.length, files: first.files.length })
    expect(await storedHashes(server)).toEqual([...second.files].sort())
    for (const [hash, bytes] of second.bytes) expect(Buffer.from(await member.client.downloadBlob(hash)).equals(bytes)).toBe(true)
  })
})

describe('upload sessions', () => {
  it('keeps the blobs of an open session that nothing references yet; they go once it is aborted', async () => {
    const member = await uploader(server, 'open-session')
    const albumId = await album(member)
    const blobs = [ciphertext(500), ciphertext(100)]
    const session = await member.client.openUploadSession(openFor(albumId, blobs))
    for (const bytes of blobs) await member.client.putBlob(session.upload_id, sha256Hex(bytes), bytes)

    expect(await collectGarbage(server.deps)).toEqual({ rows: 0, files: 0 })
    expect(await storedHashes(server)).toEqual(blobs.map(sha256Hex).sort())
    expect((await member.client.uploadSessionStatus(session.upload_id)).blobs.every((blob) => blob.present)).toBe(true)

    await member.client.abortUploadSession(session.upload_id)
    expect(await collectGarbage(server.deps)).toEqual({ rows: 2, files: 2 })
    expect(await storedHashes(server)).toEqual([])
    for (const bytes of blobs) expect(await owns(member, sha256Hex(bytes))).toBe(false)
  })

  it('keeps bytes another open session of the account still declares', async () => {
    const member = await uploader(server, 'two-sessions')
    const albumId = await album(member)
    const bytes = ciphertext(400)
    const first = await member.client.openUploadSession(openFor(albumId, [bytes]))
    await member.client.putBlob(first.upload_id, sha256Hex(bytes), bytes)
    const second = await member.client.openUploadSession(openFor(albumId, [bytes]))
    expect(second.blobs[0]?.present).toBe(true)

    await member.client.abortUploadSession(first.upload_id)
    expect(await collectGarbage(server.deps)).toEqual({ rows: 0, files: 0 })
    expect(await isStored(server, sha256Hex(bytes))).toBe(true)
    await member.client.abortUploadSession(second.upload_id)
    expect(await collectGarbage(server.deps)).toEqual({ rows: 1, files: 1 })
    expect(await isStored(server, sha256Hex(bytes))).toBe(false)
  })

  it('collects the blobs of a session that expired (maintain: sweep, then collection)', async () => {
    const member = await uploader(server, 'expired-session')
    const albumId = await album(member)
    const bytes = ciphertext(300)
    const session = await member.client.openUploadSession(openFor(albumId, [bytes]))
    await member.client.putBlob(session.upload_id, sha256Hex(bytes), bytes)
    const expiresAt = Date.parse(session.expires_at)
    expect(expiresAt).toBe(server.clock.now() + TTL_MS)

    server.clock.set(expiresAt - 1)
    expect((await maintain(server.deps)).garbage).toEqual({ rows: 0, files: 0 })
    expect(await isStored(server, sha256Hex(bytes))).toBe(true)

    server.clock.set(expiresAt)
    expect((await maintain(server.deps)).garbage).toEqual({ rows: 1, files: 1 })
    expect(await isStored(server, sha256Hex(bytes))).toBe(false)
    expect(await owns(member, sha256Hex(bytes))).toBe(false)
  })

  it('collects the blobs of an expired session even before the sweep deletes its row', async () => {
    const member = await uploader(server, 'expired-unswept')
    const albumId = await album(member)
    const bytes = ciphertext(300)
    const session = await member.client.openUploadSession(openFor(albumId, [bytes]))
    await member.client.putBlob(session.upload_id, sha256Hex(bytes), bytes)
    server.clock.set(Date.parse(session.expires_at))
    expect(await collectGarbage(server.deps)).toEqual({ rows: 1, files: 1 })
    expect(await isStored(server, sha256Hex(bytes))).toBe(false)
  })
})

describe('bytes two accounts hold', () => {
  it('stay on disk until neither account references them', async () => {
    const alice = await uploader(server, 'alice')
    const bob = await uploader(server, 'bob')
    const aliceAlbum = await album(alice)
    const bobAlbum = await album(bob)
    const shared = ciphertext(2_000)
    const hash = sha256Hex(shared)
    const aliceAsset = await write(alice, aliceAlbum, { original: shared, derivatives: [] })
    const bobAsset = await write(bob, bobAlbum, { original: shared, derivatives: [] })
    expect(await owns(alice, hash)).toBe(true)
    expect(await owns(bob, hash)).toBe(true)

    await write(alice, aliceAlbum, { previous: aliceAsset, derivatives: [] })
    // Alice's row for the shared bytes and her old manifest's go; the file stays for Bob.
    expect(await collectGarbage(server.deps)).toEqual({ rows: 2, files: 0 })
    expect(await owns(alice, hash)).toBe(false)
    expect(await owns(bob, hash)).toBe(true)
    expect(await isStored(server, hash)).toBe(true)
    expect(Buffer.from(await bob.client.downloadBlob(hash)).equals(shared)).toBe(true)
    expect(await downloadStatus(alice, hash)).toBe(404)

    await write(bob, bobAlbum, { previous: bobAsset, derivatives: [] })
    expect(await collectGarbage(server.deps)).toEqual({ rows: 2, files: 1 })
    expect(await owns(bob, hash)).toBe(false)
    expect(await isStored(server, hash)).toBe(false)
  })

  it('stay while the other account has them only in an open upload session', async () => {
    const alice = await uploader(server, 'alice-open')
    const bob = await uploader(server, 'bob-open')
    const aliceAlbum = await album(alice)
    const shared = ciphertext(800)
    const hash = sha256Hex(shared)
    const aliceAsset = await write(alice, aliceAlbum, { original: shared, derivatives: [] })
    const session = await bob.client.openUploadSession(openFor(await album(bob), [shared]))
    await bob.client.putBlob(session.upload_id, hash, shared)

    await write(alice, aliceAlbum, { previous: aliceAsset, derivatives: [] })
    await collectGarbage(server.deps)
    expect(await owns(alice, hash)).toBe(false)
    expect(await isStored(server, hash)).toBe(true)
    expect((await bob.client.uploadSessionStatus(session.upload_id)).blobs[0]?.present).toBe(true)

    await bob.client.abortUploadSession(session.upload_id)
    expect(await collectGarbage(server.deps)).toEqual({ rows: 1, files: 1 })
    expect(await isStored(server, hash)).toBe(false)
  })
})

describe('concurrent collections', () => {
  /**
   * The files removed by passes run at once (one count per pass), against the garbage there was.
   * On the folder only one pass's unlink of a file succeeds: each is counted once. On a bucket,
   * remove() asks HEAD and then deletes, and DeleteObject does not say whether the object was
   * still there: passes racing on one object may each count it, so there the sum is only
   * bounded; that every garbage blob went is what the store holds afterwards (checked beside).
   */
  function expectRemovedOnce(removed: number[], garbage: number) {
    const sum = removed.reduce((total, files) => total + files, 0)
    if (server.deps.blobs.kind === 'folder') {
      expect(sum).toBe(garbage)
    } else {
      expect(sum).toBeGreaterThanOrEqual(garbage)
      expect(sum).toBeLessThanOrEqual(removed.length * garbage)
    }
  }

  it('three at once: no error, each garbage file removed once, live blobs intact', async () => {
    const member = await uploader(server, 'concurrent')
    const albumId = await album(member)
    const garbage: Written[] = []
    const live: Written[] = []
    for (let i = 0; i < 4; i++) {
      const first = await write(member, albumId, { metadata: ciphertext(32) })
      garbage.push(first)
      live.push(await write(member, albumId, { previous: first }))
    }
    live.push(await write(member, albumId))
    const garbageFiles = garbage.flatMap((w) => w.files)
    const liveFiles = live.flatMap((w) => w.files)
    expect(await storedHashes(server)).toEqual([...garbageFiles, ...liveFiles].sort())

    const results = await Promise.all([collectGarbage(server.deps), collectGarbage(server.deps), collectGarbage(server.deps)])
    expectRemovedOnce(
      results.map((r) => r.files),
      garbageFiles.length,
    )
    expect(results.reduce((sum, r) => sum + r.rows, 0)).toBe(garbage.flatMap((w) => w.hashes).length)
    expect(await storedHashes(server)).toEqual([...liveFiles].sort())
    for (const written of live) for (const [hash, bytes] of written.bytes) expect(Buffer.from(await member.client.downloadBlob(hash)).equals(bytes)).toBe(true)
  })

  it('three maintenance passes at once after sessions expired: each removed once', async () => {
    const member = await uploader(server, 'concurrent-maintain')
    const albumId = await album(member)
    const kept = await write(member, albumId)
    const stale: string[] = []
    for (let i = 0; i < 3; i++) {
      const bytes = [ciphertext(200), ciphertext(50)]
      const session = await member.client.openUploadSession(openFor(albumId, bytes))
      for (const b of bytes) await member.client.putBlob(session.upload_id, sha256Hex(b), b)
      stale.push(...bytes.map(sha256Hex))
    }
    server.clock.advance(TTL_MS)
    const results = await Promise.all([maintain(server.deps), maintain(server.deps), maintain(server.deps)])
    expectRemovedOnce(
      results.map((r) => r.garbage.files),
      stale.length,
    )
    expect(results.reduce((sum, r) => sum + (r.deleted.upload_sessions ?? 0), 0)).toBe(3 + 1) // the applied session expires too
    expect(await storedHashes(server)).toEqual([...kept.files].sort())
    for (const [hash, bytes] of kept.bytes) expect(Buffer.from(await member.client.downloadBlob(hash)).equals(bytes)).toBe(true)
  })
})

/**
 * Each state below is what a process killed at that point leaves (reproduced by running the
 * steps the killed operation had done, with the same components); the maintenance pass after
 * a restart must leave no file that no row owns.
 */
describe('what a crash leaves between a row and its file', () => {
  const unowned = async () => unownedBlobs(await storedHashes(server), server.database, server.clock.now())

  it('garbage rows deleted, files not yet: the next pass removes the files', async () => {
    const member = await uploader(server, 'crash-gc')
    const albumId = await album(member)
    const first = await write(member, albumId)
    const second = await write(member, albumId, { previous: first })
    // The collection's transaction committed, then the process died.
    expect(await server.deps.storage.transaction((tx) => tx.collectGarbage(server.clock.now()))).toBe(first.hashes.length)
    expect(await unowned()).toEqual([...first.files].sort())
    await maintain(server.deps)
    expect(await unowned()).toEqual([])
    for (const hash of first.hashes) expect(await isStored(server, hash)).toBe(false)
    for (const hash of second.files) expect(await isStored(server, hash)).toBe(true)
  })

  it('an uploaded file in place, its row never written: reclaimed once its session is aborted, or expires', async () => {
    const member = await uploader(server, 'crash-put')
    const albumId = await album(member)
    const sessions: { session: { upload_id: string }; hash: string }[] = []
    for (let i = 0; i < 2; i++) {
      const bytes = ciphertext(400)
      const session = await member.client.openUploadSession(openFor(albumId, [bytes]))
      // The PUT stored the bytes, then the process died before recording them.
      expect(await server.deps.blobs.put(sha256Hex(bytes), bytes.length, [bytes])).toEqual({ kind: 'stored' })
      sessions.push({ session, hash: sha256Hex(bytes) })
    }
    await maintain(server.deps)
    expect(await unowned()).toEqual([]) // both still declared by open sessions
    expect((await storedHashes(server)).filter((file) => sessions.some((s) => s.hash === file))).toHaveLength(2)

    await member.client.abortUploadSession(sessions[0]!.session.upload_id)
    await maintain(server.deps)
    expect(await isStored(server, sessions[0]!.hash)).toBe(false)
    expect(await isStored(server, sessions[1]!.hash)).toBe(true)

    server.clock.advance(TTL_MS)
    await maintain(server.deps)
    expect(await isStored(server, sessions[1]!.hash)).toBe(false)
    expect(await unowned()).toEqual([])
  })

  it("a write's metadata stored, its transaction never run: reclaimed once the session expires", async () => {
    const member = await uploader(server, 'crash-extras')
    const albumId = await album(member)
    const bytes = ciphertext(400)
    const session = await member.client.openUploadSession(openFor(albumId, [bytes]))
    await member.client.putBlob(session.upload_id, sha256Hex(bytes), bytes)
    const extras = [ciphertext(60), ciphertext(90)]
    await server.deps.storage.declareExtras(session.upload_id, extras.map(sha256Hex))
    for (const extra of extras) await server.deps.blobs.put(sha256Hex(extra), extra.length, [extra])
    await maintain(server.deps)
    expect(await unowned()).toEqual([])

    server.clock.advance(TTL_MS)
    await maintain(server.deps)
    for (const hash of [bytes, ...extras].map(sha256Hex)) expect(await isStored(server, hash)).toBe(false)
    expect(await unowned()).toEqual([])
  })
})

describe('the metadata a write is storing', () => {
  it('are kept while declared on the write’s open session, and collected once withdrawn', async () => {
    const member = await uploader(server, 'extras-declared')
    const albumId = await album(member)
    const metadata = ciphertext(64)
    const first = await write(member, albumId, { metadata })
    await write(member, albumId, { previous: first })
    // The first bundle's metadata is garbage now; a new session's write is about to reuse it.
    const bytes = [ciphertext(300)]
    const session = await member.client.openUploadSession(openFor(albumId, bytes))
    await server.deps.storage.declareExtras(session.upload_id, [sha256Hex(metadata)])

    await collectGarbage(server.deps)
    expect(await owns(member, sha256Hex(metadata))).toBe(true)
    expect(await isStored(server, sha256Hex(metadata))).toBe(true)

    await server.deps.storage.withdrawExtras(session.upload_id)
    await collectGarbage(server.deps)
    expect(await owns(member, sha256Hex(metadata))).toBe(false)
    expect(await isStored(server, sha256Hex(metadata))).toBe(false)
  })
})

describe('a hold on file removal (a backup copying files, decision 0011)', () => {
  it('lets rows go but keeps every file until it is released, and a lapsed hold holds nothing', async () => {
    const member = await uploader(server, 'held')
    const albumId = await album(member)
    const abandoned = async (): Promise<string[]> => {
      const blobs = [ciphertext(300), ciphertext(100)]
      const session = await member.client.openUploadSession(openFor(albumId, blobs))
      for (const bytes of blobs) await member.client.putBlob(session.upload_id, sha256Hex(bytes), bytes)
      await member.client.abortUploadSession(session.upload_id)
      return blobs.map(sha256Hex)
    }
    const first = await abandoned()
    const now = server.clock.now()
    await server.deps.storage.takeGcHold({ holdId: 'backup-1', reason: 'test', createdAt: now, expiresAt: now + 60_000 })
    expect(await collectGarbage(server.deps)).toEqual({ rows: 2, files: 0, held: true })
    for (const hash of first) expect(await isStored(server, hash)).toBe(true)
    expect(await server.deps.storage.renewGcHold('backup-1', now, now + 120_000)).toBe(true)
    await server.deps.storage.releaseGcHold('backup-1')
    expect(await server.deps.storage.renewGcHold('backup-1', now, now + 180_000)).toBe(false)
    expect(await collectGarbage(server.deps)).toEqual({ rows: 0, files: 2 })
    for (const hash of first) expect(await isStored(server, hash)).toBe(false)

    // A holder that died: its hold lapses at its end, and the sweep tidies it away.
    const second = await abandoned()
    await server.deps.storage.takeGcHold({ holdId: 'backup-2', reason: 'test', createdAt: now, expiresAt: now + 60_000 })
    expect(await collectGarbage(server.deps)).toMatchObject({ rows: 2, files: 0, held: true })
    server.clock.set(now + 60_000)
    expect(await server.deps.storage.renewGcHold('backup-2', server.clock.now(), now + 120_000)).toBe(false)
    expect(await maintain(server.deps)).toMatchObject({ deleted: { gc_holds: 1 }, garbage: { rows: 0, files: 2 } })
    for (const hash of second) expect(await isStored(server, hash)).toBe(false)
    expect(await unownedBlobs(await storedHashes(server), server.database, server.clock.now())).toEqual([])
  })
})
