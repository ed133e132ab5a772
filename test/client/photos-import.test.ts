// `coffer-photos import takeout` (docs/photos.md, "Importing from Google Photos"; decision 0071),
// in-process against a real server, on Takeout exports built here from the documented layout
// (test/support/takeout.ts): each naming rule a sidecar can follow (the supplemental-metadata
// name and the older one, the duplicate index, a name clipped at 46 code units, an edited copy,
// a Live Photo's video, a sidecar in another archive than its photo), each field a sidecar gives
// (the date taken with the offset it is shown at, the place, the description, the favourite
// mark, the trash), the albums recreated with a photo in several of them stored once, and the
// report; run again, nothing is sent.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PASSWORD, uniqueEmail } from '../support/actors.ts'
import { writeOpaque, writePhoto, type PhotoOptions } from '../support/photos.ts'
import { events, expectOk, photos, type PhotosRun, listedFiles, summaryOf } from '../support/photos-cli.ts'
import { startServer, type TestServer } from '../support/server.ts'
import { albumMetadataJson, bytesOf, sidecarJson, writeTakeout, type ExportItem } from '../support/takeout.ts'

let server: TestServer
let work: string
let laptop: string

/** The importing device's zone: what a date without a place of its own is given (July: -04:00). */
const ENV = { env: { TZ: 'America/New_York', COFFER_FFMPEG: 'off' } }
const YEAR = 'Photos from 2019'
const ALBUM_FOLDER = 'Trip to Rome _'
const ALBUM = 'Trip to Rome 🇮🇹'
const ROME = { latitude: 41.8902102, longitude: 12.4922309 }
const LONG_NAME = `${'Screenshot_20190704-123456_Google_Maps_app'}x.jpg` // 47 code units: its sidecar's name is clipped
const at = (iso: string): number => Date.parse(iso)

beforeAll(async () => {
  server = await startServer()
  work = await mkdtemp(path.join(tmpdir(), 'coffer-photos-import-'))
  laptop = path.join(work, 'laptop')
  expectOk(await photos(laptop, ['login', server.url, '--register', '--email', uniqueEmail('import'), '--password-stdin'], { stdin: PASSWORD }))
  expectOk(await photos(laptop, ['setup', '--yes', '--device-name', 'Laptop']))
}, 120_000)

afterAll(async () => {
  await server?.close()
  await rm(work, { recursive: true, force: true })
})

let seed = 0
async function jpeg(options: Partial<PhotoOptions> = {}): Promise<Uint8Array> {
  const file = path.join(work, 'made', `${++seed}.jpg`)
  await writePhoto(file, { format: 'jpeg', width: 24, height: 16, seed, ...options })
  return bytesOf(file)
}

const listed = (album: string) => listedFiles(laptop, album, ENV)

