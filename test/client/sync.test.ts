// The sync engine (src/client/sync.ts) with its node:sqlite state store and the folder walk,
// against a real server: a folder backed up into a named album once, skipped unread the next
// time, found by content when the device's record is lost, failures isolated, stopping and
// resuming, upload sessions a crash left open aborted.
import { randomBytes } from 'node:crypto'
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { albumFiles, findAlbum, liveEntries, namedAlbums, openAlbum, type Library } from '../../src/client/albums.ts'
import { openSyncState } from '../../src/client/node/state.ts'
import { candidateOf, walkMedia } from '../../src/client/node/walk.ts'
import { backupAll, type BackupEvent, type Candidate } from '../../src/client/sync.ts'
import { photoLibrary } from '../support/albums.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
let work: string
let library: Library

beforeAll(async () => {
  server = await startServer()
  work = await mkdtemp(path.join(tmpdir(), 'coffer-sync-'))
  library = await photoLibrary(server, 'sync')
})
afterAll(async () => {
  await server.close()
  await rm(work, { recursive: true, force: true })
})

/** A folder of `count` files of random bytes, some in a subfolder, plus files the walk skips. */
async function folderOf(count: number): Promise<string> {
  const root = await mkdtemp(path.join(work, 'photos-'))
  await mkdir(path.join(root, 'trip'))
  for (let i = 0; i < count; i++) {
    const file = path.join(root, i % 3 === 0 ? 'trip' : '', `IMG_${String(i).padStart(4, '0')}.${i % 2 === 0 ? 'jpg' : 'mov'}`)
    await writeFile(file, randomBytes(1000 + i * 997))
    await utimes(file, new Date(), new Date(1_600_000_000_000 + i * 1000))
  }
  await writeFile(path.join(root, 'notes.txt'), 'not a photo')
  await writeFile(path.join(root, '.hidden.jpg'), randomBytes(10))
  return root
}

async function candidates(root: string): Promise<Candidate[]> {
  const found: Candidate[] = []
  for await (const walked of walkMedia(root)) found.push(candidateOf(walked))
  return found
}

const stateIn = (name: string) => openSyncState(path.join(work, `${name}.sqlite`))

