// The web app's date index (web/src/lib/date-index-records.ts, decision 0055): its chunk layout
// (a vector), its records opening only under the sign-in's key and their own name, its chunks
// changed and written as little as a feed page needs; and the timeline's order (lib/timeline.ts).
// Pure, in Node: the page's IndexedDB side is tested in Chromium (timeline.test.ts, storage.test.ts).
import { describe, expect, it } from 'vitest'
import { toHex } from '../../src/sdk/bytes.ts'
import {
  AlbumDates,
  decodeChunk,
  encodeChunk,
  openChunk,
  openDirectory,
  sealChunk,
  sealDirectory,
  SOURCES,
  type DatedPhoto,
} from '../../web/src/lib/date-index-records.ts'
import { byDateTaken, dayOfTaken } from '../../web/src/lib/timeline-order.ts'
import { newStorageKey } from '../../web/src/lib/sealed.ts'
import { openUnder, sealUnder } from '../support/sealing.ts'

const HASH = 'ab'.repeat(32)
const photo = (n: number, version = HASH): DatedPhoto => ({
  assetId: `00000000-0000-8000-8000-${String(n).padStart(12, '0')}`,
  seq: n,
  version,
  at: Date.UTC(2019, 6, 4, 12, 0, n),
  local: null,
  source: 'exif-original',
  original: HASH,
  favourite: false,
  name: `IMG_${n}.jpg`,
  camera: null,
  place: null,
  video: false,
  description: null,
})

