// `coffer-photos verify --against <folder>` (docs/photos.md "Verifying"), in-process
// against a real server. A backed-up folder compares identical, every file with --all and the
// number asked with --sample, its receipts checked as before. Then, in the folder: a byte
// flipped with the size and mtime put back is reported as differing at that byte (exit 1); a
// file whose mtime changed is reported as changed here, not compared; a deleted file as missing
// here; a file never backed up is counted as not in the album. The album is the folder's name,
// or the one named. VERIFY_AGAINST_BIG_MIB adds a video of that many MiB (the one whose byte is
// flipped, being the largest); docs/benchmarks.md, "verify --against", has the figures of one.
import { constants } from 'node:fs'
import { copyFile, mkdir, mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PASSWORD, uniqueEmail } from '../support/actors.ts'
import { generateLibrary, writeOpaque, type LibraryFile } from '../support/photos.ts'
import { errorLineOf, events, expectOk, photos, type PhotosRun } from '../support/photos-cli.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
let work: string
let home: string
let folder: string
let files: LibraryFile[]

const BIG_MIB = Number(process.env.VERIFY_AGAINST_BIG_MIB ?? 0)

beforeAll(
  async () => {
    server = await startServer()
    work = await mkdtemp(path.join(tmpdir(), 'coffer-photos-verify-against-'))
    home = path.join(work, 'home')
    folder = path.join(work, 'Trip')
    files = await generateLibrary(folder, { count: 6, seed: 33, subfolders: 1, ...(BIG_MIB > 0 ? { bigFileBytes: BIG_MIB * 1024 * 1024 } : {}) })
    expectOk(await photos(home, ['login', server.url, '--register', '--email', uniqueEmail('verify-against'), '--password-stdin'], { stdin: `${PASSWORD}\n` }))
    expectOk(await photos(home, ['setup', '--yes', '--json']))
    expectOk(await photos(home, ['backup', folder, '--json']))
  },
  120_000 + BIG_MIB * 200,
)
afterAll(async () => {
  await server?.close()
  await rm(work, { recursive: true, force: true })
})

const fileEvents = (run: PhotosRun): Record<string, unknown>[] => events(run).filter((e) => e.event === 'file')
const comparisonOf = (run: PhotosRun): Record<string, unknown> => events(run).find((e) => e.event === 'comparison')!
/** An mtime utimes sets back to the same whole ms (it takes seconds in a double: the middle of the ms, as node/files.ts writeRestored). */
const sameMtime = (mtimeMs: number): number => (Math.floor(mtimeMs) + 0.5) / 1000
const outcomes = (run: PhotosRun): Record<string, unknown> => Object.fromEntries(fileEvents(run).map((e) => [e.path, e.outcome]))