describe('backupAll', () => {
  it('backs a folder up once; the next run reads nothing; a lost record finds the content stored', async () => {
    const root = await folderOf(7)
    const album = await openAlbum(library, 'Sync once')
    const target = { ...library, albumId: album.albumId }
    const state = stateIn('once')
    const listed = await candidates(root)
    expect(listed.map((c) => c.path)).toEqual([
      'IMG_0001.mov',
      'IMG_0002.jpg',
      'IMG_0004.jpg',
      'IMG_0005.mov',
      'trip/IMG_0000.jpg',
      'trip/IMG_0003.mov',
      'trip/IMG_0006.jpg',
    ])

    const first = await backupAll({ target, state, concurrency: 3 }, listed)
    expect(first).toMatchObject({ files: 7, stored: 7, present: 0, unchanged: 0, failed: 0, stopped: false })
    const entries = await liveEntries(library.client, album.albumId)
    expect(entries).toHaveLength(8) // the album's record and the seven files

    // Unchanged files are not read: a source that would throw is never opened.
    const unread = listed.map((c) => ({ ...c, source: () => Promise.reject(new Error('read')) }))
    expect(await backupAll({ target, state }, unread)).toMatchObject({ unchanged: 7, stored: 0, failed: 0 })

    // Another device (or this one with its state lost) finds the content stored.
    const second = await backupAll({ target, state: stateIn('lost') }, await candidates(root))
    expect(second).toMatchObject({ present: 7, stored: 0, sentBytes: 0 })
    expect(await liveEntries(library.client, album.albumId)).toHaveLength(8)

    const names = []
    for await (const file of albumFiles(library, album.albumId)) names.push(file.metadata.name)
    expect(names.sort()).toEqual(listed.map((c) => c.path).sort())
    state.close()
  })

  it('keeps going past a file that fails, naming it, and tries it again next time', async () => {
    const root = await folderOf(3)
    const target = { ...library, albumId: (await openAlbum(library, 'Sync failure')).albumId }
    const state = stateIn('failure')
    const listed = await candidates(root)
    const broken = listed.map((c, i) => (i === 1 ? { ...c, source: () => Promise.reject(new Error('disk read error')) } : c))
    const events: BackupEvent[] = []
    const summary = await backupAll({ target, state, onEvent: (e) => events.push(e) }, broken)
    expect(summary).toMatchObject({ stored: 2, failed: 1 })
    expect(summary.failures).toEqual([{ path: listed[1]!.path, error: 'disk read error' }])
    expect(events.filter((e) => e.type === 'file' && e.outcome === 'failed')).toHaveLength(1)
    expect(await backupAll({ target, state }, listed)).toMatchObject({ stored: 1, unchanged: 2, failed: 0 })
  })

  it('stops taking files when told, and the next run does the rest', async () => {
    const root = await folderOf(6)
    const target = { ...library, albumId: (await openAlbum(library, 'Sync stop')).albumId }
    const state = stateIn('stop')
    const stop = new AbortController()
    const first = await backupAll(
      { target, state, concurrency: 1, signal: stop.signal, onEvent: (e) => e.type === 'file' && stop.abort() },
      await candidates(root),
    )
    expect(first).toMatchObject({ stored: 1, stopped: true })
    expect(await backupAll({ target, state }, await candidates(root))).toMatchObject({ unchanged: 1, stored: 5, stopped: false })
  })

  it("stops at a refusal every file would meet (the session ended) and throws the server's problem itself", async () => {
    const own = await photoLibrary(server, 'sync-ended')
    const target = { ...own, albumId: (await openAlbum(own, 'Sync ended')).albumId }
    // Ended on the server, as by a revoke from another device; the client still holds its tokens.
    const ended = await fetch(`${server.url}/v1/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${own.client.tokens?.access_token}` } })
    expect(ended.status).toBe(204)
    const events: BackupEvent[] = []
    const run = backupAll({ target, state: stateIn('ended'), concurrency: 2, onEvent: (e) => events.push(e) }, await candidates(await folderOf(4)))
    await expect(run).rejects.toMatchObject({ name: 'CofferProblem', status: 401 })
    expect(events.filter((e) => e.type === 'file')).toEqual([])
  })

  it('aborts upload sessions a crash left open', async () => {
    const target = { ...library, albumId: (await openAlbum(library, 'Sync crash')).albumId }
    const state = stateIn('crash')
    const hash = 'ab'.repeat(32)
    const session = await library.client.openUploadSession({
      album_id: target.albumId,
      crypto_suite_id: 1,
      ciphertext_hash: hash,
      blobs: [{ role: 'original', hash, size: 10 }],
    })
    await state.uploadOpened(session.upload_id)
    expect((await library.client.storageUsage()).open_uploads).toBe(1)
    const events: BackupEvent[] = []
    await backupAll({ target, state, onEvent: (e) => events.push(e) }, [])
    expect(events[0]).toMatchObject({ type: 'start', abortedUploads: 1 })
    expect(await state.openUploads()).toEqual([])
    expect((await library.client.storageUsage()).open_uploads).toBe(0)
  })
})

describe('named albums', () => {
  it('names albums from their records; opening one twice makes one', async () => {
    const a = await openAlbum(library, ' Holidays 2024 ')
    const b = await openAlbum(library, 'Holidays 2024')
    expect(b.albumId).toBe(a.albumId)
    expect(await liveEntries(library.client, a.albumId)).toHaveLength(1)
    const named = await namedAlbums(library)
    expect(named.find((x) => x.albumId === a.albumId)?.name).toBe('Holidays 2024')
    expect(await findAlbum(library, 'Holidays 2024')).toMatchObject({ albumId: a.albumId })
    expect(await findAlbum(library, 'No such album')).toBeNull()
  })
})