describe('the date index', () => {
  it('encodes a chunk as the documented vector, and reads it back', () => {
    const one: DatedPhoto = {
      assetId: '0f1e2d3c-4b5a-8697-a8b9-cadbecfd0e1f',
      seq: 7,
      version: HASH,
      at: Date.UTC(2019, 6, 4, 12, 34, 56),
      local: Date.UTC(2019, 6, 4, 14, 34, 56),
      source: 'exif-original',
      original: 'cd'.repeat(32),
      favourite: true,
      name: 'Malmö.mp4',
      camera: 'Canon EOS R6',
      place: { latitude: 55.6, longitude: -13 },
      video: true,
      description: 'Smörgåsbord',
    }
    const bytes = encodeChunk([one])
    // format 4, count 1; the UUID's 16 bytes after kind 0; seq 7.0; 32 bytes of version; at; local; source 0; 32 bytes of original;
    // flags 7 (favourite, video, a place); the name (u16 length, UTF-8), the camera, the place's latitude and longitude, the description
    expect(toHex(bytes)).toBe(
      [
        '0400000001',
        '00',
        '0f1e2d3c4b5a8697a8b9cadbecfd0e1f',
        '401c000000000000',
        '20',
        'ab'.repeat(32),
        '4276bbcfb0580000',
        '4276bbd68e280000',
        '00',
        '20',
        'cd'.repeat(32),
        '07',
        '000a',
        Buffer.from('Malmö.mp4').toString('hex'),
        '000c',
        Buffer.from('Canon EOS R6').toString('hex'),
        '404bcccccccccccd',
        'c02a000000000000',
        '000d',
        Buffer.from('Smörgåsbord').toString('hex'),
      ].join(''),
    )
    expect(bytes.length).toBe(5 + 1 + 16 + 8 + 1 + 32 + 8 + 8 + 1 + 1 + 32 + 1 + 2 + 10 + 2 + 12 + 16 + 2 + 13)
    expect(decodeChunk(bytes)).toEqual([one])
    // Other ids, no version, every source: read back as given.
    const others = SOURCES.map((source, i) => ({
      ...photo(i, i % 2 === 0 ? '' : HASH),
      assetId: i === 3 ? 'not-a-uuid é' : photo(i).assetId,
      source,
      original: i % 3 === 0 ? '' : HASH,
      favourite: i % 2 === 1,
      camera: i % 2 === 0 ? null : 'NIKON D750',
      place: i % 3 === 1 ? { latitude: -33.9, longitude: 151.2 } : null,
      video: i % 4 === 2,
      description: i % 3 === 2 ? `a caption ${i} ✓` : null,
    }))
    expect(decodeChunk(encodeChunk(others))).toEqual(others)
    expect(() => decodeChunk(bytes.subarray(0, bytes.length - 1))).toThrow(/cut short/)
    expect(() => decodeChunk(Uint8Array.of(3, 0, 0, 0, 0))).toThrow(/unknown format/)
  })

  it('opens a chunk and the directory only under the key that sealed them and their own names', async () => {
    const key = await newStorageKey()
    const other = await newStorageKey()
    const photos = [photo(1), photo(2)]
    const sealed = await sealChunk(sealUnder(key), 'c1', photos)
    expect(await openChunk(openUnder(key), 'c1', sealed)).toEqual(photos)
    expect(await openChunk(openUnder(key), 'c2', sealed)).toBeNull()
    expect(await openChunk(openUnder(other), 'c1', sealed)).toBeNull()
    const directory = new Map([['album-1', { through: 9, chunks: [['c1', 2] as const] }]])
    const sealedDirectory = await sealDirectory(sealUnder(key), directory)
    expect(await openDirectory(openUnder(key), sealedDirectory)).toEqual(directory)
    expect(await openDirectory(openUnder(other), sealedDirectory)).toBeNull()
    // Nothing of the photos reads in the sealed bytes.
    expect(toHex(sealed.data)).not.toContain(HASH)
  })

  it('changes only the chunks a feed page touches: new photos join the last chunk, a replaced one moves there, a deleted one leaves its own', () => {
    const dates = new AlbumDates(0, [], 3)
    for (let n = 1; n <= 7; n++) dates.put(photo(n))
    let changes = dates.takeChanges()
    expect(changes.changed.map(([, photos]) => photos.map((p) => p.seq))).toEqual([[1, 2, 3], [4, 5, 6], [7]])
    const [first, second, third] = dates.listed().chunks.map(([key]) => key)
    // Seen again at the same version, further on in the feed: moved in place.
    dates.put({ ...photo(2), seq: 20 })
    changes = dates.takeChanges()
    expect(changes.changed.map(([key]) => key)).toEqual([first])
    // Replaced (a new version): leaves chunk 1, joins the last.
    dates.put({ ...photo(1), seq: 21, version: 'cd'.repeat(32) })
    changes = dates.takeChanges()
    expect(changes.changed.map(([key]) => key).sort()).toEqual([first, third].sort())
    // Deleted until a chunk is empty: its record goes.
    dates.remove(photo(4).assetId)
    dates.remove(photo(5).assetId)
    dates.remove(photo(6).assetId)
    changes = dates.takeChanges()
    expect(changes.emptied).toEqual([second])
    expect(dates.size).toBe(4)
    expect(dates.listed().chunks.map(([key, count]) => [key, count])).toEqual([
      [first, 2],
      [third, 2],
    ])
  })
  it('orders newest first by day, then time, then asset id; a wall clock given groups by its own day', () => {
    const at = Date.UTC(2020, 0, 1, 23, 30)
    // Taken at 23:30 UTC, but 08:30 on 2 January at the camera (+09:00): the camera's day.
    expect(dayOfTaken(at, Date.UTC(2020, 0, 2, 8, 30))).toBe(Math.floor(Date.UTC(2020, 0, 2) / 86_400_000))
    const placed = [
      { assetId: 'b', day: 10, at: 5 },
      { assetId: 'a', day: 10, at: 5 },
      { assetId: 'c', day: 11, at: 1 },
      { assetId: 'd', day: 10, at: 9 },
    ]
    expect(placed.sort(byDateTaken).map((p) => p.assetId)).toEqual(['c', 'd', 'a', 'b'])
  })
})
