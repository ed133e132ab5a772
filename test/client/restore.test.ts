// Restoring an album (src/client/restore.ts on albums.ts planAlbum and openPlanned) against a real
// server: the plan opens no file, and then at most a window of files is opened and not yet
// written at any time, however large the album; names of duplicates follow the feed whatever
// the concurrency; files the album gains after the plan wait for the next run; a file that
// cannot be opened fails alone; the metadata blobs come in batches; stopping and running again,
// and a session that ends.
import { randomBytes } from 'node:crypto'
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { liveEntries, METADATA_BATCH, openAlbum, planAlbum, type Library } from '../../src/client/albums.ts'
import { backupFile } from '../../src/client/upload.ts'
import { restoreInto } from '../../src/client/node/files.ts'
import { restoreAll, uniqueName, type RestoreEvent, type RestoreWriter } from '../../src/client/restore.ts'
import { CofferProblem } from '../../src/sdk/client.ts'
import { hybridVerify } from '../../src/sdk/hybrid.ts'
import { photoLibrary } from '../support/albums.ts'
import { writeRows } from '../support/database.ts'
import { startServer, type TestServer } from '../support/server.ts'
import { folderOf } from '../support/blobs.ts'

let server: TestServer
let work: string
let library: Library

beforeAll(async () => {
  server = await startServer()
  work = await mkdtemp(path.join(tmpdir(), 'coffer-restore-'))
  library = await photoLibrary(server, 'restore')
})
afterAll(async () => {
  await server.close()
  await rm(work, { recursive: true, force: true })
})

interface Stored {
  readonly name: string
  readonly bytes: Uint8Array
  readonly assetId: string
}

/**
 * Backs up files of random bytes under `names` into the album `albumName`, `atOnce` at a time
 * (1: in that order, so in feed order).
 */
