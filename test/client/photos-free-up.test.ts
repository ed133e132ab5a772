// `coffer-photos free-up` (docs/photos.md "Freeing space"), in-process against a real
// server. A backed-up folder: the dry run lists every file as freeable and deletes nothing;
// --yes deletes them, logs each in freed.log (0600), and a restore gives them back byte for byte.
// Kept, with the reason, while the rest is freed: a file whose blob was damaged on the server
// (a byte flipped on its disk), a file changed after the backup (its size; or its bytes with
// size and mtime put back), a file never backed up. A server whose deep-scan budget is spent
// keeps every file as "not checked yet", unless `verify --deep` checked them here; and the rest of
// a folder goes on a complete sample, not when a sampled file is lost on the server.
import { mkdtemp, readFile, rm, stat, unlink, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { albumFiles, findAlbum, type Library } from '../../src/client/albums.ts'
import { planFreeUp, sampleOf } from '../../src/client/node/free-up.ts'
import { openSyncState } from '../../src/client/node/state.ts'
import { verifyAssets } from '../../src/client/verify.ts'
import { PASSWORD, uniqueEmail } from '../support/actors.ts'
import { generateLibrary, writePhoto, type LibraryFile } from '../support/photos.ts'
import { accountLibrary, events, expectOk, photos, type PhotosRun } from '../support/photos-cli.ts'
import { startServer, type TestServer } from '../support/server.ts'
import { fileExists, fileSha256 } from '../support/files.ts'

let server: TestServer
let work: string

beforeAll(async () => {
  server = await startServer()
  work = await mkdtemp(path.join(tmpdir(), 'coffer-photos-free-up-'))
}, 60_000)
afterAll(async () => {
  await server?.close()
  await rm(work, { recursive: true, force: true })
})

let homes = 0
/** A registered and set-up config folder on `on`. */
async function setUpHome(on: TestServer): Promise<{ home: string; email: string }> {
  const home = path.join(work, `home-${++homes}`)
  const email = uniqueEmail('free-up')
  expectOk(await photos(home, ['login', on.url, '--register', '--email', email, '--password-stdin'], { stdin: `${PASSWORD}\n` }))
  expectOk(await photos(home, ['setup', '--yes', '--json']))
  return { home, email }
}

/** The account as the test reads it: keys from the config folder, a session of its own. */
const libraryOf = (on: TestServer, home: string, email: string): Promise<Library> => accountLibrary(home, on.client(), email)

async function hashes(folder: string, files: readonly LibraryFile[]): Promise<Map<string, string>> {
  return new Map(await Promise.all(files.map(async (f) => [f.path, await fileSha256(path.join(folder, f.path))] as const)))
}

const fileEvents = (run: PhotosRun): Record<string, unknown>[] => events(run).filter((e) => e.event === 'file')
const summaryOf = (run: PhotosRun): Record<string, unknown> => events(run).find((e) => e.event === 'summary')!
const reasons = (run: PhotosRun): Record<string, unknown> => Object.fromEntries(fileEvents(run).map((e) => [e.path, e.reason]))

describe('coffer-photos free-up', { timeout: 300_000 }, () => {
  it('--help prints its usage', async () => {
    const run = await photos(path.join(work, 'no-home'), ['free-up', '--help'])
    expectOk(run)
    expect(run.stdout).toMatch(/^usage: coffer-photos free-up <folder>/)
  })

  it('a backed-up folder: the dry run deletes nothing; --yes frees every file, logs it, and restore gets them back', async () => {
    const { home } = await setUpHome(server)
    const folder = path.join(work, 'Holiday')
    const files = await generateLibrary(folder, { count: 8, seed: 13, subfolders: 2 })
    const before = await hashes(folder, files)
    expectOk(await photos(home, ['backup', folder, '--json']))

    const dry = await photos(home, ['free-up', folder, '--json'])
    expectOk(dry)
    expect(
      fileEvents(dry)
        .map((e) => e.path)
        .sort(),
    ).toEqual(files.map((f) => f.path).sort())
    expect(fileEvents(dry).every((e) => e.freeable === true && e.reason === null)).toBe(true)
    const bytes = files.reduce((sum, f) => sum + f.size, 0)
    expect(summaryOf(dry)).toMatchObject({ dry_run: true, freeable: files.length, freeable_bytes: bytes, freed: 0, kept: 0 })
    for (const f of files) expect(await fileExists(path.join(folder, f.path))).toBe(true)
    const human = await photos(home, ['free-up', folder])
    expectOk(human)
    expect(human.stdout).toContain(`dry run: ${files.length} files`)
    const downloaded = await photos(home, ['free-up', folder, '--download', '--json']) // every blob also downloaded and decrypted here
    expectOk(downloaded)
    expect(summaryOf(downloaded)).toMatchObject({ dry_run: true, freeable: files.length, kept: 0 })
    expect(await fileExists(path.join(home, 'freed.log'))).toBe(false)

    const act = await photos(home, ['free-up', folder, '--yes', '--json'])
    expectOk(act)
    expect(summaryOf(act)).toMatchObject({ dry_run: false, freed: files.length, freed_bytes: bytes, kept: 0 })
    for (const f of files) expect(await fileExists(path.join(folder, f.path)), f.path).toBe(false)
    expect(await fileExists(folder)).toBe(true) // the folders stay

    const log = path.join(home, 'freed.log')
    expect((await stat(log)).mode & 0o777).toBe(0o600)
    const lines = (await readFile(log, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(lines.map((l) => l.path).sort()).toEqual(files.map((f) => f.path).sort())
    for (const line of lines) {
      expect(line).toMatchObject({
        album: 'Holiday',
        content_hash: before.get(line.path as string),
        size: files.find((f) => f.path === line.path)!.size,
        asset_id: expect.any(String),
      })
      expect(Number.isNaN(Date.parse(line.time as string))).toBe(false)
    }

    const again = await photos(home, ['free-up', folder, '--json'])
    expectOk(again)
    expect(summaryOf(again)).toMatchObject({ files: 0, freeable: 0 })

    const dest = path.join(work, 'Holiday-restored')
    expectOk(await photos(home, ['restore', 'Holiday', dest]))
    for (const f of files) expect(await fileSha256(path.join(dest, f.path)), f.path).toBe(before.get(f.path))
  })

  it('keeps a file whose blob is damaged on the server, files changed after the backup and a file never backed up; frees the rest', async () => {
    const { home, email } = await setUpHome(server)
    const folder = path.join(work, 'Mixed')
    const files = await generateLibrary(folder, { count: 7, seed: 29 })
    expectOk(await photos(home, ['backup', folder, '--album', 'Mixed album', '--json']))
    const [damaged, grown, rewritten, ...rest] = files.filter((f) => f.type.startsWith('image/'))
    expect(rest.length).toBeGreaterThan(0)

    // A byte flipped in the damaged file's original, on the server's disk.
    const lib = await libraryOf(server, home, email)
    const album = await findAlbum(lib, 'Mixed album')
    let hash: string | null = null
    for await (const file of albumFiles(lib, album!.albumId)) if (file.metadata.name === damaged!.path) hash = file.envelope.ciphertext_hash
    const blob = path.join(server.deps.config.blobDir, hash!.slice(0, 2), hash!.slice(2, 4), hash!)
    const bytes = await readFile(blob)
    bytes[Math.floor(bytes.length / 2)]! ^= 0x01
    await writeFile(blob, bytes)

    // Changed here: one grows; one has a byte flipped with its size and mtime put back.
    await writeFile(path.join(folder, grown!.path), Buffer.concat([await readFile(path.join(folder, grown!.path)), Buffer.from('edited')]))
    const target = path.join(folder, rewritten!.path)
    const info = await stat(target)
    const content = await readFile(target)
    content[content.length - 10]! ^= 0xff
    await writeFile(target, content)
    await utimes(target, info.atimeMs / 1000, info.mtimeMs / 1000) // in seconds: a Date would round the sub-millisecond part
    // Never backed up.
    await writePhoto(path.join(folder, 'new', 'IMG_NEW.jpg'), { format: 'jpeg', width: 320, height: 240, seed: 99 })

    const dry = await photos(home, ['free-up', folder, '--album', 'Mixed album', '--json'])
    expect(dry.code, dry.stderr).toBe(1) // a corrupt blob is something wrong with the backup
    const expected = {
      [damaged!.path]: 'corrupt',
      [grown!.path]: 'changed',
      [rewritten!.path]: 'changed',
      'new/IMG_NEW.jpg': 'not_backed_up',
      ...Object.fromEntries(files.filter((f) => ![damaged, grown, rewritten].includes(f)).map((f) => [f.path, null])),
    }
    expect(reasons(dry)).toEqual(expected)
    const corrupt = fileEvents(dry).find((e) => e.path === damaged!.path)!
    expect((corrupt.details as string[]).join(' ')).toMatch(/original blob .* is corrupt/)
    const rewrittenEvent = fileEvents(dry).find((e) => e.path === rewritten!.path)!
    expect((rewrittenEvent.details as string[]).join(' ')).toMatch(/no longer hashes/)

    const human = await photos(home, ['free-up', folder, '--album', 'Mixed album'])
    expect(human.stdout).toContain(`kept  ${damaged!.path}: a blob is corrupt on the server`)
    expect(human.stdout).toContain(`kept  ${grown!.path}: changed since it was backed up`)
    expect(human.stdout).toContain('kept  new/IMG_NEW.jpg: never backed up from this device to this album; run backup first')

    const act = await photos(home, ['free-up', folder, '--album', 'Mixed album', '--yes', '--json'])
    expect(act.code, act.stderr).toBe(1)
    const freed = events(act)
      .filter((e) => e.event === 'freed')
      .map((e) => e.path)
      .sort()
    const freeable = Object.entries(expected)
      .filter(([, reason]) => reason === null)
      .map(([p]) => p)
      .sort()
    expect(freed).toEqual(freeable)
    for (const p of freeable) expect(await fileExists(path.join(folder, p)), p).toBe(false)
    for (const p of [damaged!.path, grown!.path, rewritten!.path, 'new/IMG_NEW.jpg']) expect(await fileExists(path.join(folder, p)), p).toBe(true)
  })

  it('does not follow a symbolic link out of the folder', async () => {
    const { home } = await setUpHome(server)
    const outside = path.join(work, 'Outside')
    const files = await generateLibrary(outside, { count: 2, seed: 41 })
    expectOk(await photos(home, ['backup', outside, '--album', 'Linked']))
    const folder = path.join(work, 'Linked')
    const { symlink, mkdir } = await import('node:fs/promises')
    await mkdir(folder)
    await symlink(outside, path.join(folder, 'sub'))
    await symlink(path.join(outside, files[0]!.path), path.join(folder, files[0]!.path))
    const act = await photos(home, ['free-up', folder, '--yes', '--json'])
    expectOk(act)
    expect(summaryOf(act)).toMatchObject({ files: 0, freed: 0 })
    for (const f of files) expect(await fileExists(path.join(outside, f.path))).toBe(true)
  })

  it("keeps a copy recorded as another name's photo (a record from before each path was its own, decision 0048): restore would not bring it back there", async () => {
    const { home, email } = await setUpHome(server)
    const folder = path.join(work, 'Copied')
    const [original] = await generateLibrary(folder, { count: 1, seed: 43 })
    expectOk(await photos(home, ['backup', folder]))
    const copy = path.join(folder, `copy-${path.basename(original!.path)}`)
    await writeFile(copy, await readFile(path.join(folder, original!.path)))
    const albumId = (await findAlbum(await libraryOf(server, home, email), 'Copied'))!.albumId
    const state = openSyncState(path.join(home, 'state.sqlite'))
    try {
      const recorded = state.backedUpFile(albumId, original!.path)!
      const info = await stat(copy)
      await state.remember({ ...recorded, path: path.basename(copy), size: info.size, modified: Math.floor(info.mtimeMs), identity: null })
    } finally {
      state.close()
    }
    const act = await photos(home, ['free-up', folder, '--yes', '--json'])
    expect(reasons(act)).toMatchObject({ [original!.path]: null, [path.basename(copy)]: 'not_backed_up' })
    expect(await fileExists(copy)).toBe(true)
    expect(await fileExists(path.join(folder, original!.path))).toBe(false)
  })
})

describe("coffer-photos free-up with the server's deep-scan budget spent", { timeout: 300_000 }, () => {
  let small: TestServer
  beforeAll(async () => {
    small = await startServer({ DEEP_SCAN_BUDGET_BYTES: '1' })
  }, 60_000)
  afterAll(async () => {
    await small?.close()
  })

  it('keeps every file as not checked yet, exit 0, and deletes nothing', async () => {
    const { home } = await setUpHome(small)
    const folder = path.join(work, 'Budget')
    const files = await generateLibrary(folder, { count: 3, seed: 5 })
    expectOk(await photos(home, ['backup', folder, '--json']))
    const act = await photos(home, ['free-up', folder, '--yes', '--json'])
    expectOk(act)
    expect(fileEvents(act).map((e) => e.reason)).toEqual(files.map(() => 'deep_pending'))
    expect(summaryOf(act)).toMatchObject({ freed: 0, kept: files.length, kept_by_reason: { deep_pending: files.length } })
    for (const f of files) expect(await fileExists(path.join(folder, f.path))).toBe(true)
    const human = await photos(home, ['free-up', folder])
    expectOk(human)
    expect(human.stdout).toMatch(/not checked yet .*run again later/)
    expect(await fileExists(path.join(home, 'freed.log'))).toBe(false)
  })

  it('frees every file a deep verify downloaded and checked here', async () => {
    const { home } = await setUpHome(small)
    const folder = path.join(work, 'Verified')
    const files = await generateLibrary(folder, { count: 3, seed: 6 })
    expectOk(await photos(home, ['backup', folder, '--json']))
    const verify = await photos(home, ['verify', 'Verified', '--deep', '--json'])
    expectOk(verify)
    expect(events(verify).find((e) => e.event === 'summary')).toMatchObject({ failed: 0 })
    const act = await photos(home, ['free-up', folder, '--yes', '--json'])
    expectOk(act)
    expect(summaryOf(act)).toMatchObject({ freed: files.length, kept: 0 })
    expect(fileEvents(act).map((e) => e.checked_by)).toEqual(files.map(() => 'itself'))
  })

  it('frees the rest of a folder on a complete sample, and not when a sampled file is lost on the server', async () => {
    const { home, email } = await setUpHome(small)
    const folder = path.join(work, 'Sampled')
    const files = await generateLibrary(folder, { count: 8, seed: 7 })
    expectOk(await photos(home, ['backup', folder, '--json']))
    const library = await libraryOf(small, home, email)
    const album = (await findAlbum(library, 'Sampled'))!
    const state = openSyncState(path.join(home, 'state.sqlite'))
    try {
      const idOf = new Map(files.map((f) => [f.path, state.backedUpFile(album.albumId, f.path)!.assetId]))
      const sample = sampleOf([...idOf.values()], library.masterKey, album.albumId, 3)
      expect(sample.size).toBe(3)
      // The sample checked here earlier (downloaded and decrypted, as verify --deep does); the server checks nothing.
      const checked = await verifyAssets(library, album.albumId, sample, { deep: true })
      for (const report of checked) state.rememberDeepCheck(report.checkedHere, Date.now())

      const plan = await planFreeUp({ library, albumId: album.albumId, folder, state, sampleFiles: 3 })
      const byPath = new Map(plan.files.map((f) => [f.path, f]))
      for (const [file, id] of idOf) {
        expect(byPath.get(file)?.reason, file).toBeNull()
        expect(byPath.get(file)?.checkedBy, file).toBe(sample.has(id) ? 'itself' : 'sample')
      }

      // A sampled file's original lost on the server's disk: the rest no longer goes on the sample.
      const [lostPath] = [...idOf].find(([, id]) => sample.has(id))!
      let hash: string | null = null
      for await (const file of albumFiles(library, album.albumId)) if (file.metadata.name === lostPath) hash = file.envelope.ciphertext_hash
      await unlink(path.join(small.deps.config.blobDir, hash!.slice(0, 2), hash!.slice(2, 4), hash!))
      const again = await planFreeUp({ library, albumId: album.albumId, folder, state, sampleFiles: 3 })
      for (const file of again.files) {
        const expected = file.path === lostPath ? 'not_durable' : sample.has(idOf.get(file.path)!) ? null : 'sample_failed'
        expect(file.reason, file.path).toBe(expected)
      }
    } finally {
      state.close()
    }
  })
})

describe('coffer-photos free-up, a dry run then --yes, with a deep-scan budget for one pass', { timeout: 300_000 }, () => {
  let tight: TestServer
  beforeAll(async () => {
    tight = await startServer()
  }, 60_000)
  afterAll(async () => {
    await tight?.close()
  })

  it('remembers what the dry run found intact, so that --yes frees every file', async () => {
    const { home, email } = await setUpHome(tight)
    const folder = path.join(work, 'Once')
    const files = await generateLibrary(folder, { count: 4, seed: 17 })
    expectOk(await photos(home, ['backup', folder, '--json']))
    // The account's every blob, once: the server re-hashes the folder a single time in this window.
    const { stored_bytes: stored } = await (await libraryOf(tight, home, email)).client.storageUsage()
    ;(tight.deps.config.verification as { deepScanBudgetBytes: number }).deepScanBudgetBytes = stored

    const dry = await photos(home, ['free-up', folder, '--json'])
    expectOk(dry)
    expect(summaryOf(dry)).toMatchObject({ freeable: files.length, kept: 0 })
    const verify = await photos(home, ['verify', 'Once', '--deep', '--json'])
    expectOk(verify) // downloaded and checked here; the server's budget is spent
    expect(
      events(verify)
        .filter((e) => e.event === 'asset')
        .some((e) => (e.deep_pending as number) > 0),
    ).toBe(true)

    const act = await photos(home, ['free-up', folder, '--yes', '--json'])
    expectOk(act)
    expect(summaryOf(act)).toMatchObject({ freed: files.length, kept: 0 })
    for (const f of files) expect(await fileExists(path.join(folder, f.path))).toBe(false)
  })
})