describe('coffer-photos import takeout', () => {
  let first: PhotosRun
  let archives: string[]

  beforeAll(async () => {
    const rome = await jpeg({ captured: new Date('2019-07-04T12:34:56Z'), utcOffsetMinutes: null })
    const video = path.join(work, 'made', 'IMG_0005.MP4')
    await writeOpaque(video, 3000, 5)
    const items: ExportItem[] = [
      // The supplemental-metadata name; the EXIF wall clock without an offset (12:34:56) and the sidecar's moment (10:34:56 UTC) give +02:00.
      { folder: YEAR, name: 'IMG_0001.jpg', data: rome },
      {
        folder: YEAR,
        name: 'IMG_0001.jpg.supplemental-metadata.json',
        data: sidecarJson({ title: 'IMG_0001.jpg', takenMs: at('2019-07-04T10:34:56Z'), geo: ROME, description: 'The Colosseum\nat noon', favorited: true }),
      },
      // The older name; no EXIF date: the importing device's zone at that moment.
      { folder: YEAR, name: 'IMG_0002.jpg', data: await jpeg() },
      { folder: YEAR, name: 'IMG_0002.jpg.json', data: sidecarJson({ title: 'IMG_0002.jpg', takenMs: at('2019-07-05T18:00:00Z') }) },
      // Takeout's duplicate index: the photo's (1) goes after the extension in its sidecar's name.
      { folder: YEAR, name: 'IMG_0003.jpg', data: await jpeg() },
      { folder: YEAR, name: 'IMG_0003.jpg.json', data: sidecarJson({ title: 'IMG_0003.jpg', takenMs: at('2019-07-06T08:00:00Z') }) },
      { folder: YEAR, name: 'IMG_0003(1).jpg', data: await jpeg() },
      { folder: YEAR, name: 'IMG_0003.jpg(1).json', data: sidecarJson({ title: 'IMG_0003.jpg', takenMs: at('2019-07-07T08:00:00Z') }) },
      // A name of 47 code units: its sidecar's is clipped at 46 before ".json".
      { folder: YEAR, name: LONG_NAME, data: await jpeg() },
      {
        folder: YEAR,
        name: `${`${LONG_NAME}.supplemental-metadata`.slice(0, 46)}.json`,
        data: sidecarJson({ title: LONG_NAME, takenMs: at('2019-07-08T08:00:00Z') }),
      },
      // An edited copy has no sidecar of its own: it takes its original's.
      { folder: YEAR, name: 'IMG_0004.jpg', data: await jpeg() },
      { folder: YEAR, name: 'IMG_0004-edited.jpg', data: await jpeg() },
      { folder: YEAR, name: 'IMG_0004.jpg.supplemental-metadata.json', data: sidecarJson({ title: 'IMG_0004.jpg', takenMs: at('2019-07-09T08:00:00Z') }) },
      // A Live Photo: the video shares the photo's sidecar.
      { folder: YEAR, name: 'IMG_0005.jpg', data: await jpeg() },
      { folder: YEAR, name: 'IMG_0005.MP4', data: await bytesOf(video) },
      { folder: YEAR, name: 'IMG_0005.jpg.json', data: sidecarJson({ title: 'IMG_0005.jpg', takenMs: at('2019-07-10T08:00:00Z') }) },
      // No sidecar: its EXIF date at its own offset.
      { folder: YEAR, name: 'IMG_0006.jpg', data: await jpeg({ captured: new Date('2019-07-11T09:00:00Z'), utcOffsetMinutes: 60 }) },
      // In Google Photos' trash: left out.
      { folder: YEAR, name: 'IMG_0007.jpg', data: await jpeg() },
      { folder: YEAR, name: 'IMG_0007.jpg.json', data: sidecarJson({ title: 'IMG_0007.jpg', takenMs: at('2019-07-12T08:00:00Z'), trashed: true }) },
      // The photo in the first archive, its sidecar in the second.
      { folder: YEAR, name: 'IMG_0008.jpg', data: await jpeg() },
      { folder: YEAR, name: 'IMG_0008.jpg.json', data: sidecarJson({ title: 'IMG_0008.jpg', takenMs: at('2019-07-13T08:00:00Z') }), archive: 1 },
      // The album: its title from metadata.json (the folder's name has the flag replaced), a copy of IMG_0001 and a photo of its own.
      { folder: ALBUM_FOLDER, name: 'metadata.json', data: albumMetadataJson(ALBUM), archive: 1 },
      { folder: ALBUM_FOLDER, name: 'IMG_0001.jpg', data: rome, archive: 1 },
      {
        folder: ALBUM_FOLDER,
        name: 'IMG_0001.jpg.supplemental-metadata.json',
        data: sidecarJson({ title: 'IMG_0001.jpg', takenMs: at('2019-07-04T10:34:56Z'), geo: ROME, description: 'The Colosseum\nat noon', favorited: true }),
        archive: 1,
      },
      { folder: ALBUM_FOLDER, name: 'IMG_0100.jpg', data: await jpeg(), archive: 1 },
      { folder: ALBUM_FOLDER, name: 'IMG_0100.jpg.json', data: sidecarJson({ title: 'IMG_0100.jpg', takenMs: at('2019-07-14T08:00:00Z') }), archive: 1 },
      // The export's own files, and a sidecar whose photo is not in the export.
      { folder: '', name: 'print-subscriptions.json', data: '{}' },
      { folder: YEAR, name: 'IMG_9999.jpg.json', data: sidecarJson({ title: 'IMG_9999.jpg', takenMs: at('2019-07-15T08:00:00Z') }) },
    ]
    archives = await writeTakeout(work, items)
    first = await photos(laptop, ['import', 'takeout', ...archives, '--json'], ENV)
  }, 120_000)

  it('stores every photo and video once, says how each met its sidecar, and leaves out the trash', () => {
    expectOk(first)
    const files = events(first).filter((e) => e.event === 'file')
    expect(files.map((e) => [e.name, e.album, e.outcome, e.sidecar]).sort()).toEqual(
      [
        [`${YEAR}/IMG_0001.jpg`, 'Google Photos', 'stored', 'own'],
        [`${YEAR}/IMG_0002.jpg`, 'Google Photos', 'stored', 'own'],
        [`${YEAR}/IMG_0003.jpg`, 'Google Photos', 'stored', 'own'],
        [`${YEAR}/IMG_0003(1).jpg`, 'Google Photos', 'stored', 'own'],
        [`${YEAR}/${LONG_NAME}`, 'Google Photos', 'stored', 'own'],
        [`${YEAR}/IMG_0004.jpg`, 'Google Photos', 'stored', 'own'],
        [`${YEAR}/IMG_0004-edited.jpg`, 'Google Photos', 'stored', 'edited'],
        [`${YEAR}/IMG_0005.jpg`, 'Google Photos', 'stored', 'own'],
        [`${YEAR}/IMG_0005.MP4`, 'Google Photos', 'stored', 'live'],
        [`${YEAR}/IMG_0006.jpg`, 'Google Photos', 'stored', 'none'],
        [`${YEAR}/IMG_0008.jpg`, 'Google Photos', 'stored', 'own'],
        [`${ALBUM_FOLDER}/IMG_0100.jpg`, ALBUM, 'stored', 'own'],
      ].sort(),
    )
    const summary = summaryOf(first)
    expect(summary).toMatchObject({
      photos: 13,
      imported: 12,
      already_stored: 0,
      failed: 0,
      with_sidecar: { own: 10, edited: 1, live: 1 }, // the trashed photo's own too
      without_sidecar: 1,
      sidecar_unreadable: 0,
      skipped: { "in Google Photos' trash": 1, 'a file about the whole export, not about a photo': 1 },
      albums: ['Google Photos', ALBUM],
      copies: { added: 1, present: 0, failed: 0 },
    })
    expect(summary.unmatched).toEqual([`Takeout/Google Photos/${YEAR}/IMG_9999.jpg.json`])
    expect(first.stdout).not.toContain('IMG_0007')
  })

  it("dates each photo by its sidecar, at the offset its EXIF clock implies or the importing device's zone; a photo without one by its EXIF", async () => {
    const library = await listed('Google Photos')
    const dated = (name: string) => {
      const file = library.get(`${YEAR}/${name}`)!
      return [file.taken, file.taken_source, file.captured, file.captured_offset]
    }
    expect(dated('IMG_0001.jpg')).toEqual(['2019-07-04T12:34:56+02:00', 'takeout', at('2019-07-04T10:34:56Z'), 120])
    expect(dated('IMG_0002.jpg')).toEqual(['2019-07-05T14:00:00-04:00', 'takeout', at('2019-07-05T18:00:00Z'), -240])
    expect(dated('IMG_0003.jpg')[2]).toBe(at('2019-07-06T08:00:00Z'))
    expect(dated('IMG_0003(1).jpg')[2]).toBe(at('2019-07-07T08:00:00Z'))
    expect(dated(LONG_NAME)[2]).toBe(at('2019-07-08T08:00:00Z'))
    expect(dated('IMG_0004.jpg')[2]).toBe(at('2019-07-09T08:00:00Z'))
    expect(dated('IMG_0004-edited.jpg')[2]).toBe(at('2019-07-09T08:00:00Z'))
    expect(dated('IMG_0005.jpg')[2]).toBe(at('2019-07-10T08:00:00Z'))
    expect(dated('IMG_0005.MP4').slice(1, 3)).toEqual(['takeout', at('2019-07-10T08:00:00Z')])
    expect(dated('IMG_0006.jpg')).toEqual(['2019-07-11T10:00:00+01:00', 'exif-original', at('2019-07-11T09:00:00Z'), 60])
    expect(dated('IMG_0008.jpg')[2]).toBe(at('2019-07-13T08:00:00Z'))
    expect(library.size).toBe(11)
  })

  it('keeps the place, the description (searched as the name is) and the favourite mark; an album has its title and the photo copied into it, not sent again', async () => {
    const library = await listed('Google Photos')
    const rome = library.get(`${YEAR}/IMG_0001.jpg`)!
    expect(rome).toMatchObject({ favourite: true, description: 'The Colosseum\nat noon' })
    expect(rome.location).toEqual([ROME.latitude, ROME.longitude])
    expect(library.get(`${YEAR}/IMG_0002.jpg`)).toMatchObject({ favourite: false, description: null, location: null })
    const album = await listed(ALBUM)
    expect([...album.keys()].sort()).toEqual([`${YEAR}/IMG_0001.jpg`, `${ALBUM_FOLDER}/IMG_0100.jpg`])
    const copy = album.get(`${YEAR}/IMG_0001.jpg`)!
    expect(copy).toMatchObject({ favourite: true, description: 'The Colosseum\nat noon', captured: rome.captured, taken_source: 'takeout' })
    expect(album.get(`${ALBUM_FOLDER}/IMG_0100.jpg`)!.captured).toBe(at('2019-07-14T08:00:00Z'))
    // Stored once: the copy's file was never sent; only the album's own photo was.
    const sent = events(first).filter((e) => e.event === 'file' && e.album === ALBUM)
    expect(sent.map((e) => e.name)).toEqual([`${ALBUM_FOLDER}/IMG_0100.jpg`])
    // The description is searched as the name is: the photo, and its copy in the album.
    const search = await photos(laptop, ['search', 'colosseum noon', '--json'], ENV)
    expectOk(search)
    const hits = events(search).filter((e) => e.event === 'hit')
    expect(hits.map((hit) => [hit.album, hit.name]).sort()).toEqual([
      ['Google Photos', `${YEAR}/IMG_0001.jpg`],
      [ALBUM, `${YEAR}/IMG_0001.jpg`],
    ])
    // Kept in the device's index sealed, as names are.
    const state = Buffer.concat(
      await Promise.all(['state.sqlite', 'state.sqlite-wal'].map((file) => readFile(path.join(laptop, file)).catch(() => Buffer.alloc(0)))),
    )
    expect(state.length).toBeGreaterThan(8192)
    expect(state.includes(Buffer.from('Colosseum')), 'the caption in plain').toBe(false)
  })

  it('leaves out the place with --no-location', async () => {
    const other = path.join(work, 'other')
    expectOk(await photos(other, ['login', server.url, '--register', '--email', uniqueEmail('import-noloc'), '--password-stdin'], { stdin: PASSWORD }))
    expectOk(await photos(other, ['setup', '--yes', '--device-name', 'Other']))
    expectOk(await photos(other, ['import', 'takeout', ...archives, '--no-location', '--album', 'From Google'], ENV))
    const run = await photos(other, ['ls', 'From Google', '--json'], ENV)
    const rome = events(run).find((e) => e.name === `${YEAR}/IMG_0001.jpg`)!
    expect(rome).toMatchObject({ location: null, description: 'The Colosseum\nat noon', taken_source: 'takeout' })
  })

  it('run again, finds everything stored and sends nothing', async () => {
    const again = await photos(laptop, ['import', 'takeout', ...archives, '--json'], ENV)
    expectOk(again)
    expect(summaryOf(again)).toMatchObject({ imported: 0, already_stored: 12, failed: 0, sent_bytes: 0, copies: { added: 0, present: 1, failed: 0 } })
  })

  it('is a usage error without the kind of export or without archives', async () => {
    for (const args of [['import'], ['import', 'photos', 'x.zip'], ['import', 'takeout']]) {
      const run = await photos(laptop, args)
      expect(run.code, args.join(' ')).toBe(2)
      expect(run.stderr).toMatch(/import/)
    }
  })
})