describe('coffer-photos verify --against', { timeout: 120_000 + BIG_MIB * 1000 }, () => {
  it('a backed-up folder: --all compares every file identical, --sample N compares N, the receipts are checked as before', async () => {
    const run = await photos(home, ['verify', '--against', folder, '--all', '--json'])
    expectOk(run)
    expect(
      fileEvents(run)
        .map((e) => e.path)
        .sort(),
    ).toEqual(files.map((f) => f.path).sort())
    expect(fileEvents(run).every((e) => e.outcome === 'match' && e.album === 'Trip')).toBe(true)
    const bytes = files.reduce((sum, f) => sum + f.size, 0)
    expect(comparisonOf(run)).toMatchObject({
      album: 'Trip',
      folder,
      sample: null,
      album_files: files.length,
      local_files: files.length,
      comparable: files.length,
      compared: files.length,
      matched: files.length,
      differs: 0,
      failed: 0,
      changed: 0,
      missing: 0,
      not_in_album: 0,
      bytes,
    })
    expect(events(run).filter((e) => e.event === 'asset')).toHaveLength(files.length + 1) // and the album's record
    expect(events(run).find((e) => e.event === 'summary')).toMatchObject({ albums: 1, failed: 0, compare_failed: 0 })

    const sampled = await photos(home, ['verify', '--against', folder, '--sample', '2', '--json'])
    expectOk(sampled)
    expect(fileEvents(sampled).map((e) => e.outcome)).toEqual(['match', 'match'])
    expect(comparisonOf(sampled)).toMatchObject({ sample: 2, comparable: files.length, compared: 2, matched: 2 })
    const byDefault = await photos(home, ['verify', '--against', folder, '--json'])
    expectOk(byDefault)
    expect(comparisonOf(byDefault)).toMatchObject({ sample: 20, compared: files.length }) // fewer files than the default sample: every one

    const human = await photos(home, ['verify', '--against', folder, '--sample', '3'])
    expectOk(human)
    expect(human.stdout).toContain(
      `Trip against ${folder}: 3 of ${files.length} files compared byte for byte (picked at random; --all compares every one), 3 identical; 0 changed here since the backup, 0 missing here, 0 files here not in the album`,
    )
  })

  it("the album is the one named, else the folder's name; the options are checked", async () => {
    const elsewhere = path.join(work, 'Copy of a file')
    await mkdir(path.dirname(path.join(elsewhere, files[0]!.path)), { recursive: true })
    await copyFile(path.join(folder, files[0]!.path), path.join(elsewhere, files[0]!.path), constants.COPYFILE_EXCL)
    const copied = await stat(path.join(folder, files[0]!.path))
    await utimes(path.join(elsewhere, files[0]!.path), copied.atime, sameMtime(copied.mtimeMs))
    const named = await photos(home, ['verify', 'Trip', '--against', elsewhere, '--all', '--json'])
    expectOk(named) // missing files are reported, not a failure
    expect(comparisonOf(named)).toMatchObject({ album: 'Trip', local_files: 1, compared: 1, matched: 1, missing: files.length - 1 })
    const unnamed = await photos(home, ['verify', '--against', work])
    expect(unnamed.code).toBe(2)
    expect(errorLineOf(unnamed)).toContain(`there is no album "${path.basename(work)}"`)
    for (const args of [
      ['--all'],
      ['--sample', '3'],
      ['--against', folder, '--all', '--sample', '3'],
      ['--against', folder, '--sample', '0'],
      ['--against', path.join(work, 'nowhere')],
    ]) {
      const refused = await photos(home, ['verify', ...args])
      expect(refused.code, args.join(' ')).toBe(2)
    }
  })

  it('a flipped byte (size and mtime put back) differs at its offset, exit 1; a changed mtime is "changed here", a deleted file "missing here", a new file "not in the album"', async () => {
    const [flipped, touched, deleted] = [...files].sort((a, b) => b.size - a.size) // the largest flipped: past the first 64 KiB
    const flippedFile = path.join(folder, flipped!.path)
    const before = await stat(flippedFile)
    const bytes = await readFile(flippedFile)
    const offset = 65_536 + 1_000 // in the second chunk of both the stored original and the local read
    expect(bytes.length).toBeGreaterThan(offset)
    bytes[offset] = bytes[offset]! ^ 0x01
    await writeFile(flippedFile, bytes)
    await utimes(flippedFile, before.atime, sameMtime(before.mtimeMs))
    const touchedFile = path.join(folder, touched!.path)
    await utimes(touchedFile, new Date(), new Date(Date.UTC(2020, 0, 1)))
    await rm(path.join(folder, deleted!.path))
    await writeOpaque(path.join(folder, 'NEW_0001.mov'), 70_000, 7)

    const run = await photos(home, ['verify', '--against', folder, '--all', '--json'])
    expect(run.code, run.stderr).toBe(1)
    const seen = outcomes(run)
    expect(seen).toMatchObject({ [flipped!.path]: 'differs', [touched!.path]: 'changed', [deleted!.path]: 'missing', 'NEW_0001.mov': 'not_in_album' })
    for (const f of files.filter((f) => ![flipped, touched, deleted].includes(f))) expect(seen[f.path], f.path).toBe('match')
    expect(fileEvents(run).find((e) => e.path === flipped!.path)).toMatchObject({ offset, size: flipped!.size })
    expect(fileEvents(run).find((e) => e.path === touched!.path)!.detail).toMatch(/here \d+ bytes, mtime 2020-01-01T00:00:00\.000Z/)
    expect(comparisonOf(run)).toMatchObject({
      local_files: files.length,
      comparable: files.length - 2,
      compared: files.length - 2,
      matched: files.length - 3,
      differs: 1,
      failed: 0,
      changed: 1,
      missing: 1,
      not_in_album: 1,
    })
    expect(events(run).find((e) => e.event === 'summary')).toMatchObject({ failed: 0, compare_failed: 1 }) // the album itself verifies

    const human = await photos(home, ['verify', '--against', folder, '--all'])
    expect(human.code).toBe(1)
    expect(human.stdout).toContain(`DIFFERS       Trip/${flipped!.path}: the local file differs from the stored original at byte ${offset}`)
    expect(human.stdout).toContain(`CHANGED HERE  Trip/${touched!.path}: changed here since the backup, not compared`)
    expect(human.stdout).toContain(`MISSING HERE  Trip/${deleted!.path}: not in ${folder}`)
    expect(human.stdout).toContain('1 file here not in the album')
    expect(human.stderr).toContain(`1 of ${files.length - 2} files compared not identical to the local original`)
  })
})
