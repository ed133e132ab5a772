// The web app's Search screen (issue 41; decision 0070), in Chromium: photos with known dates,
// cameras and places (kept by coffer-photos with --location), a favourite and a video in two
// albums, stored from Node as coffer-photos stores them; the screen finds each kind of query
// (a name, a caption, a year, a month of a year, a range, a camera, an album, favourites, a place
// named from the shipped table, videos), offers suggestions for the word being typed (with how many each
// finds) and takes one on a click or with ↓ and Enter; a found photo opens and closes back to the
// search. The index it searches is the date index, sealed in this browser: no name, camera or
// place of a photo reads in what IndexedDB holds.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openAlbum } from '../../src/client/albums.ts'
import { memorySource } from '../../src/client/files.ts'
import { describeMedia } from '../../src/client/node/media.ts'
import { setFavourite } from '../../src/client/organise.ts'
import { backupFile } from '../../src/client/upload.ts'
import { checkScreen, openDevice, serverAndBrowser, type WatchedPage } from '../support/browser.ts'
import { decryptedThumbnails } from '../support/gallery.ts'
import { writeOpaque, writePhoto } from '../support/photos.ts'
import { FAMILY, ICELAND, VIDEO } from '../support/search-photos.ts'
import { openAs, webAccount, type WebAccount } from '../support/web-account.ts'

const shared = serverAndBrowser()
const poll = expect.poll

const ALBUMS = { Iceland: ICELAND, Family: FAMILY }
/** Captions, as an import from Google Photos brings them (metadata version 5). */
const CAPTIONS = new Map([['garden.jpg', 'Roses in first bloom by the shed']])

let folder: string
let account: WebAccount
let device: WatchedPage

beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'coffer-search-'))
  account = await webAccount(shared.server, 'search')
  let seed = 0
  for (const [albumName, list] of Object.entries(ALBUMS)) {
    const album = await openAlbum(account.library, albumName)
    const target = { ...account.library, albumId: album.albumId, protocolVersion: album.protocolVersion }
    const store = async (name: string, type: string, bytes: Uint8Array, modified: number | null) =>
      backupFile(target, memorySource(bytes, { name, type, modified }), {
        describe: async () => ({ ...(await describeMedia(bytes, type, { location: true })), description: CAPTIONS.get(name) ?? null }),
      })
    for (const photo of list) {
      const file = path.join(folder, photo.name)
      await writePhoto(file, {
        format: 'jpeg',
        width: 64,
        height: 48,
        seed: seed++,
        captured: new Date(photo.taken),
        utcOffsetMinutes: 0,
        camera: photo.camera,
        ...('gps' in photo ? { gps: photo.gps } : {}),
      })
      const stored = await store(photo.name, 'image/jpeg', new Uint8Array(await readFile(file)), null)
      if (photo.name === 'garden.jpg') await setFavourite(account.library, album.albumId, stored.assetId, true)
    }
    if (albumName === 'Iceland') {
      const file = path.join(folder, VIDEO.name)
      await writeOpaque(file, 4096, 7)
      await store(VIDEO.name, 'video/mp4', new Uint8Array(await readFile(file)), VIDEO.taken)
    }
  }
  device = await openDevice(shared.browser, shared.server.url)
  await openAs(device.page, shared.server, account, '/#/search')
}, 60_000)
afterAll(async () => {
  await device?.context.close()
  if (folder !== undefined) await rm(folder, { recursive: true, force: true })
})

const box = (page: Page) => page.getByRole('combobox', { name: 'Search your photos' })

/** The names of the photos shown, in the screen's order: a thumbnail's alt, or the name a tile without one shows. */
const shown = (page: Page): Promise<string[]> =>
  page
    .locator('.grid a[data-asset]')
    .evaluateAll((tiles) => tiles.map((tile) => tile.querySelector('img')?.getAttribute('alt') ?? tile.querySelector('.tile-name')?.textContent ?? '?'))

/** The names of the photos the screen shows once `query` is typed, sorted. */
async function found(page: Page, query: string, count: number): Promise<string[]> {
  await box(page).fill(query)
  await poll(() => page.locator('.grid a[data-asset]').count()).toBe(count)
  await poll(async () => (await shown(page)).includes('?')).toBe(false)
  return (await shown(page)).sort()
}

