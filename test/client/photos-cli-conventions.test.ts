// coffer-photos' conventions as users of restic and rclone expect them (docs/photos.md,
// decision 0050): --version; every option a command parses shown in its --help; "no" at
// setup's question exits 130 as the exit code table says; `ls` in columns under a header, by
// month; backup's --include/--exclude, --dry-run (nothing sent, nothing written), --quiet and
// --verbose.
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { COMMANDS } from '../../src/cli/photos/commands.ts'
import { Home } from '../../src/cli/photos/home.ts'
import { PASSWORD, uniqueEmail } from '../support/actors.ts'
import { writePhoto } from '../support/photos.ts'
import { events, expectOk, onTerminal, photos } from '../support/photos-cli.ts'
import { ROOT } from '../support/process.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
let work: string

beforeAll(async () => {
  server = await startServer()
  work = await mkdtemp(path.join(tmpdir(), 'coffer-photos-conventions-'))
}, 60_000)
afterAll(async () => {
  await server?.close()
  await rm(work, { recursive: true, force: true })
})

let homes = 0
async function registeredHome(): Promise<string> {
  const home = path.join(work, `home-${++homes}`)
  expectOk(await photos(home, ['login', server.url, '--register', '--email', uniqueEmail('conventions'), '--password-stdin'], { stdin: `${PASSWORD}\n` }))
  return home
}
async function setUpHome(): Promise<string> {
  const home = await registeredHome()
  expectOk(await photos(home, ['setup', '--yes', '--json']))
  return home
}

let folders = 0
/** A folder of small photos at `paths` (relative, "/" between names). */
async function folderOf(paths: readonly string[]): Promise<string> {
  const folder = path.join(work, `folder-${++folders}`)
  await Promise.all(paths.map((at, seed) => writePhoto(path.join(folder, at), { format: at.endsWith('.png') ? 'png' : 'jpeg', width: 64, height: 48, seed })))
  return folder
}

const fileEvents = (stdout: string) => events({ stdout }).filter((e) => e.event === 'file')

