// What `coffer-photos backup` does with what a folder holds beside readable photos (docs/photos.md,
// "Backing up"): a subfolder it cannot list and a file it cannot read are skipped, named with
// the reason in the summary and in --json, and the rest is backed up (exit 1). Tests run as root,
// whom permissions do not stop: the fault is the system call's, injected for one path into
// node:fs/promises (syncBuiltinESMExports gives every importer the faulting function).
import { createHash } from 'node:crypto'
import fsPromises, { mkdtemp, readFile, rm } from 'node:fs/promises'
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
