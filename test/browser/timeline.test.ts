// The Photos screen in Chromium against a real server (docs/decisions/0055-date-index-sealed-in-browser.md):
// photos with known EXIF DateTimeOriginal from 2015 to 2024, in two albums, uploaded from Node
// in shuffled order, are shown newest first under the right month and day headings; a reload
// orders them from the sealed date index without opening their metadata again (only the tiles
// drawn open theirs); a photo opens over the timeline and closes back onto its tile; an account
// without photos says how to add some. At 1280×900 and 390×844, each screen passing axe.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { liveEntries, openAlbum } from '../../src/client/albums.ts'
import { describeMedia } from '../../src/client/node/media.ts'
import { backupFile } from '../../src/client/upload.ts'
import { checkScreen, launchChromium, openDevice, type WatchedPage } from '../support/browser.ts'
import { decryptedThumbnails } from '../support/gallery.ts'
import { writePhoto } from '../support/photos.ts'
import { startServer, type TestServer } from '../support/server.ts'
import { openAs, webAccount, type WebAccount } from '../support/web-account.ts'

let server: TestServer
let browser: Browser
let folder: string

beforeAll(async () => {
  ;[server, browser, folder] = await Promise.all([startServer(), launchChromium(), mkdtemp(path.join(tmpdir(), 'coffer-timeline-'))])
}, 60_000)
afterAll(async () => {
  await browser?.close()
  await server?.close()
  if (folder !== undefined) await rm(folder, { recursive: true, force: true })
})

const poll = <T>(read: () => Promise<T>, timeout = 20_000) => expect.poll(read, { timeout })

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December']

interface Placed {
  readonly name: string
  readonly taken: Date
  assetId: string
  metadataHash: string
}

/**
 * Two photos a year from 2015 to 2024, at noon UTC (the same day in any time zone within 11
 * hours), in months spread over the year; two of 2019 on one day (one day heading, two tiles).
 */
function plannedPhotos(): Placed[] {
  const photos: Placed[] = []
  for (let year = 2015; year <= 2024; year++)
    for (let k = 0; k < 2; k++) {
      const month = (year * 5 + k * 7) % 12
      const day = year === 2019 ? 14 : 3 + ((year + k * 11) % 25)
      const hour = year === 2019 ? 10 + k : 12
      const taken = new Date(Date.UTC(year, month, day, hour, 0, 0))
      photos.push({ name: `photo-${year}-${k}.jpg`, taken, assetId: '', metadataHash: '' })
    }
  return photos
}

/** A deterministic shuffle (the same order every run). */
function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items]
  let x = 0x2545f491
  for (let i = out.length - 1; i > 0; i--) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    const j = Math.abs(x) % (i + 1)
    ;[out[i], out[j]] = [out[j]!, out[i]!]
  }
  return out
}

/** Uploads the photos from Node into two albums, in shuffled order, reading their EXIF as coffer-photos does. */
async function uploadShuffled(account: WebAccount, photos: Placed[]): Promise<void> {
  const albums = [await openAlbum(account.library, 'Trips'), await openAlbum(account.library, 'Home')]
  const order = shuffled(photos)
  for (const [i, photo] of order.entries()) {
    const file = path.join(folder, `${account.userId}-${photo.name}`)
    await writePhoto(file, { format: 'jpeg', width: 96, height: 64, seed: 100 + i, captured: photo.taken, utcOffsetMinutes: 0 })
    const bytes = new Uint8Array(await readFile(file))
    const album = albums[i % 2]!
    const result = await backupFile(
      { ...account.library, albumId: album.albumId, protocolVersion: album.protocolVersion },
      { name: photo.name, size: bytes.length, type: 'image/jpeg', modified: null, open: () => [bytes] },
      { describe: () => describeMedia(bytes, 'image/jpeg') },
    )
    photo.assetId = result.assetId
  }
  for (const album of albums)
    for (const entry of await liveEntries(account.library.client, album.albumId)) {
      const photo = photos.find((p) => p.assetId === entry.asset_id)
      if (photo !== undefined) photo.metadataHash = entry.metadata_blob_hash!
    }
}