describe('the Search screen', () => {
  it('finds each kind of query, newest first, and says what it found', async () => {
    const { page } = device
    await poll(() => box(page).isVisible()).toBe(true)
    // The index is ready once every album's dates are read.
    await poll(() =>
      page
        .getByRole('status')
        .filter({ hasText: /Reading dates/ })
        .count(),
    ).toBe(0)
    expect(await found(page, 'harbour', 1)).toEqual(['harbour-dawn.jpg'])
    expect(await found(page, '2019', 3)).toEqual(['glacier-walk.jpg', 'harbour-dawn.jpg', 'puffins.mp4'])
    expect(await page.locator('.reading-dates').textContent()).toBe('3 photos found: 2019')
    expect(await found(page, 'March 2018', 1)).toEqual(['birthday-cake.jpg'])
    expect(await found(page, '2018-2019', 4)).toEqual(['birthday-cake.jpg', 'glacier-walk.jpg', 'harbour-dawn.jpg', 'puffins.mp4'])
    expect(await found(page, 'nikon', 1)).toEqual(['garden.jpg'])
    expect(await found(page, 'family', 3)).toEqual(['birthday-cake.jpg', 'garden.jpg', 'old-scan.jpg'])
    expect(await found(page, 'favourites', 1)).toEqual(['garden.jpg'])
    expect(await found(page, 'videos', 1)).toEqual(['puffins.mp4'])
    // Places: the position named from the shipped table (Reykjavík, accents folded; Paris).
    expect(await found(page, 'reykjavik', 1)).toEqual(['harbour-dawn.jpg'])
    expect(await found(page, 'paris', 1)).toEqual(['birthday-cake.jpg'])
    expect(await found(page, 'iceland 2019 canon', 1)).toEqual(['harbour-dawn.jpg'])
    // A caption's words, as a name's.
    expect(await found(page, 'roses', 1)).toEqual(['garden.jpg'])
    expect(await found(page, '"first bloom" 2020', 1)).toEqual(['garden.jpg'])
    // Newest taken first (the video by its modification time).
    await found(page, '2019', 3)
    expect(await shown(page)).toEqual(['glacier-walk.jpg', 'puffins.mp4', 'harbour-dawn.jpg'])
    await box(page).fill('lighthouse')
    await poll(() => page.getByText('Nothing found.').isVisible()).toBe(true)
    expect(device.problems).toEqual([])
  })

  it('suggests what completes the word being typed, with counts, taken by a click or by ↓ and Enter', async () => {
    const { page } = device
    await box(page).fill('jul')
    const options = page.getByRole('option')
    await poll(() => options.allTextContents()).toContain('July 2019Date · 3')
    await checkScreen(device, 'search')
    await options.filter({ hasText: 'July 2019' }).click()
    await poll(() => box(page).inputValue()).toBe('July 2019')
    await poll(() => page.locator('.grid a[data-asset]').count()).toBe(3)
    expect(page.url()).toContain('#/search/July%202019')

    await box(page).fill('fuji')
    await poll(() => options.allTextContents()).toEqual(['FUJIFILM X-T3Camera · 1'])
    await box(page).press('ArrowDown')
    expect(await options.first().getAttribute('aria-selected')).toBe('true')
    await box(page).press('Enter')
    await poll(() => box(page).inputValue()).toMatch(/X-T3/)
    await poll(() => page.locator('.grid a[data-asset]').count()).toBe(1)

    // A found photo opens over the search, and closes back to it.
    await page.locator('.grid a[data-asset]').first().click()
    await page.getByRole('dialog').waitFor()
    expect(page.url()).toMatch(/#\/search\/[^/]+\/[0-9a-f-]{36}\/[0-9a-f-]{36}$/)
    await page.keyboard.press('Escape')
    await poll(() => page.getByRole('dialog').count()).toBe(0)
    expect(await box(page).inputValue()).toMatch(/X-T3/)
    expect(await decryptedThumbnails(page)).toEqual(['glacier-walk.jpg'])
  })

  it('keeps what it searches sealed in this browser: no name, camera, place or caption reads in IndexedDB', async () => {
    const { page } = device
    const stored = await page.evaluate(`(async () => {
      const seen = []
      for (const info of await indexedDB.databases()) {
        const db = await new Promise((resolve, reject) => { const r = indexedDB.open(info.name); r.onsuccess = () => resolve(r.result); r.onerror = () => reject(r.error) })
        for (const store of db.objectStoreNames) {
          const values = await new Promise((resolve) => { const r = db.transaction(store).objectStore(store).getAll(); r.onsuccess = () => resolve(r.result) })
          const keys = await new Promise((resolve) => { const r = db.transaction(store).objectStore(store).getAllKeys(); r.onsuccess = () => resolve(r.result) })
          for (const value of [...values, ...keys]) {
            const bytes = []
            const walk = (v) => { if (v instanceof Uint8Array || v instanceof ArrayBuffer) bytes.push(...new Uint8Array(v)); else if (typeof v === 'string') bytes.push(...new TextEncoder().encode(v)); else if (v && typeof v === 'object') Object.values(v).forEach(walk) }
            walk(value)
            seen.push(String.fromCharCode(...bytes))
          }
        }
        db.close()
      }
      return seen.join('\\n')
    })()`)
    expect(String(stored).length).toBeGreaterThan(1000) // the date index is there
    for (const secret of ['harbour-dawn', 'glacier-walk', 'birthday-cake', 'puffins', 'EOS 5D', 'X-T3', 'iPhone', 'NIKON', 'Iceland', 'Family', 'first bloom'])
      expect(String(stored).includes(secret), secret).toBe(false)
  })
})
