// coffer-photos' sealed search index (search-store.ts, decision 0070): what is stored comes back
// as it was; photos fill chunks of CHUNK_ENTRIES and a change reseals only the chunks it touched;
// a row opens only under its account's key and at its own place (another album's or another
// chunk's row, swapped in, drops the album's index); and no row holds a photo's name in plain.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AlbumIndexState, AlbumRefresh, IndexedAsset } from '../search-sync.ts'
import { CHUNK_ENTRIES, openSearchStore } from './search-store.ts'

let work: string
beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'coffer-search-store-'))
})
afterAll(async () => {
  await rm(work, { recursive: true, force: true })
})

const KEY = new Uint8Array(32).fill(7)
const OTHER_KEY = new Uint8Array(32).fill(8)

const asset = (n: number, fields: Partial<IndexedAsset['metadata']> = {}): IndexedAsset => ({
  assetId: `asset-${n}`,
  version: n.toString(16).padStart(64, '0'),
  uploaded: 1_700_000_000_000 + n,
  metadata: { name: `secret-name-${n}.jpg`, type: 'image/jpeg', modified: null, captured: 1_560_000_000_000 + n, ...fields },
})
const state = (through: number): AlbumIndexState => ({ through, name: 'Holidays', record: [], retry: [] })
const refresh = (through: number, put: IndexedAsset[], removed: string[] = []): AlbumRefresh => ({
  state: state(through),
  put,
  removed,
  opened: put.length,
  failed: [],
})

const rows = (file: string, albumId: string): Map<number, Uint8Array> => {
  const db = new DatabaseSync(file, { readOnly: true })
  const found = new Map(
    (db.prepare('SELECT chunk, sealed FROM search_chunks WHERE album_id = ?').all(albumId) as { chunk: number; sealed: Uint8Array }[]).map((row) => [
      row.chunk,
      row.sealed,
    ]),
  )
  db.close()
  return found
}

