// Albums one can organise (src/client/albums.ts, decision 0060), against a real server: a rename
// is a replace of the album's record, found by its new name and not its old one, whose old name
// then makes a new album (at the name's next id, on every device the same); a name another album
// has is refused; the cover is set, kept by a rename, cleared, and falls back to the newest photo
// once deleted; and a server that forges a record entry or serves an old one again is not believed.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  albumCover,
  albumNameOf,
  AlbumNameTakenError,
  albumRecordId,
  albumRecordOf,
  feedEntries,
  findAlbum,
  namedAlbums,
  openAlbum,
  renameAlbum,
  setAlbumCover,
  type Library,
} from '../../src/client/albums.ts'
import { deleteFile } from '../../src/client/edits.ts'
import { memorySource } from '../../src/client/files.ts'
import { albumIdFor } from '../../src/client/format/ids.ts'
import { backupFile } from '../../src/client/upload.ts'
import type { CofferClient, Feed } from '../../src/sdk/client.ts'
import { photoLibrary } from '../support/albums.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
let library: Library

beforeAll(async () => {
  server = await startServer()
  library = await photoLibrary(server, 'albums')
})
afterAll(() => server.close())

async function photoIn(albumId: string, name: string): Promise<string> {
  const bytes = randomBytes(2000)
  return (await backupFile({ ...library, albumId }, memorySource(bytes, { name, type: 'image/jpeg', modified: 1_700_000_000_000 }))).assetId
}

async function feedOf(lib: Library, albumId: string): Promise<Feed['entries'][number][]> {
  const entries: Feed['entries'][number][] = []
  for await (const entry of feedEntries(lib.client, albumId)) entries.push(entry)
  return entries
}

/** The library with a client whose feed of `albumId` is what `lie` makes of the real one; every other call goes to the server. */
function lyingAbout(albumId: string, lie: (entries: Feed['entries'][number][]) => Feed['entries'][number][]): Library {
  const real = library.client
  const feed: CofferClient['feed'] = async (album, after = 0, limit = 100) => {
    if (album !== albumId) return real.feed(album, after, limit)
    const entries = lie(await feedOf(library, albumId)).filter((entry) => entry.sync_seq > after)
    const page = entries.slice(0, limit)
    return { entries: page, next_after: page.at(-1)?.sync_seq ?? after }
  }
  const client = new Proxy(real, {
    get: (target, key) =>
      key === 'feed' ? feed : typeof Reflect.get(target, key) === 'function' ? Reflect.get(target, key).bind(target) : Reflect.get(target, key),
  })
  return { ...library, client }
}

describe('renaming an album', () => {
  it('finds it by its new name only; its old name makes a new album, the same one on every device; a taken name is refused', async () => {
    const holiday = await openAlbum(library, 'Holiday')
    expect(holiday.albumId).toBe(await albumIdFor(library.masterKey, 'Holiday'))
    await photoIn(holiday.albumId, 'beach.jpg')

    expect(await renameAlbum(library, holiday.albumId, '  Spain 2019 ')).toEqual({ name: 'Spain 2019', cover: null })
    expect(await albumNameOf(library, holiday.albumId)).toBe('Spain 2019')
    expect((await findAlbum(library, 'Spain 2019'))?.albumId).toBe(holiday.albumId)
    expect(await findAlbum(library, 'Holiday')).toBeNull()
    // Opening the new name finds the renamed album: no second album of it.
    expect((await openAlbum(library, 'Spain 2019')).albumId).toBe(holiday.albumId)

    // "Holiday" again: its first id is the renamed album's, so the next one; two devices at once make one.
    const [again, racing] = await Promise.all([openAlbum(library, 'Holiday'), openAlbum(library, 'Holiday')])
    expect(again.albumId).not.toBe(holiday.albumId)
    expect(again.albumId).toBe(await albumIdFor(library.masterKey, 'Holiday', 1))
    expect(racing.albumId).toBe(again.albumId)
    expect((await namedAlbums(library)).filter((album) => album.name === 'Holiday').map((album) => album.albumId)).toEqual([again.albumId])

    // Renaming to a name another album has: refused, nothing written.
    const before = (await feedOf(library, holiday.albumId)).length
    await expect(renameAlbum(library, holiday.albumId, 'Holiday')).rejects.toThrow(AlbumNameTakenError)
    await expect(renameAlbum(library, holiday.albumId, 'Holiday')).rejects.toThrow('there is already an album named "Holiday"')
    expect((await feedOf(library, holiday.albumId)).length).toBe(before)
    // Renaming to its own name writes nothing either.
    await renameAlbum(library, holiday.albumId, 'Spain 2019')
    expect((await feedOf(library, holiday.albumId)).length).toBe(before)
  })
})