/** What the grid shows, one row at a time: a heading row as its month (when it has one) and day, a row of tiles as their asset ids. */
type Row = { readonly month: string | null; readonly day: number } | { readonly tiles: readonly string[] }

/** Every row of the grid, read from the top to the end a screen at a time (only the rows near the screen exist). */
async function everyRow(page: Page): Promise<Row[]> {
  const rows = new Map<number, Row>()
  await page.evaluate('scrollTo(0, 0)')
  for (let step = 0; step < 200; step++) {
    await page.waitForTimeout(150)
    const seen = (await page.evaluate(`[...document.querySelectorAll('.grid [data-row]')].map((row) => ({
      row: Number(row.dataset.row),
      month: row.querySelector('h2')?.textContent ?? null,
      day: row.querySelector('h3') === null ? null : Number(row.querySelector('h3').dataset.day),
      tiles: [...row.querySelectorAll('[data-asset]')].map((tile) => tile.dataset.asset),
    }))`)) as { row: number; month: string | null; day: number | null; tiles: string[] }[]
    for (const r of seen) rows.set(r.row, r.day === null ? { tiles: r.tiles } : { month: r.month, day: r.day })
    if (await page.evaluate('innerHeight + scrollY >= document.documentElement.scrollHeight - 2')) break
    await page.evaluate('scrollBy(0, innerHeight * 0.8)')
  }
  await page.evaluate('scrollTo(0, 0)')
  return [...rows].sort(([a], [b]) => a - b).map(([, row]) => row)
}

/** The rows the photos should make: newest first, a heading at each new day (naming the month at each new month). */
function expectedRows(photos: readonly Placed[], columns: number): Row[] {
  const sorted = [...photos].sort((a, b) => b.taken.getTime() - a.taken.getTime())
  const rows: Row[] = []
  let lastDay: number | null = null
  let lastMonth: string | null = null
  let tiles: string[] = []
  const flush = () => {
    if (tiles.length > 0) rows.push({ tiles })
    tiles = []
  }
  for (const photo of sorted) {
    const day = Math.floor(photo.taken.getTime() / 86_400_000)
    const month = `${MONTHS[photo.taken.getUTCMonth()]} ${photo.taken.getUTCFullYear()}`
    if (day !== lastDay) {
      flush()
      rows.push({ month: month === lastMonth ? null : month, day })
      lastDay = day
      lastMonth = month
    }
    if (tiles.length === columns) flush()
    tiles.push(photo.assetId)
  }
  flush()
  return rows
}

/** Hashes of every blob the page asks for, by batch or alone. */
function blobRequests(page: Page): string[] {
  const asked: string[] = []
  page.on('request', (request) => {
    const { pathname } = new URL(request.url())
    if (pathname === '/v1/blobs/batch') asked.push(...(request.postDataJSON() as { hashes: string[] }).hashes)
    else if (pathname.startsWith('/v1/blobs/')) asked.push(pathname.slice('/v1/blobs/'.length))
  })
  return asked
}