describe('the sealed search index', () => {
  it('gives back what it stored, every field, in chunks of CHUNK_ENTRIES', async () => {
    const file = path.join(work, 'round-trip.sqlite')
    const store = await openSearchStore(file, KEY)
    const full = asset(1, {
      capturedSource: 'exif-original',
      capturedOffset: -420,
      camera: { make: 'Canon', model: 'Canon EOS 5D' },
      location: { latitude: 64.1466, longitude: -21.9426 },
      favourite: true,
      description: 'Roses in first bloom by the shed',
    })
    const older = asset(2, { capturedSource: null, capturedOffset: null, camera: { model: 'X-T3' } })
    const many = Array.from({ length: CHUNK_ENTRIES * 2 + 10 }, (_, n) => asset(n + 10))
    await store.update('album-a', null, refresh(42, [full, older, ...many]))
    const loaded = await store.load('album-a')
    expect(loaded?.state).toEqual(state(42))
    expect(loaded?.chunks.map((chunk) => chunk.length)).toEqual([CHUNK_ENTRIES, CHUNK_ENTRIES, 12])
    expect(loaded?.chunks[0]?.[0]).toEqual(full)
    expect(loaded?.chunks[0]?.[1]).toEqual(older)
    expect(loaded?.chunks.flat().map((a) => a.assetId)).toEqual([full, older, ...many].map((a) => a.assetId))
    expect(store.albumIds()).toEqual(['album-a'])
    store.close()
  })

  it('reseals only the chunks a change touched, and drops an emptied one', async () => {
    const file = path.join(work, 'touched.sqlite')
    const store = await openSearchStore(file, KEY)
    const first = Array.from({ length: CHUNK_ENTRIES * 2 }, (_, n) => asset(n))
    let stored = await store.update('album-a', null, refresh(10, first))
    const before = rows(file, 'album-a')
    // A replace in chunk 1 and a new photo (a third chunk): chunk 0 is left as it was.
    stored = await store.update('album-a', stored, refresh(12, [asset(CHUNK_ENTRIES + 5, { name: 'renamed.jpg' }), asset(99_999)]))
    const after = rows(file, 'album-a')
    expect(after.get(0)).toEqual(before.get(0))
    expect(after.get(1)).not.toEqual(before.get(1))
    expect([...after.keys()].sort()).toEqual([0, 1, 2])
    const reloaded = await store.load('album-a')
    expect(reloaded?.chunks[1]?.find((a) => a.assetId === `asset-${CHUNK_ENTRIES + 5}`)?.metadata.name).toBe('renamed.jpg')
    expect(reloaded?.state.through).toBe(12)
    // The third chunk's one photo deleted: its row goes; the header still counts its place.
    await store.update('album-a', reloaded, refresh(13, [], ['asset-99999']))
    expect([...rows(file, 'album-a').keys()].sort()).toEqual([0, 1])
    expect((await store.load('album-a'))?.chunks.map((chunk) => chunk.length)).toEqual([CHUNK_ENTRIES, CHUNK_ENTRIES, 0])
    store.drop('album-a')
    expect(await store.load('album-a')).toBeNull()
    store.close()
  })

  it('opens a row only under its key and at its place; one that does not open drops the album', async () => {
    const file = path.join(work, 'places.sqlite')
    const store = await openSearchStore(file, KEY)
    await store.update(
      'album-a',
      null,
      refresh(
        5,
        Array.from({ length: CHUNK_ENTRIES + 1 }, (_, n) => asset(n)),
      ),
    )
    await store.update('album-b', null, refresh(6, [asset(7)]))
    const other = await openSearchStore(file, OTHER_KEY)
    expect(await other.load('album-b')).toBeNull() // another account's key
    expect(await store.load('album-b')).toBeNull() // and dropped
    other.close()
    // Chunk 1's row moved to chunk 0's place: the album's index does not open, and goes.
    const db = new DatabaseSync(file)
    const chunk1 = rows(file, 'album-a').get(1)!
    db.prepare('UPDATE search_chunks SET sealed = ? WHERE album_id = ? AND chunk = 0').run(chunk1, 'album-a')
    db.close()
    expect(await store.load('album-a')).toBeNull()
    expect(store.albumIds()).toEqual([])
    store.close()
  })

  it('does not open a row of the version before captions: the album is dropped, to be built again with them', async () => {
    const file = path.join(work, 'versions.sqlite')
    const store = await openSearchStore(file, KEY)
    await store.update('album-a', null, refresh(3, [asset(1)]))
    expect(await store.load('album-a')).not.toBeNull()
    const db = new DatabaseSync(file)
    const sealed = Uint8Array.from(rows(file, 'album-a').get(0)!)
    sealed[0] = 0x01
    db.prepare('UPDATE search_chunks SET sealed = ? WHERE album_id = ? AND chunk = 0').run(sealed, 'album-a')
    db.close()
    expect(await store.load('album-a')).toBeNull()
    expect(store.albumIds()).toEqual([])
    store.close()
  })

  it('holds no name, camera or position in plain', async () => {
    const file = path.join(work, 'plain.sqlite')
    const store = await openSearchStore(file, KEY)
    await store.update(
      'album-a',
      null,
      refresh(1, [asset(1, { camera: { make: 'Canon', model: 'Canon EOS 5D' }, location: { latitude: 64.1466, longitude: -21.9426 } })]),
    )
    store.close()
    const db = new DatabaseSync(file, { readOnly: true })
    const sealed = (db.prepare('SELECT sealed FROM search_chunks UNION ALL SELECT sealed FROM search_albums').all() as { sealed: Uint8Array }[]).map((row) =>
      Buffer.from(row.sealed),
    )
    db.close()
    expect(sealed).toHaveLength(2)
    for (const bytes of sealed) for (const plain of ['secret-name', 'Canon', '64.1466', 'asset-1', 'Holidays']) expect(bytes.includes(plain), plain).toBe(false)
  })
})
