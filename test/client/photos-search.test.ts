// `coffer-photos search` (docs/photos.md, "Searching"; decision 0070), in-process against a real
// server. Photos with known EXIF dates, cameras and GPS positions (kept with --location), a video,
// a favourite, in two albums, backed up by one device and searched from a second one that never
// saw their files: each kind of query finds exactly its photos (a name, a year, a month of a year,
// a day, a range, a camera, an album, favourites, a place named from the shipped table, videos);
// the index is brought up to date from where it stopped (a new photo is the only one opened, a
// photo deleted for good or moved to Recently deleted is no longer found, a favourite unmarked
// is opened again); and the index the device keeps holds no name, camera or place in plain.
import { readFile, rm, mkdtemp, utimes } from 'node:fs/promises'
import { DatabaseSync } from 'node:sqlite'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PASSWORD, uniqueEmail } from '../support/actors.ts'
import { writeOpaque, writePhoto } from '../support/photos.ts'
import { FAMILY, ICELAND, VIDEO } from '../support/search-photos.ts'
import { events, expectOk, pairedDevice, photos, type PhotosRun } from '../support/photos-cli.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
let work: string
let laptop: string
let phone: string
let iceland: string
let family: string

beforeAll(async () => {
  server = await startServer()
  work = await mkdtemp(path.join(tmpdir(), 'coffer-photos-search-'))
  laptop = path.join(work, 'laptop')
  phone = path.join(work, 'phone')
  const email = uniqueEmail('search')
  expectOk(await photos(laptop, ['login', server.url, '--register', '--email', email, '--password-stdin'], { stdin: PASSWORD }))
  expectOk(await photos(laptop, ['setup', '--yes', '--device-name', 'Laptop']))
  iceland = path.join(work, 'Iceland')
  family = path.join(work, 'Family')
  const small = { format: 'jpeg', width: 48, height: 32 } as const
  for (const [folder, list] of [
    [iceland, ICELAND],
    [family, FAMILY],
  ] as const)
    for (const [seed, photo] of list.entries())
      await writePhoto(path.join(folder, photo.name), {
        ...small,
        seed: seed + (folder === family ? 10 : 0),
        captured: new Date(photo.taken),
        utcOffsetMinutes: 0,
        camera: photo.camera,
        ...('gps' in photo ? { gps: photo.gps } : {}),
      })
  await writeOpaque(path.join(iceland, VIDEO.name), 4096, 7)
  await utimes(path.join(iceland, VIDEO.name), new Date(VIDEO.taken), new Date(VIDEO.taken))
  expectOk(await photos(laptop, ['backup', iceland, '--album', 'Iceland', '--location']))
  expectOk(await photos(laptop, ['backup', family, '--album', 'Family', '--location']))
  expectOk(await photos(laptop, ['fav', 'Family', 'birthday-cake.jpg']))
  // The phone never saw the files: what its config folder holds of them is the search index alone.
  await pairedDevice(laptop, phone, server.url, email, PASSWORD)
}, 180_000)

afterAll(async () => {
  await server?.close()
  await rm(work, { recursive: true, force: true })
})

/** The dates are the photos' own clocks; a modification time (the video's) is shown in TZ. */
const UTC = { env: { TZ: 'UTC' } }

/** `search <args> --json` on the phone, which must succeed. */
async function searched(
  ...args: string[]
): Promise<{ run: PhotosRun; names: string[]; hits: Record<string, unknown>[]; indexed: Record<string, unknown>; total: number }> {
  const run = await photos(phone, ['search', ...args, '--json'], UTC)
  expectOk(run)
  const all = events(run)
  const hits = all.filter((e) => e.event === 'hit')
  return {
    run,
    names: hits.map((hit) => hit.name as string),
    hits,
    indexed: all.find((e) => e.event === 'indexed')!,
    total: all.find((e) => e.event === 'summary')!.total as number,
  }
}

