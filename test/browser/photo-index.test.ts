// The web app's photo index (web/src/lib/photo-index-records.ts, decision 0053) keeps the most
// recent photos within its bound, and its records open only under the sign-in's key that sealed
// them, under their own name, and for the asset they hold. Pure, in Node: the page's IndexedDB
// side is tested in Chromium (security.test.ts, "the moderation record"; storage.test.ts).
import { describe, expect, it } from 'vitest'
import { admit, LIMITS, newRecordKey, openDirectory, openPhoto, sealDirectory, sealPhoto, type Listed } from '../../web/src/lib/photo-index-records.ts'
import { newStorageKey } from '../../web/src/lib/sealed.ts'
import { openUnder, sealUnder } from '../support/sealing.ts'

const listed = (n: number, size = 100): Listed => ({ assetId: `asset-${n}`, record: `record-${n}`, version: 'v1', size })
const assets = (l: readonly Listed[]): string[] => l.map((x) => x.assetId)

describe('the photo index', () => {
  it('opens a photo only under the sign-in key that sealed it, under its own record key, for the asset it holds', async () => {
    const key = await newStorageKey()
    const thumbnail = new Uint8Array([0x52, 0x49, 0x46, 0x46, 1, 2, 3, 4])
    const photo = { assetId: 'asset-a', albumId: 'album-1', name: 'harbour “at dusk”.jpg', thumbnail: { type: 'image/webp', bytes: thumbnail } }
    const record = newRecordKey()
    expect(record).toMatch(/^[0-9a-f]{32}$/)
    const sealed = await sealPhoto(sealUnder(key), record, photo)
    // Nothing of it in plain.
    expect(Buffer.from(sealed.data).includes(Buffer.from('harbour'))).toBe(false)
    expect(Buffer.from(sealed.data).includes(Buffer.from('asset-a'))).toBe(false)

    expect(await openPhoto(openUnder(key), record, sealed, 'asset-a')).toEqual(photo)
    // Another sign-in's key (a sign-out and in again makes a new one): it does not open.
    expect(await openPhoto(openUnder(await newStorageKey()), record, sealed, 'asset-a')).toBeNull()
    // Moved under another record key, or listed for another asset: no answer.
    expect(await openPhoto(openUnder(key), newRecordKey(), sealed, 'asset-a')).toBeNull()
    expect(await openPhoto(openUnder(key), record, sealed, 'asset-b')).toBeNull()

    const withoutThumbnail = { ...photo, thumbnail: null }
    const video = newRecordKey()
    expect(await openPhoto(openUnder(key), video, await sealPhoto(sealUnder(key), video, withoutThumbnail), 'asset-a')).toEqual(withoutThumbnail)

    const directory = [listed(1), listed(2, 4000)]
    const sealedDirectory = await sealDirectory(sealUnder(key), directory)
    expect(Buffer.from(sealedDirectory.data).includes(Buffer.from('asset-1'))).toBe(false)
    expect(await openDirectory(openUnder(key), sealedDirectory)).toEqual(directory)
    expect(await openDirectory(openUnder(await newStorageKey()), sealedDirectory)).toBeNull()
  })

  it('keeps the most recent photos: the oldest go past the count, a photo seen again becomes the newest, a new version replaces the old', () => {
    const limits = { photos: 3, bytes: 1_000_000 }
    const full = [listed(1), listed(2), listed(3)]
    const fourth = admit(full, [], [listed(4)], limits)
    expect(assets(fourth.listed)).toEqual(['asset-2', 'asset-3', 'asset-4'])
    expect(fourth.evicted).toEqual(['record-1'])
    expect([...fourth.written]).toEqual(['record-4'])

    // Seen again at the version kept: moved to the newest end, nothing written.
    const touched = admit(full, ['asset-1'], [listed(4)], limits)
    expect(assets(touched.listed)).toEqual(['asset-3', 'asset-1', 'asset-4'])
    expect(touched.evicted).toEqual(['record-2'])

    // A newer version: a new record, the old one deleted; the count unchanged.
    const replaced = admit(full, [], [{ ...listed(1), record: 'record-1b', version: 'v2' }], limits)
    expect(replaced.listed.map((l) => l.record)).toEqual(['record-2', 'record-3', 'record-1b'])
    expect(replaced.evicted).toEqual(['record-1'])
    expect([...replaced.written]).toEqual(['record-1b'])

    // More added at once than the bound: the first of them are never written, nor listed to delete.
    const many = admit([], [], [listed(10), listed(11), listed(12), listed(13), listed(14)], limits)
    expect(assets(many.listed)).toEqual(['asset-12', 'asset-13', 'asset-14'])
    expect([...many.written]).toEqual(['record-12', 'record-13', 'record-14'])
    expect(many.evicted).toEqual([])
  })

  it('keeps within its bytes: the oldest go until the sealed records fit, however few photos that leaves', () => {
    const limits = { photos: 100, bytes: 10_000 }
    const kept = admit([listed(1, 4000), listed(2, 4000)], [], [listed(3, 3000)], limits)
    expect(assets(kept.listed)).toEqual(['asset-2', 'asset-3'])
    expect(kept.evicted).toEqual(['record-1'])
    // One thumbnail past the whole budget is not kept, and pushes nothing out for nothing.
    const huge = admit([listed(1, 4000)], [], [listed(2, 20_000)], limits)
    expect(assets(huge.listed)).toEqual(['asset-1'])
    expect(huge.written.size).toBe(0)
    expect(huge.evicted).toEqual([])
  })

  it('holds 2,000 photos and 32 MiB at most', () => {
    expect(LIMITS).toEqual({ photos: 2000, bytes: 32 * 2 ** 20 })
    const full = Array.from({ length: 2000 }, (_, n) => listed(n, 1000))
    const next = admit(full, [], [listed(2000, 1000)])
    expect(next.listed).toHaveLength(2000)
    expect(next.listed[0]!.assetId).toBe('asset-1')
    expect(next.evicted).toEqual(['record-0'])
  })
})
