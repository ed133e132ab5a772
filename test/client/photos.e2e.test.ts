// `coffer-photos` as a person uses it, end to end, against a real server
// process, on a generated library of about 200 photos and videos (JPEG, PNG, WebP, GIF with
// EXIF; MP4/MOV) and one file over the in-memory bound (100 files and one of 72 MiB in `npm test`,
// 200 and 101 MiB in `npm run test:long`). A backup killed with SIGKILL half-way and run again
// stores every file exactly once; a restore into an empty folder gives every file back byte for
// byte with its mtime, and one stopped with Ctrl-C is continued by the next run; `verify --deep`
// passes; thumbnails decrypt to images of the expected size; a byte flipped in a blob on the
// server's disk makes verify and restore fail, naming the file. The killed backup and the Ctrl-C
// of a backup run the real binary; the other commands run in-process. PHOTOS_E2E_FILES and
// PHOTOS_E2E_BIG_MIB change the library's size.
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { albumFiles, findAlbum, liveEntries, type Library } from '../../src/client/albums.ts'
import { IN_MEMORY_FILE_MAX, type RestoredFile } from '../../src/client/files.ts'
import { CofferClient } from '../../src/sdk/client.ts'
import { PASSWORD, uniqueEmail } from '../support/actors.ts'
import { generateLibrary, type LibraryFile } from '../support/photos.ts'
import { accountLibrary, events, photos, spawnPhotos, startPhotos } from '../support/photos-cli.ts'
import { serveProcess, workspace, type Started, type Workspace } from '../support/process.ts'

const FILES = Number(process.env.PHOTOS_E2E_FILES ?? 99)
const BIG_MIB = Number(process.env.PHOTOS_E2E_BIG_MIB ?? 72)
const ALBUM = 'Family photos'

let ws: Workspace
let server: Started & { url: string }
let work: string
let home: string
let folder: string
let generated: LibraryFile[]
const email = uniqueEmail('photos')

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256')
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer)
  return hash.digest('hex')
}

/** The account as the tests read it: keys from the config folder, a fresh session. */
const library = (): Promise<Library> => accountLibrary(home, new CofferClient({ baseUrl: server.url }), email)

async function opened(name: string): Promise<RestoredFile> {
  const lib = await library()
  const album = await findAlbum(lib, ALBUM)
  for await (const file of albumFiles(lib, album!.albumId)) if (file.metadata.name === name) return file
  throw new Error(`${name} is not in the album`)
}

beforeAll(async () => {
  ws = await workspace('photos')
  server = await serveProcess(ws.env)
  work = await mkdtemp(path.join(tmpdir(), 'coffer-photos-e2e-'))
  home = path.join(work, 'home')
  folder = path.join(work, ALBUM)
  generated = await generateLibrary(folder, { count: FILES, seed: 2026, bigFileBytes: BIG_MIB * 1024 * 1024 + 12_345, subfolders: 4 })
}, 300_000)
afterAll(async () => {
  await server?.kill()
  await ws?.remove()
  await rm(work, { recursive: true, force: true })
})

