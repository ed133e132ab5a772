// The date taken (issue 36, decision 0054) through coffer-photos against a real server: photos
// with known EXIF dates from 2015 to 2024 at their cameras' offsets, backed up in an order that
// is not theirs, come out of `ls` newest first by the clock where each was taken under the right
// month headings (one taken at 23:30 on 31 July at -07:00, 1 August in UTC, under July), and
// `restore --layout date` puts each in the YYYY/MM folder of that clock; a photo without EXIF
// takes the date in its name, one without either its modification time (in the viewer's time
// zone, TZ), and one stored by an older client (metadata version 2) the capture time it
// recorded, without being uploaded again.
import { mkdtemp, readdir, readFile, rm, utimes } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findAlbum, liveEntries } from '../../src/client/albums.ts'
import { memorySource, restoreFile } from '../../src/client/files.ts'
import { backupFile } from '../../src/client/upload.ts'
import { CofferClient } from '../../src/sdk/client.ts'
import { PASSWORD, uniqueEmail } from '../support/actors.ts'
import { writePhoto } from '../support/photos.ts'
import { accountLibrary, events, expectOk, photos } from '../support/photos-cli.ts'
import { startServer, type TestServer } from '../support/server.ts'

const ALBUM = 'Ten years'

/** The photos, by name: names in an order unlike their dates, so that the backup (in name order) sends them shuffled. */
const DATED = [
  { name: 'f.jpg', taken: Date.UTC(2015, 2, 14, 9, 26, 53), offset: 0 },
  { name: 'b.jpg', taken: Date.UTC(2016, 10, 5, 18, 0, 0), offset: 60 },
  { name: 'i.jpg', taken: Date.UTC(2017, 4, 20, 7, 45, 10), offset: -300 },
  { name: 'd.jpg', taken: Date.UTC(2018, 0, 15, 12, 0, 0), offset: 330 },
  { name: 'a.jpg', taken: Date.UTC(2019, 6, 4, 10, 34, 56), offset: 120 },
  { name: 'trip/a.jpg', taken: Date.UTC(2019, 6, 20, 16, 5, 0), offset: 0 }, // the same month and file name: a collision for --layout date
  { name: 'g.jpg', taken: Date.UTC(2020, 8, 9, 23, 15, 0), offset: null },
  { name: 'c.jpg', taken: Date.UTC(2021, 11, 12, 8, 0, 0), offset: 540 },
  { name: 'j.jpg', taken: Date.UTC(2022, 1, 14, 14, 14, 14), offset: 0 },
  { name: 'e.jpg', taken: Date.UTC(2024, 9, 31, 11, 0, 0), offset: -420 },
  // 23:30 on 31 July at -07:00: 1 August in UTC, listed under July, restored into 2019/07.
  { name: 'k.jpg', taken: Date.UTC(2019, 7, 1, 6, 30, 0), offset: -420 },
]
/** No EXIF date: the date in its name. */
const NAMED = { name: 'IMG_20230610_081500.jpg', taken: Date.UTC(2023, 5, 10, 8, 15, 0) }
/** Neither: its modification time. */
const PLAIN = { name: 'h.jpg', taken: Date.UTC(2014, 7, 15, 12, 0, 0) }

let server: TestServer
let work: string
let home: string
let email: string
let folder: string

beforeAll(async () => {
  server = await startServer()
  work = await mkdtemp(path.join(tmpdir(), 'coffer-date-taken-'))
  home = path.join(work, 'home')
  folder = path.join(work, 'photos')
  email = uniqueEmail('date-taken')
  expectOk(await photos(home, ['login', server.url, '--register', '--email', email, '--password-stdin'], { stdin: `${PASSWORD}\n` }))
  expectOk(await photos(home, ['setup', '--yes', '--json']))
  const small = { format: 'jpeg', width: 64, height: 48 } as const
  await Promise.all(
    DATED.map(({ name, taken, offset }, seed) => writePhoto(path.join(folder, name), { ...small, seed, captured: new Date(taken), utcOffsetMinutes: offset })),
  )
  await writePhoto(path.join(folder, NAMED.name), { ...small, seed: 20 })
  await writePhoto(path.join(folder, PLAIN.name), { ...small, seed: 21 })
  await utimes(path.join(folder, PLAIN.name), new Date(), new Date(PLAIN.taken))
  expectOk(await photos(home, ['backup', folder, '--album', ALBUM, '--concurrency', '1']))
}, 120_000)

afterAll(async () => {
  await server?.close()
  await rm(work, { recursive: true, force: true })
})

