// `coffer-photos import takeout` at size (issue 42, "Done means"): a mixed export of photos and
// videos over three archives (IMPORT_ITEMS: 300 in `npm test`, 1,000 in `npm run test:long`,
// docs/testing.md), every naming rule a sidecar follows in turn (the supplemental-metadata name,
// the older one, the duplicate index, a name clipped at 46 code units, an edited copy, a Live
// Photo's video, none at all), sidecars in another archive than their photos, a tenth of the
// photos in albums too; after the import every photo's date is checked against its sidecar (or
// its EXIF). Then a kill: the real binary SIGKILLed in the middle of an import of the export's
// first photos (150 in `npm test`, 300 in `npm run test:long`) on another account, once it has
// stored 100, and a second run that finishes it storing nothing twice.
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PASSWORD, uniqueEmail } from '../support/actors.ts'
import { randomNumbers, writeOpaque, writePhoto } from '../support/photos.ts'
import { events, expectOk, photos, spawnPhotos, listedFiles, summaryOf } from '../support/photos-cli.ts'
import { startServer, type TestServer } from '../support/server.ts'
import { albumMetadataJson, bytesOf, sidecarJson, writeTakeout, type ExportItem } from '../support/takeout.ts'

/** How many photos and videos the export holds (its copies in albums not counted): at least this many. */
const ITEMS = Number(process.env.IMPORT_ITEMS || 300)
const YEAR = 'Photos from 2021'
const ALBUMS = ['Holidays', 'Family']
const ENV = { env: { TZ: 'UTC', COFFER_FFMPEG: 'off' } }
const DAY = 86_400_000
const FIRST_DAY = Date.UTC(2021, 0, 1, 9, 0, 0)

let server: TestServer
let work: string
let archives: string[]
/** The first photos of the same export alone, for the kill: as many photos as KILLED_ITEMS, their archives, and their names. */
const KILLED_ITEMS = process.env.COFFER_TEST_LONG === '1' ? 300 : 150
let killedArchives: string[]
let killedNames: string[]

/** What each stored photo's date must be: by its name as stored ("Photos from 2021/IMG_0001.jpg"). */
const expected = new Map<string, { captured: number; source: string }>()
/** The photos also in an album, by album. */
const inAlbums = new Map<string, string[]>(ALBUMS.map((album) => [album, []]))

async function account(name: string): Promise<string> {
  const home = path.join(work, name)
  expectOk(await photos(home, ['login', server.url, '--register', '--email', uniqueEmail(name), '--password-stdin'], { stdin: PASSWORD }))
  expectOk(await photos(home, ['setup', '--yes', '--device-name', name]))
  return home
}