describe('coffer-photos end to end', { timeout: 600_000 }, () => {
  it('registers, logs in and sets up the first device', async () => {
    const login = await photos(home, ['login', server.url, '--register', '--email', email, '--password-stdin'], { stdin: PASSWORD })
    expect(login.code, login.stderr).toBe(0)
    const setup = await photos(home, ['setup', '--yes', '--password-stdin', '--json'], { stdin: PASSWORD })
    expect(setup.code, setup.stderr).toBe(0)
  })

  it('backs up the folder; killed half-way and run again, it stores every file exactly once', async () => {
    const total = generated.length
    // One file too big to be read whole: it is streamed from the disk.
    expect(generated.some((f) => f.size > IN_MEMORY_FILE_MAX)).toBe(true)
    const first = spawnPhotos(home, ['backup', folder, '--album', ALBUM, '--json'])
    const half = Math.floor(total / 2)
    for (;;) {
      if (events({ stdout: first.stdout() }).filter((e) => e.event === 'file').length >= half) break
      if (first.child.exitCode !== null) throw new Error(`the first backup ended before half-way:\n${first.stdout()}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    first.child.kill('SIGKILL')
    const killed = await first.done
    expect(killed.signal).toBe('SIGKILL')
    const doneBefore = events(killed).filter((e) => e.event === 'file').length
    expect(doneBefore).toBeLessThan(total)

    const second = await photos(home, ['backup', folder, '--album', ALBUM, '--json'])
    expect(second.code, second.stderr).toBe(0)
    const summary = events(second).find((e) => e.event === 'summary')!
    expect(summary).toMatchObject({ files: total, failed: 0, stopped: false })
    expect((summary.stored as number) + (summary.present as number) + (summary.unchanged as number)).toBe(total)
    expect(summary.unchanged as number).toBeGreaterThanOrEqual(doneBefore) // a file's event is printed after it is recorded

    // On the server: the album's record and one asset per file, each created once.
    const lib = await library()
    const album = await findAlbum(lib, ALBUM)
    const live = await liveEntries(lib.client, album!.albumId)
    expect(live).toHaveLength(total + 1)
    const feed = (await lib.client.feed(album!.albumId, 0, 1000)).entries
    expect(feed.filter((e) => e.action === 'create')).toHaveLength(total + 1)
    // Sessions the kill left are aborted by the second run, but for one the server opened and the
    // device had not yet recorded (the reply in flight): that one waits for its expiry. At most
    // one per file in flight (--concurrency 4); docs/client-library.md says so.
    expect((await lib.client.storageUsage()).open_uploads).toBeLessThanOrEqual(4)

    // A third run reads nothing.
    const third = await photos(home, ['backup', folder, '--album', ALBUM, '--json'])
    expect(events(third).find((e) => e.event === 'summary')).toMatchObject({ unchanged: total, stored: 0, present: 0 })
  })

  it('lists the album and its files', async () => {
    const albums = await photos(home, ['albums', '--json'])
    expect(events(albums).filter((e) => e.event === 'album')).toEqual([expect.objectContaining({ name: ALBUM, files: generated.length })])
    const ls = await photos(home, ['ls', ALBUM, '--json'])
    const listed = events(ls).filter((e) => e.event === 'file')
    expect(listed.map((e) => e.name).sort()).toEqual(generated.map((f) => f.path).sort())
    const photo = listed.find((e) => e.type === 'image/jpeg' && e.captured !== null)
    expect(photo).toMatchObject({ width: expect.any(Number), height: expect.any(Number), derivatives: expect.arrayContaining(['thumbnail']) })
  })

  it('restores into an empty folder: every file byte-identical, with its mtime; again, nothing to do', async () => {
    const dest = path.join(work, 'restored')
    const run = await photos(home, ['restore', ALBUM, dest, '--json'])
    expect(run.code, run.stderr).toBe(0)
    expect(events(run).find((e) => e.event === 'summary')).toMatchObject({ restored: generated.length, failed: 0 })
    for (const file of generated) {
      const original = path.join(folder, file.path)
      const restored = path.join(dest, file.path)
      expect(await sha256Of(restored), file.path).toBe(await sha256Of(original))
      expect(Math.floor((await stat(restored)).mtimeMs)).toBe(Math.floor((await stat(original)).mtimeMs))
    }
    await writeFile(path.join(dest, '.IMG.jpg.0123456789ab.coffer-partial'), 'left by a crash')
    const again = await photos(home, ['restore', ALBUM, dest, '--json'])
    expect(again.code, again.stderr).toBe(0)
    expect(events(again).find((e) => e.event === 'summary')).toMatchObject({ unchanged: generated.length, restored: 0 })
    expect((await readdir(dest)).filter((name) => name.endsWith('.coffer-partial'))).toEqual([])
  })

  it('restore stops on Ctrl-C after the files in flight (exit 130); the next run does the rest', async () => {
    const dest = path.join(work, 'restored-interrupted')
    const run = startPhotos(home, ['restore', ALBUM, dest, '--concurrency', '1', '--json'])
    while (events({ stdout: run.stdout() }).filter((e) => e.event === 'file').length < 2) {
      if (run.ended()) throw new Error(`the restore ended early:\n${run.stdout()}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    run.interrupt()
    const stopped = await run.done
    expect(stopped.code, stopped.stderr).toBe(130)
    expect(events(stopped).find((e) => e.event === 'start')).toMatchObject({ files: generated.length, bytes: generated.reduce((sum, f) => sum + f.size, 0) })
    const summary = events(stopped).find((e) => e.event === 'summary')!
    expect(summary).toMatchObject({ stopped: true, failed: 0, files: generated.length })
    expect(summary.restored as number).toBeLessThan(generated.length)
    const again = await photos(home, ['restore', ALBUM, dest, '--json'])
    expect(again.code, again.stderr).toBe(0)
    expect(events(again).find((e) => e.event === 'summary')).toMatchObject({
      unchanged: summary.restored,
      restored: generated.length - (summary.restored as number),
      stopped: false,
    })
  })

  it('verify --deep passes', async () => {
    const run = await photos(home, ['verify', ALBUM, '--deep', '--json'])
    expect(run.code, run.stdout + run.stderr).toBe(0)
    const printed = events(run)
    expect(printed[0]).toMatchObject({ event: 'start', albums: 1, deep: true })
    const assets = printed.filter((e) => e.event === 'asset')
    expect(assets).toHaveLength(generated.length + 1)
    const total = (key: string) => assets.reduce((sum, e) => sum + (e[key] as number), 0)
    const summary = printed.find((e) => e.event === 'summary')!
    expect(summary).toMatchObject({
      assets: generated.length + 1,
      failed: 0,
      deep: true,
      blobs: total('blobs'),
      receipts: total('receipts'),
      deep_pending: total('deep_pending'),
    })
    expect(summary.blobs as number).toBeGreaterThan(2 * generated.length) // an original, metadata and a manifest at least
    expect(summary.receipts as number).toBeGreaterThanOrEqual(summary.blobs as number) // each blob has its receipt
  })

  it('keeps thumbnails that decrypt to images of the expected size', async () => {
    const jpeg = generated.find((f) => f.type === 'image/jpeg')!
    const file = await opened(jpeg.path)
    const thumbnail = await file.derivative('thumbnail')
    expect(thumbnail).not.toBeNull()
    const shown = await sharp(thumbnail!).metadata()
    expect(Math.max(shown.width!, shown.height!)).toBe(Math.min(512, Math.max(file.metadata.width!, file.metadata.height!)))
    const video = generated.find((f) => f.type.startsWith('video/'))
    if (video !== undefined) expect((await opened(video.path)).metadata.blobs.map((b) => b.kind)).toEqual(['original'])
  })

  it('fails verify and restore, naming the file, when a byte of its blob flips on the server', async () => {
    const victim = generated.find((f) => f.type === 'image/jpeg' && f.size > 100_000)!
    const file = await opened(victim.path)
    const blob = path.join(
      ws.directory,
      'blobs',
      file.envelope.ciphertext_hash.slice(0, 2),
      file.envelope.ciphertext_hash.slice(2, 4),
      file.envelope.ciphertext_hash,
    )
    const bytes = await readFile(blob)
    bytes[Math.floor(bytes.length / 2)] = bytes[Math.floor(bytes.length / 2)]! ^ 0x01
    await writeFile(blob, bytes)

    const verify = await photos(home, ['verify', ALBUM, '--deep'])
    expect(verify.code).toBe(1)
    expect(verify.stdout).toContain(`NOT VERIFIED  ${ALBUM}/${victim.path}`)
    expect(verify.stdout).toMatch(/1 NOT verified/)

    const dest = path.join(work, 'tampered')
    const restore = await photos(home, ['restore', ALBUM, dest])
    expect(restore.code).toBe(1)
    expect(restore.stderr).toContain(`restore of "${victim.path}"`)
    expect(restore.stdout).toMatch(new RegExp(`${generated.length - 1} restored, 0 already there, 1 failed`))
    await expect(stat(path.join(dest, victim.path))).rejects.toMatchObject({ code: 'ENOENT' })
    const left = await readdir(path.dirname(path.join(dest, victim.path)))
    expect(left.filter((name) => name.endsWith('.coffer-partial'))).toEqual([])
  })

  it('stops on Ctrl-C after the files in flight (exit 130); the next run does the rest', async () => {
    const small = path.join(work, 'small')
    const files = await generateLibrary(small, { count: 12, seed: 7 })
    // The binary itself: SIGINT, as a terminal's Ctrl-C sends it.
    const run = spawnPhotos(home, ['backup', small, '--album', 'Interrupted', '--concurrency', '1', '--json'])
    while (events({ stdout: run.stdout() }).filter((e) => e.event === 'file').length < 2) {
      if (run.child.exitCode !== null) throw new Error(`the backup ended early:\n${run.stdout()}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    run.child.kill('SIGINT')
    const stopped = await run.done
    expect(stopped.code, stopped.stderr).toBe(130)
    const summary = events(stopped).find((e) => e.event === 'summary')!
    expect(summary).toMatchObject({ stopped: true, failed: 0 })
    expect(summary.files as number).toBeLessThan(files.length)
    expect(stopped.stderr).toMatch(/run the same command again to continue/)
    const again = await photos(home, ['backup', small, '--album', 'Interrupted', '--json'])
    expect(again.code, again.stderr).toBe(0)
    expect(events(again).find((e) => e.event === 'summary')).toMatchObject({
      unchanged: summary.files,
      stored: files.length - (summary.files as number),
      stopped: false,
    })
  })
})
