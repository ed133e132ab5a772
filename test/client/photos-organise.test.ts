// `coffer-photos cp`, `mv`, `fav` and `unfav` (docs/photos.md, "Copying, moving and
// favourites"), run in process against a real server: a copy lists in both albums with its
// favourite mark, a second copy changes nothing, a move leaves the source album, and the
// commands refuse what they cannot do with exit 2.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PASSWORD, uniqueEmail } from '../support/actors.ts'
import { generateLibrary, type LibraryFile } from '../support/photos.ts'
import { events, expectOk, photos } from '../support/photos-cli.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
let work: string
let home: string
let generated: LibraryFile[]
const ALBUM = 'Trips'

async function listed(album: string): Promise<Map<string, Record<string, unknown>>> {
  const run = await photos(home, ['ls', album, '--json'])
  expectOk(run)
  return new Map(
    events(run)
      .filter((e) => e.event === 'file')
      .map((e) => [e.name as string, e]),
  )
}

beforeAll(async () => {
  server = await startServer()
  work = await mkdtemp(path.join(tmpdir(), 'coffer-photos-organise-'))
  const folder = path.join(work, ALBUM)
  generated = await generateLibrary(folder, { count: 3, seed: 3061 })
  home = path.join(work, 'home', 'coffer-photos')
  expectOk(await photos(home, ['login', server.url, '--register', '--email', uniqueEmail('organise'), '--password-stdin'], { stdin: PASSWORD }))
  expectOk(await photos(home, ['setup', '--yes', '--device-name', 'Laptop']))
  expectOk(await photos(home, ['backup', folder, '--album', ALBUM]))
}, 300_000)
afterAll(async () => {
  await server?.close()
  await rm(work, { recursive: true, force: true })
})

describe('cp, mv, fav and unfav', { timeout: 180_000 }, () => {
  it('marks a favourite, copies it with its mark (twice: one copy), moves another, unmarks', async () => {
    const [one, two] = generated.map((file) => file.path)
    const marked = await photos(home, ['fav', ALBUM, one!, '--json'])
    expectOk(marked)
    expect(events(marked).find((e) => e.event === 'favourite')).toMatchObject({ name: one, favourite: true, status: 'stored' })
    expect((await listed(ALBUM)).get(one!)).toMatchObject({ favourite: true })
    const table = await photos(home, ['ls', ALBUM])
    expect(table.stdout).toMatch(/ FAV\n/)
    expect(table.stdout.split('\n').find((line) => line.startsWith(one!))).toMatch(/♥$/)

    const copied = await photos(home, ['cp', ALBUM, one!, 'Best of', '--json'])
    expectOk(copied)
    expect(events(copied).find((e) => e.event === 'copied')).toMatchObject({ name: one, to_album: 'Best of', status: 'stored' })
    expect((await listed('Best of')).get(one!)).toMatchObject({ favourite: true })
    expect((await listed(ALBUM)).has(one!)).toBe(true)
    const again = await photos(home, ['cp', ALBUM, one!, 'Best of'])
    expectOk(again)
    expect(again.stdout).toContain('(album "Best of" had it already)')
    expect((await listed('Best of')).size).toBe(1)

    const moved = await photos(home, ['mv', ALBUM, two!, 'Best of', '--json'])
    expectOk(moved)
    expect(events(moved).find((e) => e.event === 'moved')).toMatchObject({ name: two, status: 'stored' })
    expect((await listed(ALBUM)).has(two!)).toBe(false)
    expect([...(await listed('Best of')).keys()].sort()).toEqual([one, two].sort())

    expectOk(await photos(home, ['unfav', 'Best of', one!]))
    expect((await listed('Best of')).get(one!)).toMatchObject({ favourite: false })
    expect((await listed(ALBUM)).get(one!)).toMatchObject({ favourite: true })
  })

  it.each([
    [['cp', ALBUM, 'a.jpg'], /cp takes an album name, at least one file name or asset id, and the album to copy them to/],
    [['mv', ALBUM, 'no-such.jpg', 'Other'], /album "Trips" has no file "no-such.jpg"/],
    [['cp', ALBUM, 'x.jpg', ALBUM], /the photos are in album "Trips" already/],
    [['fav', ALBUM], /fav takes an album name and at least one file name or asset id/],
  ])('%j: exit 2 with the reason', async (args, reason) => {
    const run = await photos(home, args)
    expect(run.code, run.stderr).toBe(2)
    expect(run.stderr).toMatch(reason)
  })
})