beforeAll(async () => {
  server = await startServer()
  work = await mkdtemp(path.join(tmpdir(), 'coffer-photos-import-mixed-'))
  // One small JPEG with an EXIF date (what a photo without a sidecar is dated by); each photo is
  // it with bytes of its own after the image's end, which decoders ignore: 1,000 distinct photos at once.
  const base = path.join(work, 'base.jpg')
  const exifDate = Date.UTC(2020, 5, 1, 12, 0, 0)
  await writePhoto(base, { format: 'jpeg', width: 16, height: 16, seed: 1, captured: new Date(exifDate), utcOffsetMinutes: 0 })
  const jpeg = await bytesOf(base)
  const video = path.join(work, 'base.mp4')
  await writeOpaque(video, 2048, 2)
  const mp4 = await bytesOf(video)
  const distinct = (bytes: Uint8Array, n: number, longer = 0): Uint8Array => {
    const out = new Uint8Array(bytes.length + 8 + longer)
    out.set(bytes)
    new DataView(out.buffer).setFloat64(bytes.length, n)
    return out
  }
  const random = randomNumbers(42)
  const archiveOf = () => Math.floor(random() * 3)
  const items: ExportItem[] = []
  const add = (name: string, data: Uint8Array, sidecar: { name: string; takenMs: number } | null, albums: readonly string[] = []) => {
    const archive = archiveOf()
    items.push({ folder: YEAR, name, data, archive })
    if (sidecar !== null) {
      // A fifth of the sidecars in another archive than their photo.
      const sidecarArchive = random() < 0.2 ? (archive + 1) % 3 : archive
      items.push({ folder: YEAR, name: sidecar.name, data: sidecarJson({ title: name, takenMs: sidecar.takenMs }), archive: sidecarArchive })
    }
    for (const album of albums) {
      items.push({ folder: album, name, data, archive: archiveOf() })
      if (sidecar !== null)
        items.push({ folder: album, name: sidecar.name, data: sidecarJson({ title: name, takenMs: sidecar.takenMs }), archive: archiveOf() })
      inAlbums.get(album)!.push(`${YEAR}/${name}`)
    }
    expected.set(`${YEAR}/${name}`, sidecar === null ? { captured: exifDate, source: 'exif-original' } : { captured: sidecar.takenMs, source: 'takeout' })
  }
  let n = 0
  let killedCut = 0
  let killedCount = 0
  while (expected.size < ITEMS) {
    if (killedCut === 0 && expected.size >= KILLED_ITEMS) [killedCut, killedCount] = [items.length, expected.size]
    const takenMs = FIRST_DAY + n * DAY + (n % 7) * 3_600_000
    const albums = n % 50 === 13 ? ALBUMS : n % 10 === 3 ? [ALBUMS[n % 2]!] : []
    const id = String(n).padStart(4, '0')
    switch (n % 7) {
      case 0:
        add(`IMG_${id}.jpg`, distinct(jpeg, n), { name: `IMG_${id}.jpg.supplemental-metadata.json`, takenMs }, albums)
        break
      case 1:
        add(`IMG_${id}.jpg`, distinct(jpeg, n), { name: `IMG_${id}.jpg.json`, takenMs }, albums)
        break
      case 2:
        // Two photos of one name: the second gets Takeout's index, its sidecar the index after the
        // extension. Of another size, as two photos are: two of one name and size in a folder could
        // not be told apart from their album copies (takeout.ts groupCopies).
        add(`DUP_${id}.jpg`, distinct(jpeg, n), { name: `DUP_${id}.jpg.supplemental-metadata.json`, takenMs }, albums)
        add(`DUP_${id}(1).jpg`, distinct(jpeg, n, 1), { name: `DUP_${id}.jpg.supplemental-metadata(1).json`, takenMs: takenMs + 60_000 })
        break
      case 3: {
        const name = `PXL_${id}_long_name_from_a_phone_camera_app.jpg` // 45 code units and more: the sidecar's name is clipped
        add(name, distinct(jpeg, n), { name: `${`${name}.supplemental-metadata`.slice(0, 46)}.json`, takenMs }, albums)
        break
      }
      case 4:
        // An edited copy shares its original's sidecar: both have its date.
        add(`EDT_${id}.jpg`, distinct(jpeg, n), { name: `EDT_${id}.jpg.json`, takenMs }, albums)
        items.push({ folder: YEAR, name: `EDT_${id}-edited.jpg`, data: distinct(jpeg, n + 0.25), archive: archiveOf() })
        expected.set(`${YEAR}/EDT_${id}-edited.jpg`, { captured: takenMs, source: 'takeout' })
        break
      case 5:
        // A Live Photo: its video has no sidecar of its own.
        add(`LIVE_${id}.jpg`, distinct(jpeg, n), { name: `LIVE_${id}.jpg.supplemental-metadata.json`, takenMs }, albums)
        items.push({ folder: YEAR, name: `LIVE_${id}.MP4`, data: distinct(mp4, n), archive: archiveOf() })
        expected.set(`${YEAR}/LIVE_${id}.MP4`, { captured: takenMs, source: 'takeout' })
        break
      default:
        // No sidecar: the file's own EXIF date.
        add(`NOSC_${id}.jpg`, distinct(jpeg, n), null, albums)
    }
    n++
  }
  // An export of KILLED_ITEMS or fewer is killed whole.
  if (killedCut === 0) [killedCut, killedCount] = [items.length, expected.size]
  const albumMetadata = ALBUMS.map((album, index) => ({ folder: album, name: 'metadata.json', data: albumMetadataJson(album), archive: index }))
  archives = await writeTakeout(work, [...items, ...albumMetadata])
  killedNames = [...expected.keys()].slice(0, killedCount)
  const killedFolder = path.join(work, 'first-photos')
  await mkdir(killedFolder)
  killedArchives = await writeTakeout(killedFolder, [...items.slice(0, killedCut), ...albumMetadata])
}, 120_000)