describe('coffer-photos conventions', { timeout: 120_000 }, () => {
  it('albums lists each album with its files and the months they were taken over; albums rename renames, refuses a taken name (exit 4)', async () => {
    const home = await setUpHome()
    const folder = path.join(work, `folder-${++folders}`)
    await writePhoto(path.join(folder, 'july.jpg'), { format: 'jpeg', width: 64, height: 48, seed: 1, captured: new Date('2019-07-14T12:00:00Z') })
    await writePhoto(path.join(folder, 'august.jpg'), { format: 'jpeg', width: 64, height: 48, seed: 2, captured: new Date('2021-08-02T09:30:00Z') })
    expectOk(await photos(home, ['backup', folder, '--album', 'Holiday', '--quiet']))
    expectOk(await photos(home, ['backup', await folderOf(['one.jpg']), '--album', 'Other', '--quiet']))

    expectOk(await photos(home, ['albums', 'rename', 'Holiday', 'Spain 2019']))
    const listed = await photos(home, ['albums'])
    expectOk(listed)
    expect(listed.stdout.split('\n')[0]).toMatch(/^NAME +FILES +TAKEN$/)
    expect(listed.stdout).toMatch(/^Spain 2019 +2 +Jul 2019 – Aug 2021$/m)
    expect(listed.stdout).not.toMatch(/Holiday/)
    const json = await photos(home, ['albums', '--json'])
    expect(events(json).find((e) => e.name === 'Spain 2019')).toMatchObject({ files: 2, taken_from: '2019-07-14', taken_to: '2021-08-02' })

    const taken = await photos(home, ['albums', 'rename', 'Spain 2019', 'Other', '--json'])
    expect(taken.code).toBe(4)
    expect(taken.stderr).toMatch(/there is already an album named "Other"/)
    expect((await photos(home, ['albums', 'rename', 'Holiday', 'Anything'])).code).toBe(2)
    const renamed = await photos(home, ['albums', 'rename', 'Other', 'Elsewhere', '--json'])
    expect(events(renamed)).toEqual([expect.objectContaining({ event: 'renamed', from: 'Other', to: 'Elsewhere' })])
    // The renamed album's files are listed under its new name.
    expect(fileEvents((await photos(home, ['ls', 'Elsewhere', '--json'])).stdout).map((e) => e.name)).toEqual(['one.jpg'])
  })

  it('--version prints the version of the package, exit 0', async () => {
    const { version } = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }
    const run = await photos(path.join(work, 'no-home'), ['--version'])
    expectOk(run)
    expect(run.stdout).toBe(`coffer-photos ${version}\n`)
  })

  it("every command's --help shows each option it parses, in its usage line and in its list of options", async () => {
    for (const listed of COMMANDS) {
      const command = await listed.load()
      const run = await photos(path.join(work, 'no-home'), [listed.name, '--help'])
      expectOk(run)
      const [synopsis = '', ...rest] = run.stdout.split('\n\n')
      const body = rest.join('\n\n')
      for (const option of [...Object.keys(command.options), 'json']) {
        expect(synopsis, `${listed.name}: --${option} in the usage line`).toMatch(new RegExp(`--${option}\\b`))
        expect(body, `${listed.name}: --${option} in the options`).toMatch(new RegExp(`^ +(-\\w, )?--${option}\\b`, 'm'))
      }
    }
  })

  // util-linux's `script` runs the command on a pseudo-terminal (Debian: bsdutils, essential).
  it('"no" at setup\'s question exits 130, as the exit code table says, and setup is not finished', async () => {
    const home = await registeredHome()
    const declined = onTerminal(home, ['setup'])
    await declined.waitFor(/Have you written down the recovery phrase\?/)
    declined.type('\r')
    expect(await declined.done).toBe(130)
    expect(declined.text()).toMatch(/setup is not finished/)
    expect(new Home(home).readKeys()?.state).toBe('pending')
  })

  it('ls prints its files in columns under a header, under a heading for their month', async () => {
    const home = await setUpHome()
    const folder = await folderOf(['a.jpg', 'sub/a-much-longer-name.png'])
    // No EXIF date and none in their names: both are dated by their modification time, the same.
    const may = new Date(Date.UTC(2024, 4, 1, 12))
    for (const name of ['a.jpg', 'sub/a-much-longer-name.png']) await utimes(path.join(folder, name), may, may)
    expectOk(await photos(home, ['backup', folder, '--album', 'Columns']))
    // A modification time is shown in the viewer's time zone: UTC here.
    const run = await photos(home, ['ls', 'Columns'], { env: { TZ: 'UTC' } })
    expectOk(run)
    const lines = run.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^NAME +SIZE +TYPE +DIMENSIONS +TAKEN +FROM +FAV$/)
    expect(lines.slice(1, 3)).toEqual(['', 'May 2024'])
    expect(lines.slice(3, 5).map((line) => line.split(/ {2,}/))).toEqual([
      ['a.jpg', expect.stringMatching(/^[\d.]+ K?i?B$/), 'image/jpeg', '64×48', '2024-05-01 12:00:00', 'file-modified'],
      ['sub/a-much-longer-name.png', expect.stringMatching(/^[\d.]+ K?i?B$/), 'image/png', '64×48', '2024-05-01 12:00:00', 'file-modified'],
    ])
    // Each column starts where its header does; sizes end where theirs does.
    const at = (title: string) => lines[0]!.indexOf(title)
    for (const line of lines.slice(3, 5)) {
      expect(line.indexOf('image/')).toBe(at('TYPE'))
      expect(line[at('SIZE') + 'SIZE'.length - 1]).toBe('B')
      expect(line.indexOf('2024-05-01')).toBe(at('TAKEN'))
      expect(line.indexOf('file-modified')).toBe(at('FROM'))
    }
    expect(lines.slice(5)).toEqual(['', expect.stringMatching(/^2 files, /)])
  })

  it('backup --include and --exclude choose the files by their path in the folder', async () => {
    const home = await setUpHome()
    const folder = await folderOf(['2024/a.jpg', '2024/b.png', '2024/deep/c.jpg', '2023/d.jpg', 'e.jpg'])
    const run = await photos(home, ['backup', folder, '--album', 'Chosen', '--include', '2024/**', '--include', 'e.jpg', '--exclude', '*.png', '--json'])
    expectOk(run)
    expect(
      fileEvents(run.stdout)
        .map((e) => e.path)
        .sort(),
    ).toEqual(['2024/a.jpg', '2024/deep/c.jpg', 'e.jpg'])
    const bad = await photos(home, ['backup', folder, '--exclude', ''])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/--include, --exclude: a pattern cannot be empty/)
  })

  it('backup --dry-run says what it would upload and skip, and sends and writes nothing', async () => {
    const home = await setUpHome()
    const folder = await folderOf(['a.jpg', 'b.jpg', 'c.jpg'])
    const first = await photos(home, ['backup', folder, '--album', 'Trial', '--dry-run', '--json'])
    expectOk(first)
    expect(fileEvents(first.stdout).map((e) => [e.path, e.outcome])).toEqual([
      ['a.jpg', 'new'],
      ['b.jpg', 'new'],
      ['c.jpg', 'new'],
    ])
    expect(events(first).at(-1)).toMatchObject({ event: 'summary', dry_run: true, album_exists: false, upload: 3, unchanged: 0 })
    // Nothing on the server, not even the album; no local index made.
    const albums = await photos(home, ['albums', '--json'])
    expectOk(albums)
    expect(events(albums)).toEqual([])
    expect(existsSync(path.join(home, 'state.sqlite'))).toBe(false)

    expectOk(await photos(home, ['backup', folder, '--album', 'Trial', '--exclude', 'c.jpg']))
    await writePhoto(path.join(folder, 'a.jpg'), { format: 'jpeg', width: 64, height: 48, seed: 99 })
    await utimes(path.join(folder, 'a.jpg'), new Date(), new Date(Date.now() + 5000))
    const before = await readFile(path.join(home, 'state.sqlite'))
    const second = await photos(home, ['backup', folder, '--album', 'Trial', '--dry-run'])
    expectOk(second)
    expect(second.stdout).toMatch(/^would upload as a new version {2}a\.jpg/m)
    expect(second.stdout).toMatch(/^would upload {2}c\.jpg/m)
    expect(second.stdout).not.toMatch(/b\.jpg/) // skipped files are listed with --verbose only
    expect(second.stdout).toMatch(/would upload 2 files .*1 of them as new versions.*skip 1 unchanged/)
    expect(await readFile(path.join(home, 'state.sqlite'))).toEqual(before)
    const listed = await photos(home, ['ls', 'Trial', '--json'])
    expect(
      fileEvents(listed.stdout)
        .map((e) => e.name)
        .sort(), // ls orders by date taken: here their modification times, a moment apart
    ).toEqual(['a.jpg', 'b.jpg'])

    // A newer version of b.jpg's photo written elsewhere: the backup would keep it, and so says the dry run.
    await writePhoto(path.join(work, 'b-elsewhere.jpg'), { format: 'jpeg', width: 64, height: 48, seed: 98 })
    expectOk(await photos(home, ['replace', 'Trial', 'b.jpg', path.join(work, 'b-elsewhere.jpg')]))
    const third = await photos(home, ['backup', folder, '--album', 'Trial', '--dry-run', '--json'])
    expect(fileEvents(third.stdout).find((e) => e.path === 'b.jpg')).toMatchObject({ outcome: 'kept' })
  })

  it('backup --quiet prints only the summary line; --verbose one line per file too; not both', async () => {
    const home = await setUpHome()
    const folder = await folderOf(['a.jpg', 'b.jpg'])
    const quiet = await photos(home, ['backup', folder, '--album', 'Loud', '--quiet'])
    expectOk(quiet)
    expect(quiet.stdout.trimEnd().split('\n')).toEqual([expect.stringMatching(/^2 of 2 files .* 2 stored/)])
    expect(quiet.stderr).toBe('')
    await writeFile(path.join(folder, 'c.jpg'), await readFile(path.join(folder, 'a.jpg')))
    const verbose = await photos(home, ['backup', folder, '--album', 'Loud', '-v'])
    expectOk(verbose)
    expect(verbose.stdout).toMatch(/^unchanged {2}a\.jpg {2}\(/m)
    expect(verbose.stdout).toMatch(/^unchanged {2}b\.jpg {2}\(/m)
    // A copy at another path is an asset of its own (decision 0048), its original not sent again.
    expect(verbose.stdout).toMatch(/^stored {2}c\.jpg {2}\(/m)
    expect(verbose.stdout).toMatch(/1 already stored \(in another album or at another path\)/)
    const both = await photos(home, ['backup', folder, '-q', '-v'])
    expect(both.code).toBe(2)
    expect(both.stderr).toMatch(/--quiet and --verbose do not go together/)
  })
})
