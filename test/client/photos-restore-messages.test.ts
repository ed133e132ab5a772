// What `coffer-photos restore` says when it cannot put a file in place (docs/photos.md,
// "Restoring"): a full disk stops it at the first file that found no room, named on one line,
// exit 6 (not a line per file); a different file of the person's at a file's name is kept, and
// the summary and --json say so plainly (exit 1). The full disk is the system's answer to a
// write: node:fs/promises' open is wrapped so that writes (write and writev) to the files' partial
// files fail with ENOSPC, as on a full disk.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import type { FileHandle } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { PASSWORD, uniqueEmail } from '../support/actors.ts'
import { writePhoto } from '../support/photos.ts'
import { errorLineOf, events, expectOk, photos } from '../support/photos-cli.ts'
import { startServer, type TestServer } from '../support/server.ts'

/** The file names whose restore finds the disk full. */
const full = vi.hoisted(() => ({ names: new Set<string>() }))

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>()
  const open: typeof real.open = async (...args) => {
    const handle = await real.open(...args)
    const at = String(args[0])
    const partialOf = [...full.names].some((name) => path.basename(at).startsWith(`.${name}.`) && at.endsWith('.coffer-partial'))
    if (!partialOf) return handle
    const noSpace = Object.assign(new Error(`ENOSPC: no space left on device, write`), { code: 'ENOSPC', errno: -28, syscall: 'write' })
    return Object.assign(Object.create(handle) as FileHandle, { write: () => Promise.reject(noSpace), writev: () => Promise.reject(noSpace) })
  }
  return { ...real, open, default: { ...real, open } }
})

let server: TestServer
let work: string
let home: string
let folder: string

beforeAll(async () => {
  server = await startServer()
  work = await mkdtemp(path.join(tmpdir(), 'coffer-photos-restore-messages-'))
  home = path.join(work, 'home')
  expectOk(await photos(home, ['login', server.url, '--register', '--email', uniqueEmail('restore'), '--password-stdin'], { stdin: `${PASSWORD}\n` }))
  expectOk(await photos(home, ['setup', '--yes', '--json']))
  folder = path.join(work, 'Trip')
  for (const [seed, name] of ['a.jpg', 'b.jpg', 'c.jpg', 'd.jpg'].entries())
    await writePhoto(path.join(folder, name), { format: 'jpeg', width: 64, height: 48, seed })
  expectOk(await photos(home, ['backup', folder]))
}, 120_000)
afterAll(async () => {
  await server?.close()
  await rm(work, { recursive: true, force: true })
})

describe('coffer-photos restore says what it did', { timeout: 120_000 }, () => {
  it('a full disk: stops at the first file that found no room, one line naming it, exit 6', async () => {
    for (const name of ['a.jpg', 'b.jpg', 'c.jpg', 'd.jpg']) full.names.add(name)
    try {
      const dest = path.join(work, 'full')
      const run = await photos(home, ['restore', 'Trip', dest, '--concurrency', '1'])
      expect(run.code, run.stderr).toBe(6)
      expect(errorLineOf(run)).toMatch(
        /^coffer-photos: no space left to write [a-d]\.jpg \(ENOSPC\); the files restored before it are kept: make room and run again to continue$/,
      )
      expect(run.stderr.split('\n').filter((line) => line.includes('ENOSPC'))).toHaveLength(1)
      expect(await readdir(dest)).toEqual([]) // nor a partial file left
    } finally {
      full.names.clear()
    }
  })

  it('a different file of yours at a name: kept, and the summary and --json say the album’s was not restored (exit 1)', async () => {
    const dest = path.join(work, 'older')
    await writePhoto(path.join(dest, 'a.jpg'), { format: 'jpeg', width: 32, height: 32, seed: 77 })
    const yours = await readFile(path.join(dest, 'a.jpg'))
    const run = await photos(home, ['restore', 'Trip', dest])
    expect(run.code, run.stderr).toBe(1)
    expect(run.stdout).toMatch(
      /^3 restored, 0 already there, 1 not restored: a different file of yours is at its name and was kept \(--overwrite replaces them\), 0 failed, of 4 files$/m,
    )
    expect(run.stderr).toContain(
      `coffer-photos: kept your file ${path.join(dest, 'a.jpg')}: it differs from the album's; the album's is not restored (--overwrite replaces it)`,
    )
    expect((await readFile(path.join(dest, 'a.jpg'))).equals(yours)).toBe(true)
    const json = await photos(home, ['restore', 'Trip', dest, '--json'])
    expect(json.code).toBe(1)
    expect(events(json).find((e) => e.event === 'file' && e.path === 'a.jpg')).toMatchObject({ outcome: 'kept' })
    expect(events(json).find((e) => e.event === 'summary')).toMatchObject({ restored: 0, unchanged: 3, kept: 1, failed: 0 })
  })
})
