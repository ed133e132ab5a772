// free-up's last step on its own (free-up.ts freeFile, openFreedLog): a file is deleted only when
// it is still the file that was checked, a regular file in a folder under the root; the log is
// private and appended to. And the sample the rest of a folder may be freed on (sampleOf).
import { mkdir, mkdtemp, readFile, realpath, rename, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { freeFile, openFreedLog, sampleOf, type FreeUpFile, type FreeUpPlan } from './free-up.ts'

let root: string
let outside: string

beforeEach(async () => {
  const base = await realpath(await mkdtemp(path.join(tmpdir(), 'coffer-free-up-')))
  root = path.join(base, 'folder')
  outside = path.join(base, 'outside')
  await mkdir(path.join(root, 'sub'), { recursive: true })
  await mkdir(outside)
})
afterEach(async () => {
  await rm(path.dirname(root), { recursive: true, force: true })
})

/** A file the plan frees, as planFreeUp records it after hashing. */
async function checked(relative: string, content = 'photo bytes'): Promise<{ plan: FreeUpPlan; file: FreeUpFile }> {
  const file = path.join(root, ...relative.split('/'))
  await writeFile(file, content)
  const info = await stat(file)
  const entry: FreeUpFile = {
    path: relative,
    file,
    size: info.size,
    reason: null,
    checkedBy: 'itself',
    details: [],
    assetId: 'a',
    contentHash: 'h',
    identity: { dev: info.dev, ino: info.ino, size: info.size, modified: Math.floor(info.mtimeMs) },
  }
  return { plan: { root, files: [entry] }, file: entry }
}

const present = (file: string): Promise<boolean> =>
  stat(file).then(
    () => true,
    () => false,
  )

describe('freeFile', () => {
  it('deletes the file that was checked', async () => {
    const { plan, file } = await checked('sub/a.jpg')
    expect(await freeFile(plan, file)).toEqual({ freed: true })
    expect(await present(file.file)).toBe(false)
  })

  it('keeps a file whose mtime or size changed after the check', async () => {
    const { plan, file } = await checked('a.jpg')
    await utimes(file.file, new Date(), new Date(Date.now() + 5000))
    expect(await freeFile(plan, file)).toMatchObject({ freed: false, reason: 'changed' })
    expect(await present(file.file)).toBe(true)
    const second = await checked('b.jpg')
    await writeFile(second.file.file, 'photo bytes, edited')
    expect(await freeFile(second.plan, second.file)).toMatchObject({ freed: false, reason: 'changed' })
  })

  it('keeps a file replaced by another (same name, another inode) or by a link', async () => {
    const { plan, file } = await checked('a.jpg')
    await writeFile(path.join(root, 'other.jpg'), 'photo bytes')
    await rename(path.join(root, 'other.jpg'), file.file)
    expect(await freeFile(plan, file)).toMatchObject({ freed: false, reason: 'changed' })
    await rm(file.file)
    await writeFile(path.join(outside, 'a.jpg'), 'photo bytes')
    await symlink(path.join(outside, 'a.jpg'), file.file)
    expect(await freeFile(plan, file)).toMatchObject({ freed: false, reason: 'changed' })
    expect(await present(path.join(outside, 'a.jpg'))).toBe(true)
  })

  it('does not follow a folder turned into a link out of the root', async () => {
    const { plan, file } = await checked('sub/a.jpg')
    await rm(path.join(root, 'sub'), { recursive: true })
    await writeFile(path.join(outside, 'a.jpg'), 'photo bytes')
    await symlink(outside, path.join(root, 'sub'))
    expect(await freeFile(plan, file)).toMatchObject({ freed: false, reason: 'changed' })
    expect(await present(path.join(outside, 'a.jpg'))).toBe(true)
  })

  it('refuses a path outside the root', async () => {
    const { plan, file } = await checked('a.jpg')
    const escaping: FreeUpFile = { ...file, path: '../outside/a.jpg', file: path.join(outside, 'a.jpg') }
    expect(await freeFile(plan, escaping)).toMatchObject({ freed: false, reason: 'failed' })
    await expect(freeFile(plan, { ...file, reason: 'changed' })).rejects.toThrow(/not to be freed/)
  })

  it('says a file gone already is kept as changed', async () => {
    const { plan, file } = await checked('a.jpg')
    await rm(file.file)
    expect(await freeFile(plan, file)).toMatchObject({ freed: false, reason: 'changed', detail: 'it is gone already' })
  })
})

describe('openFreedLog', () => {
  it('appends JSON lines to a 0600 file, made private when it was not', async () => {
    const file = path.join(root, 'freed.log')
    await writeFile(file, '{"old":true}\n', { mode: 0o644 })
    const log = await openFreedLog(file)
    await log.append({ path: 'a.jpg', size: 1 })
    await log.append({ path: 'b.jpg', size: 2 })
    await log.close()
    expect((await stat(file)).mode & 0o777).toBe(0o600)
    expect(
      (await readFile(file, 'utf8'))
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ).toEqual([{ old: true }, { path: 'a.jpg', size: 1 }, { path: 'b.jpg', size: 2 }])
  })
})

describe('sampleOf', () => {
  const ids = Array.from({ length: 200 }, (_, i) => `asset-${i}`)
  const key = new Uint8Array(32).fill(7)

  it('picks the given number, the same on every run, whatever the order it is given', () => {
    const sample = sampleOf(ids, key, 'album', 64)
    expect(sample.size).toBe(64)
    for (const id of sample) expect(ids).toContain(id)
    expect(sampleOf([...ids].reverse(), key, 'album', 64)).toEqual(sample)
  })

  it('takes every file when there are fewer than the sample', () => {
    expect(sampleOf(ids.slice(0, 10), key, 'album', 64)).toEqual(new Set(ids.slice(0, 10)))
  })

  it('is another for another key or album, and not the first ids given', () => {
    const sample = sampleOf(ids, key, 'album', 64)
    expect(sampleOf(ids, new Uint8Array(32).fill(8), 'album', 64)).not.toEqual(sample)
    expect(sampleOf(ids, key, 'other album', 64)).not.toEqual(sample)
    expect(sample).not.toEqual(new Set(ids.slice(0, 64)))
  })
})