describe('the album cover', () => {
  it('is set, kept by a rename, falls back to the newest photo once deleted, and is cleared', async () => {
    const album = await openAlbum(library, 'Covers')
    const first = await photoIn(album.albumId, 'first.jpg')
    const second = await photoIn(album.albumId, 'second.jpg')
    const dated = [
      { assetId: first, taken: 1000 },
      { assetId: second, taken: 2000 },
    ]
    expect(albumCover(null, dated)).toBe(second)
    expect(albumCover(null, [])).toBeNull()

    expect(await setAlbumCover(library, album.albumId, first)).toEqual({ name: 'Covers', cover: first })
    await renameAlbum(library, album.albumId, 'Covered')
    expect(await albumRecordOf(library, album.albumId)).toEqual({ name: 'Covered', cover: first })
    expect((await namedAlbums(library)).find((a) => a.albumId === album.albumId)?.cover).toBe(first)
    expect(albumCover(first, dated)).toBe(first)

    // The cover deleted: the record still names it, the newest photo is shown.
    await deleteFile(library, album.albumId, first)
    expect(albumCover((await albumRecordOf(library, album.albumId))!.cover, dated.slice(1))).toBe(second)
    await expect(setAlbumCover(library, album.albumId, first)).rejects.toThrow(/not a photo of the album/)
    await expect(setAlbumCover(library, album.albumId, await albumRecordId(library.masterKey, album.albumId))).rejects.toThrow(/not a photo of the album/)

    expect(await setAlbumCover(library, album.albumId, null)).toEqual({ name: 'Covered', cover: null })
    expect(await albumRecordOf(library, album.albumId)).toEqual({ name: 'Covered', cover: null })
  })
})

describe('a server that lies about the record', () => {
  it('serving an old version of the record again, or a version whose signature does not verify, does not change the name', async () => {
    const album = await openAlbum(library, 'Before')
    await renameAlbum(library, album.albumId, 'After')
    const recordId = await albumRecordId(library.masterKey, album.albumId)
    const records = (entries: Feed['entries'][number][]) => entries.filter((entry) => entry.asset_id === recordId)

    // The first version ("Before", signed, but continuing nothing) served again as the latest.
    const replayed = lyingAbout(album.albumId, (entries) => [...entries, { ...records(entries)[0]!, sync_seq: entries.at(-1)!.sync_seq + 1 }])
    expect(await albumNameOf(replayed, album.albumId)).toBe('After')

    // A latest version with one byte of its manifest changed: its signature does not verify.
    await renameAlbum(library, album.albumId, 'Forged')
    const forged = lyingAbout(album.albumId, (entries) =>
      entries.map((entry) => {
        if (entry !== records(entries).at(-1)) return entry
        const bytes = Buffer.from(entry.manifest_cbor, 'base64')
        bytes[bytes.length - 10]! ^= 1
        return { ...entry, manifest_cbor: bytes.toString('base64') }
      }),
    )
    // Passed over; the version before it no longer opens (its metadata blob went with the replace), so the album reads as unnamed.
    expect(await albumNameOf(forged, album.albumId)).toBeNull()
    expect(await albumNameOf(library, album.albumId)).toBe('Forged')
  })
})
