// What `coffer-photos backup` does with what a folder holds beside readable photos (docs/photos.md,
// "Backing up"): every photo and video comes back at its path (empty, RAW, any video container,
// a copy, a renamed file), and what is not backed up is named with the reason (decision 0048);
// a subfolder it cannot list and a file it cannot read are skipped, named with the reason in the
// summary and in --json, and the rest is backed up (exit 1). Tests run as root,
// whom permissions do not stop: the fault is the system call's, injected for one path into
// node:fs/promises (syncBuiltinESMExports gives every importer the faulting function).
import { createHash, randomBytes } from 'node:crypto'
import fsPromises, { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { syncBuiltinESMExports } from 'node:module'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PASSWORD, uniqueEmail } from '../support/actors.ts'
import { writePhoto } from '../support/photos.ts'
import { events, expectOk, photos } from '../support/photos-cli.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
let work: string
let home: string
const email = uniqueEmail('walk')

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex')

type Faulted = 'opendir' | 'readFile'

/** Runs `body` while `call` fails with EACCES for `file` (every other path, and every other call, as the system answers). */
async function withPermissionDenied<T>(call: Faulted, file: string, body: () => Promise<T>): Promise<T> {
  const system = fsPromises as unknown as Record<Faulted, (at: unknown, ...rest: unknown[]) => Promise<unknown>>
  const original = system[call]
  system[call] = (at, ...rest) =>
    String(at) === file
      ? Promise.reject(
          Object.assign(new Error(`EACCES: permission denied, ${call === 'opendir' ? 'opendir' : 'open'} '${file}'`), { code: 'EACCES', path: file }),
        )
      : original(at, ...rest)
  syncBuiltinESMExports()
  try {
    return await body()
  } finally {
    system[call] = original
    syncBuiltinESMExports()
  }
}

/** Every file under `root`, relative, "/" between names, sorted. */
async function tree(root: string, relative = ''): Promise<string[]> {
  const found: string[] = []
  for (const entry of await readdir(path.join(root, relative), { withFileTypes: true })) {
    const child = relative === '' ? entry.name : `${relative}/${entry.name}`
    if (entry.isDirectory()) found.push(...(await tree(root, child)))
    else found.push(child)
  }
  return found.sort()
}

beforeAll(async () => {
  server = await startServer()
  work = await mkdtemp(path.join(tmpdir(), 'coffer-photos-walk-'))
  home = path.join(work, 'home')
  expectOk(await photos(home, ['login', server.url, '--register', '--email', email, '--password-stdin'], { stdin: PASSWORD }))
  expectOk(await photos(home, ['setup', '--yes', '--device-name', 'Laptop']))
}, 300_000)
afterAll(async () => {
  await server?.close()
  await rm(work, { recursive: true, force: true })
})

describe('what a backup cannot read', { timeout: 180_000 }, () => {
  it('skips a subfolder it cannot list and a file it cannot read, names both with the reason, backs up the rest, exit 1', async () => {
    const folder = path.join(work, 'Unreadable')
    const names = ['a/IMG_1.jpg', 'locked/IMG_2.jpg', 'locked/deeper/IMG_3.jpg', 'z/IMG_4.jpg', 'z/IMG_5.jpg']
    for (const [i, name] of names.entries()) await writePhoto(path.join(folder, name), { format: 'jpeg', width: 64, height: 48, seed: 900 + i })
    const unreadableFile = path.join(folder, 'z/IMG_5.jpg')
    const run = await withPermissionDenied('opendir', path.join(folder, 'locked'), () =>
      withPermissionDenied('readFile', unreadableFile, () => photos(home, ['backup', folder, '--json'])),
    )
    expect(run.code, run.stderr).toBe(1)
    const summary = events(run).find((e) => e.event === 'summary')!
    expect(summary).toMatchObject({ stored: 2, failed: 1 })
    expect(summary.unreadable).toEqual([{ path: 'locked', error: expect.stringMatching(/^EACCES: permission denied, opendir/) }])
    expect(summary.failures).toEqual([{ path: 'z/IMG_5.jpg', error: expect.stringMatching(/EACCES: permission denied/) }])
    expect(
      events(run)
        .filter((e) => e.event === 'file' && e.outcome === 'stored')
        .map((e) => e.path)
        .sort(),
    ).toEqual(['a/IMG_1.jpg', 'z/IMG_4.jpg'])
    expect(run.stderr).toMatch(/not backed up: locked\/: the folder cannot be read: EACCES: permission denied/)
    expect(run.stderr).toMatch(/failed: z\/IMG_5\.jpg: .*EACCES: permission denied/)

    // Readable again: the next run backs up what was skipped, and restore brings every file back.
    const again = await photos(home, ['backup', folder, '--json'])
    expectOk(again)
    expect(events(again).find((e) => e.event === 'summary')).toMatchObject({ stored: 3, unchanged: 2, unreadable: [] })
    const dest = path.join(work, 'restored-unreadable')
    expectOk(await photos(home, ['restore', 'Unreadable', dest]))
    for (const name of names) expect(sha256(await readFile(path.join(dest, name))), name).toBe(sha256(await readFile(path.join(folder, name))))
  })
})

