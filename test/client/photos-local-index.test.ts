// `coffer-photos backup` reading each file once, its local index and private dedup, against a real
// server process (docs/photos.md, "What a backup reads"); the backups run as the real binary, whose
// own I/O counter they report:
// - a backup of new photos reads at most 1.1 times their size (the process's own I/O counter,
//   reported in the summary): the hash, both encryption passes and the derivatives come from
//   one read;
// - a second run over the unchanged folder reads no file content (path, size, mtime and inode
//   decide); a moved file is stored under its new name, its original not sent again; a touched
//   one sends nothing; a changed one is stored as a new version of its asset;
// - the same photos in another folder, backed up into another album, are stored once: only
//   their derivatives and metadata are sent, and their metadata carry the same keyed hash;
// - `--watch` backs up what appears in the folder, and a changed file as a new version.
// PHOTOS_INDEX_FILES sets the library's size (docs/benchmarks.md reports 10,000).
import { createHash } from 'node:crypto'
import { cp, mkdtemp, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { albumFiles, findAlbum, liveEntries, type Library } from '../../src/client/albums.ts'
import type { RestoredFile } from '../../src/client/files.ts'
import { contentMacOf } from '../../src/client/format/content.ts'
import { toHex } from '../../src/sdk/bytes.ts'
import { CofferClient } from '../../src/sdk/client.ts'
import { PASSWORD, uniqueEmail } from '../support/actors.ts'
import { generateLibrary, writePhoto, type LibraryFile } from '../support/photos.ts'
import { accountLibrary, events, photos, spawnPhotos, startPhotos, waitForEvent } from '../support/photos-cli.ts'
import { serveProcess, workspace, type Started, type Workspace } from '../support/process.ts'

const FILES = Number(process.env.PHOTOS_INDEX_FILES ?? 24)
const ALBUM = 'Indexed'

let ws: Workspace
let server: Started & { url: string }
let work: string
let home: string
let folder: string
let generated: LibraryFile[]
let bytes: number
/** What a run over the unchanged folder read (the feed, the index). */
let unchangedRead: number
const email = uniqueEmail('index')

const library = (): Promise<Library> => accountLibrary(home, new CofferClient({ baseUrl: server.url }), email)

async function backup(source: string, album: string): Promise<Record<string, unknown>> {
  const run = await spawnPhotos(home, ['backup', source, '--album', album, '--json']).done
  expect(run.code, run.stderr).toBe(0)
  return events(run).find((e) => e.event === 'summary')!
}

/** Every file of an album by name: its metadata and envelope. */
async function filesOf(lib: Library, name: string): Promise<Map<string, RestoredFile>> {
  const album = await findAlbum(lib, name)
  const found = new Map<string, RestoredFile>()
  for await (const file of albumFiles(lib, album!.albumId)) found.set(file.metadata.name, file)
  return found
}

beforeAll(
  async () => {
    ws = await workspace('index')
    server = await serveProcess(ws.env)
    work = await mkdtemp(path.join(tmpdir(), 'coffer-index-'))
    home = path.join(work, 'home')
    folder = path.join(work, ALBUM)
    generated = await generateLibrary(folder, { count: FILES, seed: 1107, subfolders: 2 })
    bytes = generated.reduce((sum, file) => sum + file.size, 0)
    const login = await photos(home, ['login', server.url, '--register', '--email', email, '--password-stdin'], { stdin: PASSWORD })
    expect(login.code, login.stderr).toBe(0)
    const setup = await photos(home, ['setup', '--yes', '--password-stdin', '--json'], { stdin: PASSWORD })
    expect(setup.code, setup.stderr).toBe(0)
  },
  300_000 + FILES * 100,
)
afterAll(async () => {
  await server?.kill()
  await ws?.remove()
  await rm(work, { recursive: true, force: true })
})

describe('coffer-photos backup: one pass, the local index, private dedup', { timeout: 600_000 + FILES * 300 }, () => {
  it("reads each new file once: the bytes it read are at most 1.1 times the files' size", async () => {
    const summary = await backup(folder, ALBUM)
    expect(summary).toMatchObject({ files: FILES, stored: FILES, failed: 0, bytes })
    const read = summary.read_bytes as number
    expect(read).toBeGreaterThanOrEqual(bytes) // it did read them
    expect(read).toBeLessThanOrEqual(1.1 * bytes)
  })

  it('a second run over the unchanged folder reads no file content: path, size, mtime and inode decide', async () => {
    // A photo rewritten in place with the same size and mtime: only a read could tell.
    const probe = path.join(folder, generated[0]!.path)
    // utimes takes seconds as a double: the middle of the millisecond keeps the whole ms the walk reads.
    const mtime = (Number((await stat(probe, { bigint: true })).mtimeMs) + 0.5) / 1000
    const original = await readFile(probe)
    await writeFile(probe, Buffer.alloc(original.length, 0x55), { flag: 'r+' })
    await utimes(probe, new Date(), mtime)
    const summary = await backup(folder, ALBUM)
    await writeFile(probe, original, { flag: 'r+' })
    await utimes(probe, new Date(), mtime)
    expect(summary).toMatchObject({ files: FILES, unchanged: FILES, stored: 0, replaced: 0, sent_bytes: 0 })
    // What it read is the album's feed (about 6.5 KB an entry) and the index, not the photos.
    unchangedRead = summary.read_bytes as number
    expect(unchangedRead).toBeLessThan(bytes * 0.05)
  })

  it('a moved file is stored under its new name without its original, a touched one sends nothing, a changed one is a new version of its asset', async () => {
    const lib = await library()
    const before = await filesOf(lib, ALBUM)
    const [moved, touched, changed] = generated.filter((file) => file.type === 'image/jpeg')
    await rename(path.join(folder, moved!.path), path.join(folder, `renamed-${path.basename(moved!.path)}`))
    await utimes(path.join(folder, touched!.path), new Date(), new Date(Date.now() - 3_600_000))
    const changedSize = await writePhoto(path.join(folder, changed!.path), { format: 'jpeg', width: 800, height: 600, seed: 99 })

    const summary = await backup(folder, ALBUM)
    // The moved file is an asset of its own under its new name (restore brings it back there), its original the one stored.
    expect(summary).toMatchObject({ files: FILES, unchanged: FILES - 2, replaced: 1, stored: 1, deduplicated: 1, present: 0, failed: 0 })
    // Beyond what an unchanged run reads: the moved, the touched and the changed file, once each.
    expect((summary.read_bytes as number) - unchangedRead).toBeLessThan(1.1 * (moved!.size + touched!.size + changedSize))

    const album = await findAlbum(lib, ALBUM)
    const feed = (await lib.client.feed(album!.albumId, 0, 1000)).entries
    const replaced = feed.filter((entry) => entry.action === 'replace')
    expect(replaced.map((entry) => entry.asset_id)).toEqual([before.get(changed!.path)!.assetId])
    expect(await liveEntries(lib.client, album!.albumId)).toHaveLength(FILES + 2) // the moved file's
    const after = await filesOf(lib, ALBUM)
    expect(after.get(changed!.path)!.metadata.size).toBe(changedSize)
    expect(after.get(touched!.path)!.envelope.ciphertext_hash).toBe(before.get(touched!.path)!.envelope.ciphertext_hash)

    // And the next run finds everything unchanged again.
    expect(await backup(folder, ALBUM)).toMatchObject({ unchanged: FILES, replaced: 0, stored: 0 })
  })

  it('the same photos in another folder and album are stored once: only derivatives and metadata are sent', async () => {
    const copies = path.join(work, 'Copies')
    await cp(folder, copies, { recursive: true, preserveTimestamps: true })
    // Not one of the three the test above moved or changed.
    const one = generated
      .filter((file) => file.type === 'image/jpeg')
      .slice(3)
      .find((file) => !file.path.includes('/'))!
    await cp(path.join(folder, one.path), path.join(copies, `same-as-${one.path}`)) // the same photo twice in one album
    const lib = await library()
    const usedBefore = (await lib.client.storageUsage()).stored_bytes

    const summary = await backup(copies, 'Copies')
    expect(summary).toMatchObject({ files: FILES + 1, stored: FILES + 1, present: 0, deduplicated: FILES + 1, failed: 0 })
    const copiedBytes = (summary.bytes as number) - one.size
    expect(summary.sent_bytes as number).toBeLessThan(copiedBytes / 2) // the originals are not sent
    expect((await lib.client.storageUsage()).stored_bytes - usedBefore).toBeLessThan(copiedBytes / 2)

    // Both albums name the same encrypted original and the same keyed hash of the content.
    const [first, second] = [await filesOf(lib, ALBUM), await filesOf(lib, 'Copies')]
    const plain = await readFile(path.join(copies, one.path))
    const mac = toHex(await contentMacOf(lib.masterKey, createHash('sha256').update(plain).digest()))
    for (const album of [first, second]) {
      const file = album.get(one.path)!
      expect(toHex(file.metadata.contentMac!)).toBe(mac)
      expect(file.envelope.ciphertext_hash).toBe(second.get(one.path)!.envelope.ciphertext_hash)
    }
    expect((await stat(path.join(copies, one.path))).size).toBe(one.size)

    // The duplicate changes: it is a photo of its own (its name's), a new version of it; the other
    // name keeps its version.
    const duplicate = path.join(copies, `same-as-${one.path}`)
    await writePhoto(duplicate, { format: 'jpeg', width: 640, height: 480, seed: 77 })
    await utimes(duplicate, new Date(), new Date(Date.now() + 60_000))
    expect(await backup(copies, 'Copies')).toMatchObject({ stored: 0, replaced: 1, unchanged: FILES, failed: 0 })
    const after = await filesOf(lib, 'Copies')
    expect(after.get(one.path)!.envelope.ciphertext_hash).toBe(second.get(one.path)!.envelope.ciphertext_hash)
    expect(after.get(`same-as-${one.path}`)!.metadata.size).toBe((await stat(duplicate)).size)
  })

  it('--watch backs up new and changed photos as they appear, and a folder moved in; Ctrl-C ends it', async () => {
    const watched = path.join(work, 'Watched')
    await writePhoto(path.join(watched, 'first.jpg'), { format: 'jpeg', width: 640, height: 480, seed: 501 })
    const run = startPhotos(home, ['backup', watched, '--watch', '--json'])
    await waitForEvent(run, 'watching')
    const fileEvent = async (name: string) => {
      const until = Date.now() + 60_000
      for (;;) {
        const found = events({ stdout: run.stdout().slice(0, run.stdout().lastIndexOf('\n') + 1) }).filter((e) => e.event === 'file' && e.path === name)
        if (found.length > 0) return found.at(-1)!
        if (run.ended() || Date.now() > until) throw new Error(`no file event for ${name}:\n${run.stdout()}\n${run.stderr()}`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }
    expect(await fileEvent('first.jpg')).toMatchObject({ outcome: 'stored' })

    await writePhoto(path.join(watched, 'arrived.jpg'), { format: 'jpeg', width: 640, height: 480, seed: 502 })
    expect(await fileEvent('arrived.jpg')).toMatchObject({ outcome: 'stored' })
    await writePhoto(path.join(watched, 'first.jpg'), { format: 'jpeg', width: 640, height: 480, seed: 503 })
    await utimes(path.join(watched, 'first.jpg'), new Date(), new Date(Date.now() + 60_000)) // a later mtime, whatever the clock's grain
    const replaced = events({ stdout: run.stdout() }).filter((e) => e.event === 'summary').length
    for (;;) {
      const summaries = events({ stdout: run.stdout().slice(0, run.stdout().lastIndexOf('\n') + 1) }).filter((e) => e.event === 'summary')
      if (summaries.length > replaced && summaries.at(-1)!.replaced === 1) break
      if (run.ended()) throw new Error(run.stderr())
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const trip = path.join(work, 'trip-outside')
    await writePhoto(path.join(trip, 'a.jpg'), { format: 'jpeg', width: 320, height: 240, seed: 504 })
    await writePhoto(path.join(trip, 'b.jpg'), { format: 'jpeg', width: 320, height: 240, seed: 505 })
    await rename(trip, path.join(watched, 'trip'))
    expect(await fileEvent('trip/a.jpg')).toMatchObject({ outcome: 'stored' })
    expect(await fileEvent('trip/b.jpg')).toMatchObject({ outcome: 'stored' })

    run.interrupt()
    const ended = await run.done
    expect(ended.code, ended.stderr).toBe(130) // interrupted, as any command stopped with Ctrl-C
    expect(ended.stderr).not.toContain('run the same command again') // no pass was cut short
    const lib = await library()
    const names = [...(await filesOf(lib, 'Watched')).keys()].sort()
    expect(names).toEqual(['arrived.jpg', 'first.jpg', 'trip/a.jpg', 'trip/b.jpg'])
    expect((await filesOf(lib, 'Watched')).get('first.jpg')!.metadata.size).toBe((await stat(path.join(watched, 'first.jpg'))).size)
  })
})