describe('coffer-photos search', { timeout: 120_000 }, () => {
  it('builds the index on its first run, opening every photo once, then finds by a word of the name', async () => {
    const first = await searched('harbour')
    expect(first.indexed).toMatchObject({ albums: 2, photos: 6, opened: 6, updated: 6, removed: 0, failed: 0 })
    expect(first.names).toEqual(['harbour-dawn.jpg'])
    expect(first.hits[0]).toMatchObject({
      album: 'Iceland',
      taken: '2019-07-14T08:30:00',
      kind: 'photo',
      favourite: false,
      camera: 'Canon EOS 5D Mark IV',
      place: { name: 'Reykjavík, Iceland', city: 'Reykjavík', country: 'Iceland', country_code: 'IS' },
    })
    expect((first.hits[0]!.place as { map: string }).map).toMatch(/^https:\/\/www\.openstreetmap\.org\/\?mlat=64\.14660&mlon=-21\.94260/)
    // Nothing new: nothing opened.
    const again = await searched('HARBOUR')
    expect(again.indexed).toMatchObject({ photos: 6, opened: 0, updated: 0 })
    expect(again.names).toEqual(['harbour-dawn.jpg'])
    expect((await searched('dawn')).names).toEqual(['harbour-dawn.jpg']) // anywhere in a word of three letters or more
    expect((await searched('awn')).names).toEqual(['harbour-dawn.jpg'])
    expect((await searched('aw')).names).toEqual([]) // two letters start a word
  })

  it('finds by a year, a month of a year, a day, and a range, newest first', async () => {
    expect((await searched('2019')).names).toEqual(['glacier-walk.jpg', 'puffins.mp4', 'harbour-dawn.jpg'])
    for (const month of ['July 2019', 'jul 2019', '2019-07', 'July', 'JULY 2019'])
      expect((await searched(...month.split(' '))).names, month).toEqual(['glacier-walk.jpg', 'puffins.mp4', 'harbour-dawn.jpg'])
    for (const day of ['2019-07-14', '14 July 2019', 'July 14, 2019']) expect((await searched(day)).names, day).toEqual(['harbour-dawn.jpg'])
    expect((await searched('2018-2019')).names).toEqual(['glacier-walk.jpg', 'puffins.mp4', 'harbour-dawn.jpg', 'birthday-cake.jpg'])
    expect((await searched('2018', 'to', '2019')).total).toBe(4)
    expect((await searched('March 2018 - June 2020')).names).toEqual(['garden.jpg', 'glacier-walk.jpg', 'puffins.mp4', 'harbour-dawn.jpg', 'birthday-cake.jpg'])
    expect((await searched('April to June 2020')).names).toEqual(['garden.jpg'])
    expect((await searched('2016')).names).toEqual([])
  })

  it('finds by camera, album, favourite mark, place and kind, each with the others', async () => {
    expect((await searched('canon')).names).toEqual(['harbour-dawn.jpg'])
    expect((await searched('nikon d750')).names).toEqual(['garden.jpg'])
    expect((await searched('iphone')).names).toEqual(['birthday-cake.jpg'])
    expect((await searched('family')).names).toEqual(['garden.jpg', 'birthday-cake.jpg', 'old-scan.jpg'])
    expect((await searched('2018', '--album', 'Family')).names).toEqual(['birthday-cake.jpg'])
    expect((await searched('favourites')).names).toEqual(['birthday-cake.jpg'])
    expect((await searched('favorites', 'iceland')).names).toEqual([])
    expect((await searched('paris')).names).toEqual(['birthday-cake.jpg'])
    expect((await searched('FRANCE')).hits[0]).toMatchObject({ name: 'birthday-cake.jpg', place: { name: 'Paris, France', region: 'Île-de-France' } })
    expect((await searched('reykjavik')).names).toEqual(['harbour-dawn.jpg']) // Reykjavík, accent or not
    expect((await searched('videos')).names).toEqual(['puffins.mp4'])
    expect((await searched('videos')).hits[0]).toMatchObject({ kind: 'video', taken: '2019-07-15T09:00:00', place: null, camera: null })
    expect((await searched('photos', '2019')).names).toEqual(['glacier-walk.jpg', 'harbour-dawn.jpg'])
    expect((await searched('"garden"')).names).toEqual(['garden.jpg'])
  })

  it('prints the date taken, name, album and place of each, in columns, and the count', async () => {
    const run = await photos(phone, ['search', 'Iceland', '--limit', '2'], UTC)
    expectOk(run)
    const lines = run.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^TAKEN +NAME +ALBUM +PLACE$/)
    expect(lines[1]).toMatch(/^2019-07-16 13:00:00 +glacier-walk\.jpg +Iceland +\S/)
    expect(lines[2]).toMatch(/^2019-07-15 09:00:00 +puffins\.mp4 +Iceland$/)
    expect(lines.at(-1)).toBe('3 files found ("iceland"), the newest 2 listed (--limit N lists more)')
    const favourite = await photos(phone, ['search', 'fav'], UTC)
    expect(favourite.stdout).toMatch(/^2018-03-10 17:45:00 +birthday-cake\.jpg ♥ +Family +Paris, France$/m)
    const none = await photos(phone, ['search', 'nothing-like-this'], UTC)
    expectOk(none)
    expect(none.stdout).toBe('nothing found ("nothing", "like", "this")\n')
    const wrong = await photos(phone, ['search', 'x', '--album', 'Nowhere'])
    expect(wrong.code).toBe(2)
    expect((await photos(phone, ['search'])).code).toBe(2)
  })

  it('keeps up from where it stopped: a new photo is the only one opened, a deleted one and one in Recently deleted are gone, a changed mark is read again', async () => {
    await writePhoto(path.join(iceland, 'northern-lights.jpg'), {
      format: 'jpeg',
      width: 48,
      height: 32,
      seed: 30,
      captured: new Date(Date.UTC(2019, 6, 20, 23, 50)),
      camera: { make: 'Canon', model: 'Canon EOS R5' },
    })
    expectOk(await photos(laptop, ['backup', iceland, '--album', 'Iceland']))
    expectOk(await photos(laptop, ['rm', 'Iceland', 'glacier-walk.jpg', '--for-good', '--yes']))
    const after = await searched('2019')
    expect(after.indexed).toMatchObject({ photos: 6, opened: 1, updated: 1, removed: 1 })
    expect(after.names).toEqual(['northern-lights.jpg', 'puffins.mp4', 'harbour-dawn.jpg'])
    expect((await searched('canon')).names).toEqual(['northern-lights.jpg', 'harbour-dawn.jpg'])

    expectOk(await photos(laptop, ['rm', 'Family', 'garden.jpg'])) // to Recently deleted
    expectOk(await photos(laptop, ['unfav', 'Family', 'birthday-cake.jpg']))
    const trashed = await searched('family')
    expect(trashed.indexed).toMatchObject({ opened: 1, updated: 1, removed: 0 })
    expect(trashed.names).toEqual(['birthday-cake.jpg', 'old-scan.jpg'])
    expect((await searched('favourites')).names).toEqual([])
    expect((await searched('nikon')).names).toEqual([])
  })

  it('keeps the index encrypted: the state database holds no name, camera or place of a photo', async () => {
    await searched('2019') // the index is written
    const database = new DatabaseSync(path.join(phone, 'state.sqlite'), { readOnly: true })
    const rows = database.prepare('SELECT (SELECT COUNT(*) FROM search_albums) AS albums, (SELECT COUNT(*) FROM search_chunks) AS chunks').get() as {
      albums: number
      chunks: number
    }
    database.close()
    expect(rows).toEqual({ albums: 2, chunks: 2 })
    const bytes = Buffer.concat(
      await Promise.all(['state.sqlite', 'state.sqlite-wal'].map((file) => readFile(path.join(phone, file)).catch(() => Buffer.alloc(0)))),
    )
    expect(bytes.length).toBeGreaterThan(8192)
    for (const plain of ['harbour-dawn', 'birthday-cake', 'northern-lights', 'puffins', 'EOS 5D', 'iPhone', 'Reykjav', 'Paris', 'Iceland', 'Family'])
      for (const encoding of ['utf8', 'utf16le'] as const) expect(bytes.includes(Buffer.from(plain, encoding)), `${plain} (${encoding})`).toBe(false)
  })
})