async function albumOf(lib: Library, albumName: string, names: readonly string[], atOnce = 1): Promise<{ albumId: string; stored: Stored[] }> {
  const album = await openAlbum(lib, albumName)
  const stored: Stored[] = []
  for (let from = 0; from < names.length; from += atOnce) {
    stored.push(
      ...(await Promise.all(
        names.slice(from, from + atOnce).map(async (name, j) => {
          const i = from + j
          const bytes = randomBytes(500 + ((i * 7919) % 3000))
          const result = await backupFile(
            { ...lib, albumId: album.albumId, protocolVersion: album.protocolVersion },
            { name, size: bytes.length, type: 'image/jpeg', modified: 1_700_000_000_000 + i * 1000, open: () => [bytes] },
          )
          return { name, bytes, assetId: result.assetId }
        }),
      )),
    )
  }
  return { albumId: album.albumId, stored }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A writer that reads every byte (so the file is checked whole), takes a little time, and keeps what it got. */
function memoryWriter(kept: Map<string, Uint8Array> = new Map()): RestoreWriter & { kept: Map<string, Uint8Array> } {
  const write: RestoreWriter = async (file, name) => {
    const chunks: Uint8Array[] = []
    for await (const chunk of file.bytes) chunks.push(chunk)
    await pause(3)
    kept.set(name, Buffer.concat(chunks))
    return 'restored'
  }
  return Object.assign(write, { kept })
}

describe('restoreAll', () => {
  it('plans without opening a file, then keeps at most ahead + concurrency files opened and not yet written', async () => {
    const N = 40
    const { albumId, stored } = await albumOf(
      library,
      'Window',
      Array.from({ length: N }, (_, i) => `IMG_${String(i).padStart(4, '0')}.jpg`),
      4,
    )
    // Opening a file starts with its manifest's signature check: count them through the verify port.
    let opened = 0
    let written = 0
    let most = 0
    const counting: Library = {
      ...library,
      verify: (publicKey, message, signature) => {
        opened++
        most = Math.max(most, opened - written)
        return hybridVerify(publicKey, message, signature)
      },
    }
    const plan = await planAlbum(counting, albumId)
    expect(plan).toMatchObject({ albumId, files: N, bytes: stored.reduce((sum, f) => sum + f.bytes.length, 0) })
    expect(opened).toBe(0) // the start event can go out now: nothing opened yet

    for (const [concurrency, ahead] of [
      [2, 3],
      [4, undefined],
      [1, 1],
      [3, 0],
    ] as const) {
      opened = written = most = 0
      const writer = memoryWriter()
      const summary = await restoreAll({
        library: counting,
        plan,
        concurrency,
        ...(ahead === undefined ? {} : { ahead }),
        write: writer,
        onEvent: () => written++,
      })
      expect(summary, `concurrency ${concurrency}`).toMatchObject({ files: N, restored: N, unchanged: 0, failed: 0, stopped: false })
      expect(opened).toBe(N) // each file opened once
      const window = (ahead ?? concurrency + 4) + concurrency
      expect(most, `concurrency ${concurrency}, ahead ${ahead}`).toBeLessThanOrEqual(window)
      if (ahead !== 0) expect(most).toBeGreaterThan(concurrency) // the window is used: files are opened ahead of the writers
      for (const file of stored) expect(Buffer.from(writer.kept.get(file.name)!).equals(file.bytes), file.name).toBe(true)
    }
  })

  it('names duplicates in feed order whatever the concurrency', async () => {
    const names = ['IMG.jpg', 'clip', 'IMG.jpg', 'trip/IMG.jpg', 'IMG.jpg', 'clip', 'a.b.c.jpg', 'a.b.c.jpg']
    const { albumId, stored } = await albumOf(library, 'Duplicates', names)
    const taken = new Set<string>()
    const expected = Object.fromEntries(stored.map((file) => [file.assetId, uniqueName(file.name, file.assetId, taken)]))
    expect(Object.values(expected).filter((name) => name.includes(' ('))).toHaveLength(4)
    expect(expected[stored[2]!.assetId]).toBe(`IMG (${stored[2]!.assetId.slice(0, 8)}).jpg`)
    expect(expected[stored[5]!.assetId]).toBe(`clip (${stored[5]!.assetId.slice(0, 8)})`)
    expect(expected[stored[7]!.assetId]).toBe(`a.b.c (${stored[7]!.assetId.slice(0, 8)}).jpg`)
    const plan = await planAlbum(library, albumId)
    for (const concurrency of [1, 3, 8]) {
      const events: RestoreEvent[] = []
      await restoreAll({ library, plan, concurrency, write: memoryWriter(), onEvent: (event) => events.push(event) })
      expect(Object.fromEntries(events.map((e) => [e.assetId, e.name])), `concurrency ${concurrency}`).toEqual(expected)
    }
  })

  it('leaves the files the album gained after the plan for the next run', async () => {
    const { albumId } = await albumOf(library, 'Growing', ['one.jpg', 'two.jpg'])
    const plan = await planAlbum(library, albumId)
    const later = await albumOf(library, 'Growing', ['three.jpg'])
    const first = memoryWriter()
    expect(await restoreAll({ library, plan, write: first })).toMatchObject({ files: 2, restored: 2 })
    expect([...first.kept.keys()].sort()).toEqual(['one.jpg', 'two.jpg'])
    const next = await planAlbum(library, albumId)
    expect(next.files).toBe(3)
    expect(next.through).toBeGreaterThan(plan.through)
    const second = memoryWriter()
    await restoreAll({ library, plan: next, write: second })
    expect(Buffer.from(second.kept.get('three.jpg')!).equals(later.stored[0]!.bytes)).toBe(true)
  })

  it('asks for the metadata blobs METADATA_BATCH at a time, none alone; one the batch does not bring is downloaded alone', async () => {
    const N = METADATA_BATCH + 8
    const { albumId, stored } = await albumOf(
      library,
      'Batched',
      Array.from({ length: N }, (_, i) => `B_${String(i).padStart(3, '0')}.jpg`),
      8,
    )
    const asked = { batches: 0, inBatches: 0, alone: 0 }
    let leaveOut: string | null = null
    const client = library.client
    // The client as restore uses it, counting its metadata reads; `leaveOut` plays a batch answer without that blob.
    const counting: Library = {
      ...library,
      client: new Proxy(client, {
        get(target, property) {
          if (property === 'downloadBlobs')
            return async (hashes: Iterable<string>) => {
              const all = [...hashes]
              asked.batches++
              asked.inBatches += all.length
              const answer = await target.downloadBlobs(all)
              if (leaveOut !== null) answer.blobs.delete(leaveOut)
              return answer
            }
          if (property === 'downloadBlob')
            return (hash: string) => {
              asked.alone++
              return target.downloadBlob(hash)
            }
          const value: unknown = Reflect.get(target, property, target)
          return typeof value === 'function' ? value.bind(target) : value
        },
      }),
    }
    const writer = memoryWriter()
    expect(await restoreAll({ library: counting, plan: await planAlbum(counting, albumId), write: writer })).toMatchObject({ restored: N, failed: 0 })
    expect(asked).toEqual({ batches: Math.ceil(N / METADATA_BATCH), inBatches: N, alone: 0 })
    for (const file of stored) expect(Buffer.from(writer.kept.get(file.name)!).equals(file.bytes), file.name).toBe(true)

    const entries = await liveEntries(client, albumId)
    leaveOut = entries.find((e) => e.asset_id === stored[5]!.assetId)!.metadata_blob_hash!
    Object.assign(asked, { batches: 0, inBatches: 0, alone: 0 })
    const again = memoryWriter()
    expect(await restoreAll({ library: counting, plan: await planAlbum(counting, albumId), write: again })).toMatchObject({ restored: N, failed: 0 })
    expect(asked.alone).toBe(1)
    expect(Buffer.from(again.kept.get(stored[5]!.name)!).equals(stored[5]!.bytes)).toBe(true)
  })

  it('into a folder: a file that cannot be opened fails alone, named by its asset id; run again, the rest is unchanged; a different file is kept unless overwrite', async () => {
    const { albumId, stored } = await albumOf(library, 'Damaged', ['a.jpg', 'b.jpg', 'c.jpg', 'd.jpg'])
    const victim = stored[1]!
    const entry = (await liveEntries(library.client, albumId)).find((e) => e.asset_id === victim.assetId)!
    const blob = folderOf(server).pathOf(entry.metadata_blob_hash!)
    const bytes = await readFile(blob)
    bytes[bytes.length - 1]! ^= 1
    await writeFile(blob, bytes)

    const dest = await mkdtemp(path.join(work, 'dest-'))
    const events: RestoreEvent[] = []
    const plan = await planAlbum(library, albumId)
    const first = await restoreAll({ library, plan, write: restoreInto(dest), onEvent: (event) => events.push(event) })
    expect(first).toMatchObject({ files: 4, restored: 3, failed: 1, stopped: false })
    expect(first.failures).toEqual([{ name: null, assetId: victim.assetId, error: expect.stringContaining(`restore of asset ${victim.assetId} failed`) }])
    expect(events.find((e) => e.outcome === 'failed')).toMatchObject({ name: null, assetId: victim.assetId, size: victim.bytes.length })
    expect((await readdir(dest)).sort()).toEqual(['a.jpg', 'c.jpg', 'd.jpg'])
    for (const file of [stored[0]!, stored[2]!, stored[3]!]) {
      expect((await readFile(path.join(dest, file.name))).equals(file.bytes)).toBe(true)
      expect(Math.floor((await stat(path.join(dest, file.name))).mtimeMs)).toBe(1_700_000_000_000 + stored.indexOf(file) * 1000)
    }

    await writeFile(path.join(dest, 'c.jpg'), 'someone else’s file')
    const kept: RestoreEvent[] = []
    const again = await restoreAll({ library, plan: await planAlbum(library, albumId), write: restoreInto(dest), onEvent: (event) => kept.push(event) })
    expect(again).toMatchObject({ restored: 0, unchanged: 2, kept: 1, failed: 1 })
    expect(again.failures.map((f) => f.name)).toEqual([null])
    expect(kept.filter((e) => e.outcome === 'kept').map((e) => e.name)).toEqual(['c.jpg'])
    expect(await readFile(path.join(dest, 'c.jpg'), 'utf8')).toBe('someone else’s file')
    const overwritten = await restoreAll({ library, plan: await planAlbum(library, albumId), write: restoreInto(dest, { overwrite: true }) })
    expect(overwritten).toMatchObject({ restored: 1, unchanged: 2, failed: 1 })
    expect((await readFile(path.join(dest, 'c.jpg'))).equals(stored[2]!.bytes)).toBe(true)
  })

  it('stops taking files when told; the next run does the rest', async () => {
    const { albumId } = await albumOf(library, 'Stopped', ['1.jpg', '2.jpg', '3.jpg', '4.jpg', '5.jpg'])
    const dest = await mkdtemp(path.join(work, 'dest-'))
    const stop = new AbortController()
    const first = await restoreAll({
      library,
      plan: await planAlbum(library, albumId),
      concurrency: 1,
      write: restoreInto(dest),
      signal: stop.signal,
      onEvent: () => stop.abort(),
    })
    expect(first).toMatchObject({ restored: 1, stopped: true })
    expect(await restoreAll({ library, plan: await planAlbum(library, albumId), write: restoreInto(dest) })).toMatchObject({
      restored: 4,
      unchanged: 1,
      stopped: false,
    })
    // Told to stop after the last file: nothing was left, so not stopped.
    const last = new AbortController()
    expect(
      await restoreAll({
        library,
        plan: await planAlbum(library, albumId),
        write: restoreInto(dest),
        signal: last.signal,
        onEvent: (e) => e.name === '5.jpg' && last.abort(),
      }),
    ).toMatchObject({ unchanged: 5, stopped: false })
  })

  it('stops and throws when the session ends (on the server), after the files in flight', async () => {
    const own = await photoLibrary(server, 'restore-ended')
    const { albumId } = await albumOf(own, 'Ended', ['1.jpg', '2.jpg', '3.jpg', '4.jpg', '5.jpg', '6.jpg'])
    const plan = await planAlbum(own, albumId)
    const writer = memoryWriter()
    let ended = false
    const write: RestoreWriter = async (file, name) => {
      if (!ended) {
        ended = true
        await writeRows(server.database, 'delete from sessions where user_id = ?', [own.userId]) // revoked from elsewhere
      }
      return writer(file, name)
    }
    const error = await restoreAll({ library: own, plan, concurrency: 1, ahead: 1, write }).then(
      () => null,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(CofferProblem) // what coffer-photos turns into "log in again" (exit 3), not a file's failure
    expect(error).toMatchObject({ status: 401 })
    expect(writer.kept.size).toBeLessThan(6)
  })
})