afterAll(async () => {
  await server?.close()
  await rm(work, { recursive: true, force: true })
})

/** `ls <album> --json`'s files. */
const listed = async (home: string, album: string) => [...(await listedFiles(home, album, ENV)).values()]

describe(`import takeout, a mixed export of ${ITEMS} photos and videos`, () => {
  it('stores each once and dates every one by its sidecar (or, without one, its EXIF); the albums hold their photos', async () => {
    const home = await account('mixed')
    const run = await photos(home, ['import', 'takeout', ...archives, '--json'], ENV)
    expectOk(run)
    const summary = summaryOf(run)
    expect(summary).toMatchObject({ photos: expected.size, imported: expected.size, failed: 0, sidecar_unreadable: 0 })
    expect(summary.unmatched).toEqual([])
    const library = await listed(home, 'Google Photos')
    expect(library).toHaveLength(expected.size)
    const wrong = library.filter((file) => {
      const want = expected.get(file.name as string)
      return want === undefined || file.captured !== want.captured || file.taken_source !== want.source
    })
    expect(wrong.map((file) => [file.name, file.captured, file.taken_source, expected.get(file.name as string)])).toEqual([])
    for (const album of ALBUMS) {
      const files = await listed(home, album)
      expect(files.map((file) => file.name).sort(), album).toEqual([...inAlbums.get(album)!].sort())
      for (const file of files) expect(file.captured, `${album}: ${file.name}`).toBe(expected.get(file.name as string)!.captured)
    }
    // The album copies were added, not sent: one file event per photo, none for an album.
    expect(events(run).filter((e) => e.event === 'file')).toHaveLength(expected.size)
    expect(summary.copies).toEqual({ added: [...inAlbums.values()].reduce((sum, list) => sum + list.length, 0), present: 0, failed: 0 })
  }, 600_000)

  it('killed in the middle (SIGKILL), run again: finishes, and nothing is stored twice', async () => {
    const home = await account('killed')
    const killed = spawnPhotos(home, ['import', 'takeout', ...killedArchives, '--json', '--concurrency', '2'], ENV)
    const storedBefore = (): string[] =>
      events({ stdout: killed.stdout().slice(0, killed.stdout().lastIndexOf('\n') + 1) })
        .filter((e) => e.event === 'file' && e.outcome === 'stored')
        .map((e) => e.name as string)
    const until = Date.now() + 300_000
    while (storedBefore().length < 100 && !killed.ended() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20))
    killed.child.kill('SIGKILL')
    const first = await killed.done
    expect(first.signal, first.stderr).toBe('SIGKILL')
    const storedFirst = storedBefore()
    expect(storedFirst.length).toBeGreaterThanOrEqual(100)
    expect(storedFirst.length).toBeLessThan(killedNames.length)

    const again = await photos(home, ['import', 'takeout', ...killedArchives, '--json'], ENV)
    expectOk(again)
    const files = events(again).filter((e) => e.event === 'file')
    const storedAgain = files.filter((e) => e.outcome === 'stored').map((e) => e.name as string)
    // What the first run stored is found (its local index, or the album by content for a photo the kill caught before its index row): never stored again.
    expect(storedAgain.filter((name) => storedFirst.includes(name))).toEqual([])
    expect(summaryOf(again)).toMatchObject({ failed: 0, photos: killedNames.length })
    // Each photo was stored by one of the two runs: the second says so, or finds it stored (unchanged: by its index row; present: by its content).
    const outcomes = new Map(files.map((e) => [e.name as string, e.outcome]))
    const unaccounted = killedNames.filter((name) => !storedFirst.includes(name) && !['stored', 'unchanged', 'present'].includes(outcomes.get(name) as string))
    expect(unaccounted).toEqual([])
    expect(files.filter((e) => e.outcome === 'unchanged' && !storedFirst.includes(e.name as string)).length).toBeLessThanOrEqual(2) // in flight at the kill, committed, unprinted
    const library = await listed(home, 'Google Photos')
    expect(library.map((file) => file.name).sort()).toEqual([...killedNames].sort())
    for (const album of ALBUMS)
      expect((await listed(home, album)).map((file) => file.name).sort(), album).toEqual(
        inAlbums
          .get(album)!
          .filter((name) => killedNames.includes(name))
          .sort(),
      )
  }, 600_000)
})