const MONTH = new Intl.DateTimeFormat('en', { month: 'long', year: 'numeric', timeZone: 'UTC' })
/** The wall clock where it was taken, as if UTC (taken.ts Taken.local), and `taken` in ISO 8601 at that clock: with its offset, or none when floating. */
const clock = (taken: number, offset: number | null) => {
  const local = taken + (offset ?? 0) * 60_000
  const hhmm = (minutes: number) => new Date(Math.abs(minutes) * 60_000).toISOString().slice(11, 16)
  const zone = offset === null ? '' : offset === 0 ? 'Z' : `${offset < 0 ? '-' : '+'}${hhmm(offset)}`
  return { local, iso: `${new Date(local).toISOString().slice(0, 19)}${zone}` }
}
/** The tests' runs are in UTC (TZ), unless one says otherwise: a modification time is shown in it. */
const UTC = { env: { TZ: 'UTC' } }
const expected = [
  ...DATED.map(({ name, taken, offset }) => ({ name, taken, source: 'exif-original', ...clock(taken, offset) })),
  { ...NAMED, source: 'file-name', ...clock(NAMED.taken, null) },
  { ...PLAIN, source: 'file-modified', ...clock(PLAIN.taken, 0) },
].sort((a, b) => b.local - a.local)

describe('the date taken', { timeout: 120_000 }, () => {
  it('ls --json lists the files newest first with the date taken at the clock where each was taken, and its source', async () => {
    const run = await photos(home, ['ls', ALBUM, '--json'], UTC)
    expectOk(run)
    const files = events(run).filter((e) => e.event === 'file')
    expect(files.map((e) => [e.name, e.taken, e.taken_source])).toEqual(expected.map((e) => [e.name, e.iso, e.source]))
    // The examples of docs/photos.md: a stated offset, a floating wall clock (g.jpg's EXIF has no offset tag, a file name).
    expect(files.find((e) => e.name === 'k.jpg')!.taken).toBe('2019-07-31T23:30:00-07:00')
    expect(files.find((e) => e.name === 'g.jpg')!.taken).toBe('2020-09-09T23:15:00')
    expect(files.find((e) => e.name === NAMED.name)!.taken).toBe('2023-06-10T08:15:00')
    // Every one is the moment it was taken (a floating one read as UTC).
    const moment = (taken: string) => Date.parse(/T[\d:]+$/.test(taken) ? `${taken}Z` : taken)
    for (const file of expected) expect(moment(String(files.find((e) => e.name === file.name)!.taken)), file.name).toBe(file.taken)
  })

  it("shows a modification time in the viewer's time zone (TZ), and a photo's own clock whatever the zone", async () => {
    const run = await photos(home, ['ls', ALBUM, '--json'], { env: { TZ: 'America/New_York' } })
    expectOk(run)
    const files = events(run).filter((e) => e.event === 'file')
    const taken = (name: string) => files.find((e) => e.name === name)!.taken
    expect(taken(PLAIN.name)).toBe('2014-08-15T08:00:00-04:00') // 12:00 UTC, in New York's summer time
    expect(taken('k.jpg')).toBe('2019-07-31T23:30:00-07:00')
    expect(taken(NAMED.name)).toBe('2023-06-10T08:15:00')
    expect(files.map((e) => e.name)).toEqual(expected.map((e) => e.name))
  })

  it('ls prints them newest first under a heading for each month of the clock where each was taken, in columns under one header', async () => {
    const run = await photos(home, ['ls', ALBUM], UTC)
    expectOk(run)
    const lines = run.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^NAME +SIZE +TYPE +DIMENSIONS +TAKEN +FROM +FAV$/)
    expect(lines.at(-1)).toMatch(/^13 files, /)
    // Below the header: each month a blank line, its heading, its files; a blank line before the total.
    const months: { heading: string; names: string[] }[] = []
    for (const line of lines.slice(1, -2)) {
      if (line === '') months.push({ heading: '', names: [] })
      else if (months.at(-1)!.heading === '') months.at(-1)!.heading = line
      else months.at(-1)!.names.push(line.split(/ {2,}/)[0]!)
    }
    const wanted: { heading: string; names: string[] }[] = []
    for (const file of expected) {
      const heading = MONTH.format(file.local)
      if (wanted.at(-1)?.heading === heading) wanted.at(-1)!.names.push(file.name)
      else wanted.push({ heading, names: [file.name] })
    }
    expect(months).toEqual(wanted)
    expect(months.map((m) => m.heading).slice(0, 3)).toEqual(['October 2024', 'June 2023', 'February 2022'])
    // k.jpg, 1 August in UTC, is July's newest: 23:30 on the 31st where it was taken.
    expect(months.find((m) => m.heading === 'July 2019')!.names).toEqual(['k.jpg', 'trip/a.jpg', 'a.jpg'])
    expect(months.some((m) => m.heading === 'August 2019')).toBe(false)
    // Every file's line starts its columns where the header does.
    const header = lines[0]!
    for (const file of expected) {
      const line = lines.find((l) => l.startsWith(`${file.name}  `))!
      expect(line.indexOf('image/jpeg')).toBe(header.indexOf('TYPE'))
      expect(line.slice(header.indexOf('TAKEN'))).toBe(`${new Date(file.local).toISOString().slice(0, 19).replace('T', ' ')}  ${file.source}`)
    }
  })

  it('restore --layout date writes each file into the YYYY/MM folder of its date, a second of the same name beside it; again, nothing to do', async () => {
    const dest = path.join(work, 'by-date')
    const run = await photos(home, ['restore', ALBUM, dest, '--layout', 'date', '--json'], UTC)
    expectOk(run)
    const restored = events(run).filter((e) => e.event === 'file')
    expect(restored.map((e) => e.outcome)).toEqual(Array(13).fill('restored'))
    const paths = restored.map((e) => String(e.path))
    // trip/a.jpg lands beside a.jpg (July 2019 both): the first in the album's order keeps the name, as restore names any two files of one name.
    const collided = paths.find((at) => at.startsWith('2019/07/a ('))
    expect(collided).toMatch(/^2019\/07\/a \([0-9a-f]{8}\)\.jpg$/)
    const dated = (name: string, local: number) => `${new Date(local).toISOString().slice(0, 7).replace('-', '/')}/${path.posix.basename(name)}`
    expect(paths.filter((at) => at !== collided).sort()).toEqual(
      expected
        .filter((file) => file.name !== 'trip/a.jpg')
        .map((file) => dated(file.name, file.local))
        .sort(),
    )
    expect(paths).toContain('2019/07/k.jpg')

    const years = (await readdir(dest)).sort()
    expect(years).toEqual(['2014', '2015', '2016', '2017', '2018', '2019', '2020', '2021', '2022', '2023', '2024'])
    expect((await readdir(path.join(dest, '2019'))).sort()).toEqual(['07'])
    expect((await readdir(path.join(dest, '2019', '07'))).sort()).toEqual(['a.jpg', collided!.slice('2019/07/'.length), 'k.jpg'].sort())
    // Byte for byte the files backed up (a.jpg was backed up before trip/a.jpg).
    expect(Buffer.compare(await readFile(path.join(dest, '2019', '07', 'a.jpg')), await readFile(path.join(folder, 'a.jpg')))).toBe(0)
    expect(Buffer.compare(await readFile(path.join(dest, collided!)), await readFile(path.join(folder, 'trip', 'a.jpg')))).toBe(0)
    expect(Buffer.compare(await readFile(path.join(dest, '2023', '06', NAMED.name)), await readFile(path.join(folder, NAMED.name)))).toBe(0)

    const again = await photos(home, ['restore', ALBUM, dest, '--layout', 'date', '--json'], UTC)
    expectOk(again)
    expect(events(again).at(-1)).toMatchObject({ event: 'summary', restored: 0, unchanged: 13 })
  })

  it('restore refuses a layout it does not know', async () => {
    const run = await photos(home, ['restore', ALBUM, path.join(work, 'nowhere'), '--layout', 'month'])
    expect(run.code).toBe(2)
    expect(run.stderr).toMatch(/--layout takes path or date/)
  })

  it('a photo stored by an older client (metadata version 2) is dated by the capture time it recorded, without a new upload', async () => {
    const library = await accountLibrary(home, new CofferClient({ baseUrl: server.url }), email)
    const album = (await findAlbum(library, ALBUM))!
    const older = path.join(work, 'older-client.jpg')
    await writePhoto(older, { format: 'jpeg', width: 64, height: 48, seed: 30 })
    const source = memorySource(await readFile(older), { name: 'older-client.jpg', type: 'image/jpeg', modified: null })
    // A describe that names no source, as before version 3: the metadata is written as version 2, without the camera facts (version 3 only).
    const recorded = Date.UTC(2013, 3, 3, 3, 3, 3)
    const stored = await backupFile({ ...library, albumId: album.albumId }, source, {
      describe: async () => ({ captured: recorded, width: 64, height: 48, camera: { make: 'Older' }, derivatives: [] }),
    })
    expect(stored.status).toBe('stored')
    const entries = await liveEntries(library.client, album.albumId)
    const metadataOf = async (assetId: string) =>
      (await restoreFile({ ...library, albumId: album.albumId }, entries.find((entry) => entry.asset_id === assetId)!)).metadata
    expect(await metadataOf(stored.assetId)).not.toHaveProperty('camera')
    // What coffer-photos backed up carries the camera facts its EXIF states (test/support/photos.ts writes a make and model).
    const opened = await Promise.all(
      entries.filter((entry) => entry.asset_id !== stored.assetId).map((entry) => restoreFile({ ...library, albumId: album.albumId }, entry).catch(() => null)),
    )
    const dated = opened.find((file) => file?.metadata.name === 'f.jpg')!
    expect(dated.metadata.camera).toEqual({ make: 'Coffer', model: 'Test photo' })
    const run = await photos(home, ['ls', ALBUM, '--json'], UTC)
    expectOk(run)
    const files = events(run).filter((e) => e.event === 'file')
    // Whether its writer applied an offset is not known: shown as it was stored, floating.
    expect(files.at(-1)).toMatchObject({ name: 'older-client.jpg', taken: '2013-04-03T03:03:03', taken_source: 'exif' })
  })
})