/** The grid's columns, from its rows' template (`repeat(8, 1fr)`): a day's row holds only that day's photos. */
const columnsOf = async (page: Page): Promise<number> =>
  Number(/repeat\((\d+)/.exec((await page.locator('.grid-row').first().getAttribute('style')) ?? '')?.[1])

describe('the Photos screen', () => {
  let account: WebAccount
  const photos = plannedPhotos()

  it('shows photos of two albums uploaded in shuffled order newest first by date taken, under the right month and day headings, at 1280×900', async () => {
    account = await webAccount(server, 'timeline')
    await uploadShuffled(account, photos)
    const device = await openDevice(browser, server.url)
    const { page } = device
    await page.setViewportSize({ width: 1280, height: 900 })
    const asked = blobRequests(page)
    await openAs(page, server, account, '/')
    await poll(() => page.getByRole('heading', { name: 'Photos', level: 1 }).isVisible()).toBe(true)
    await poll(() => page.locator('.reading-dates').textContent()).toBe('20 photos')
    await poll(async () => (await decryptedThumbnails(page)).length).toBeGreaterThan(3)
    // Every photo's metadata was opened once, on this first opening, to read its date.
    const metadata = new Set(photos.map((p) => p.metadataHash))
    expect(new Set(asked.filter((hash) => metadata.has(hash)))).toEqual(metadata)

    const columns = await columnsOf(page)
    expect(columns).toBe(8)
    expect(await everyRow(page)).toEqual(expectedRows(photos, columns))
    const top = page.locator('.grid h2').first()
    const newest = [...photos].sort((a, b) => b.taken.getTime() - a.taken.getTime())[0]!
    // everyRow scrolled back to the top; the grid draws the top rows on the scroll event that follows.
    await poll(() => top.textContent()).toBe(`${MONTHS[newest.taken.getUTCMonth()]} ${newest.taken.getUTCFullYear()}`)
    await checkScreen(device, 'photos', { phone: false })

    // A reload: the order from the sealed index, and only the tiles drawn open their metadata.
    asked.length = 0
    await page.reload()
    await poll(() => page.locator('.reading-dates').textContent()).toBe('20 photos')
    await poll(async () => (await decryptedThumbnails(page)).length).toBeGreaterThan(3)
    await page.waitForTimeout(1000)
    expect(await page.getByText(/Reading dates/).count()).toBe(0)
    const drawn = await page.locator('.grid [data-asset]').count()
    const reopened = asked.filter((hash) => metadata.has(hash))
    expect(reopened.length).toBeLessThanOrEqual(drawn)
    expect(reopened.length).toBeLessThan(photos.length)
    expect(await everyRow(page)).toEqual(expectedRows(photos, columns))

    // A photo opened from the timeline, then Escape: back on the timeline, the focus on its tile.
    // The first tile as drawn when clicked (a tile drawn again in between is the same locator); which photo it was, from the route.
    await page.locator('.grid a[data-asset]').first().click()
    await poll(() => page.getByRole('dialog').isVisible()).toBe(true)
    const first = decodeURIComponent(new URL(page.url()).hash.split('/').at(-1)!)
    await poll(() => page.locator('[data-fact="taken"]').getAttribute('data-source')).toBe('exif-original')
    expect(new URL(page.url()).hash).toMatch(/^#\/photos\/[^/]+\/[^/]+$/)
    await checkScreen(device, 'photos-photo')
    await page.keyboard.press('Escape')
    await poll(() => page.getByRole('dialog').count()).toBe(0)
    expect(new URL(page.url()).hash).toBe('#/photos')
    await poll(() => page.evaluate('document.activeElement?.dataset?.asset')).toBe(first)
    await device.context.close()
  }, 120_000)

  it('shows the same at 390×844 from the index, three columns', async () => {
    const device = await openDevice(browser, server.url, { phone: true })
    const { page } = device
    await page.setViewportSize({ width: 390, height: 844 })
    await openAs(page, server, account, '/')
    await poll(() => page.locator('.reading-dates').textContent()).toBe('20 photos')
    await poll(async () => (await decryptedThumbnails(page)).length).toBeGreaterThan(2)
    expect(await columnsOf(page)).toBe(3)
    expect(await everyRow(page)).toEqual(expectedRows(photos, 3))
    await checkScreen(device, 'photos-phone')
    await device.context.close()
  }, 60_000)

  it('says how to add photos when the account has none, at both sizes', async () => {
    const empty = await webAccount(server, 'timeline-empty')
    for (const phone of [false, true]) {
      const device: WatchedPage = await openDevice(browser, server.url, { phone })
      await device.page.setViewportSize(phone ? { width: 390, height: 844 } : { width: 1280, height: 900 })
      await openAs(device.page, server, empty, '/')
      await poll(() => device.page.getByText('No photos yet.').isVisible()).toBe(true)
      expect(await device.page.getByRole('link', { name: 'Add photos in an album' }).getAttribute('href')).toBe('#/albums')
      await checkScreen(device, phone ? 'photos-empty-phone' : 'photos-empty', { phone: false })
      await device.context.close()
    }
  }, 60_000)
})