describe('every file comes back (decision 0048)', { timeout: 180_000 }, () => {
  it('an empty file, a copy at a second path, a renamed file, RAW and MKV are restored at their paths; a .txt is named as not backed up', async () => {
    const folder = path.join(work, 'Everything')
    await writePhoto(path.join(folder, 'a/IMG_1.jpg'), { format: 'jpeg', width: 64, height: 48, seed: 1 })
    await mkdir(path.join(folder, 'b'), { recursive: true })
    await writeFile(path.join(folder, 'b/IMG_1 copy.jpg'), await readFile(path.join(folder, 'a/IMG_1.jpg')))
    await writePhoto(path.join(folder, 'c/IMG_2.jpg'), { format: 'jpeg', width: 64, height: 48, seed: 2 })
    await writeFile(path.join(folder, 'c/empty.jpg'), new Uint8Array(0))
    await mkdir(path.join(folder, 'raw'), { recursive: true })
    await writeFile(path.join(folder, 'raw/DSC_0001.NEF'), Buffer.concat([Buffer.from('II*\0', 'latin1'), randomBytes(3000)]))
    await writeFile(path.join(folder, 'raw/IMG_0002.CR2'), Buffer.concat([Buffer.from('II*\0', 'latin1'), randomBytes(2000)]))
    await writeFile(path.join(folder, 'clip.mkv'), randomBytes(5000))
    await writeFile(path.join(folder, 'notes.txt'), 'not a photo')

    const first = await photos(home, ['backup', folder, '--json'])
    expectOk(first)
    const summary = events(first).find((e) => e.event === 'summary')!
    expect(summary).toMatchObject({ files: 7, stored: 7, failed: 0, skipped: [{ path: 'notes.txt', reason: 'not a photo or video (by its name)' }] })
    expect(first.stderr).toContain('not backed up: notes.txt: not a photo or video (by its name)')
    // The copy's original is the one stored already: only its own metadata and derivatives are sent.
    expect(summary.deduplicated).toBe(1)

    await rename(path.join(folder, 'c/IMG_2.jpg'), path.join(folder, 'c/IMG_2 renamed.jpg'))
    const second = await photos(home, ['backup', folder, '--json'])
    expectOk(second)
    expect(events(second).find((e) => e.event === 'file' && e.path === 'c/IMG_2 renamed.jpg')).toMatchObject({ outcome: 'stored' })
    expect(events(second).find((e) => e.event === 'summary')).toMatchObject({ stored: 1, deduplicated: 1, unchanged: 6 })

    const dest = path.join(work, 'restored-everything')
    expectOk(await photos(home, ['restore', 'Everything', dest]))
    const backedUp = (await tree(folder)).filter((name) => name !== 'notes.txt')
    // Every file at its path, and the renamed one at its old name too (a backup never deletes).
    expect(await tree(dest)).toEqual([...backedUp, 'c/IMG_2.jpg'].sort())
    for (const name of backedUp) expect(sha256(await readFile(path.join(dest, name))), name).toBe(sha256(await readFile(path.join(folder, name))))
  })
})
