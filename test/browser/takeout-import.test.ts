// Importing a Google Takeout export from the web app (issue 42, decision 0071; docs/web.md,
// "Importing from Google Takeout"), in Chromium at 1280×900 and 390×844, each screen axe-checked:
// the zips of an export built here (test/support/takeout.ts: two archives, an album's photo and
// sidecar in the second) are chosen on #/import (reached from the upload chooser, and from the
// empty Photos screen), planned (photos, albums, the trash and the other files left out), imported
// with the upload panel's progress and reported as coffer-photos reports it; the photos then carry
// the sidecar's date (at the offset the EXIF clock gives), place, description and favourite mark,
// the album holds its photos (one stored once in two albums), and the trashed photo is nowhere.
// The zips are never read whole: every read of them in the page is a slice of at most
// ZIP_READ_MAX bytes (Blob.prototype.slice watched), whatever the entry's size; a video past the
// in-memory bound is gathered from its entry's stream and arrives whole. Picked again, the same
// zips send nothing.
import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { albumRecordId, liveEntries, namedAlbums } from '../../src/client/albums.ts'
import { IN_MEMORY_FILE_MAX, openStoredAsset } from '../../src/client/files.ts'
import { contentMacOf } from '../../src/client/format/content.ts'
import type { AssetMetadata } from '../../src/client/format/metadata.ts'
import { ZIP_READ_MAX } from '../../src/client/zip-reader.ts'
import { checkScreen, openDevice, serverAndBrowser, type WatchedPage } from '../support/browser.ts'
import { decryptedThumbnails } from '../support/gallery.ts'
import { writeOpaque, writePhoto } from '../support/photos.ts'
import { albumMetadataJson, bytesOf, sidecarJson, writeTakeout, type ExportItem } from '../support/takeout.ts'
import { openAs, webAccount, type WebAccount } from '../support/web-account.ts'

const shared = serverAndBrowser()
let work: string
let archives: string[]
let largeArchives: string[]
let largeVideo: Uint8Array

const YEAR = 'Photos from 2019'
const ALBUM = 'Trip to Rome'
const ROME = { latitude: 41.8902102, longitude: 12.4922309 }
const at = (iso: string): number => Date.parse(iso)

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'coffer-takeout-web-'))
  const jpeg = async (name: string, seed: number, options: { captured?: Date; utcOffsetMinutes?: number | null } = {}) => {
    const file = path.join(work, 'made', name)
    await writePhoto(file, { format: 'jpeg', width: 320, height: 240, seed, ...options })
    return bytesOf(file)
  }
  // The EXIF wall clock 12:34:56 without an offset, the sidecar's moment 10:34:56 UTC: shown at +02:00.
  const colosseum = await jpeg('1.jpg', 1, { captured: new Date('2019-07-04T12:34:56Z'), utcOffsetMinutes: null })
  const forum = await jpeg('2.jpg', 2)
  const binned = await jpeg('3.jpg', 3)
  const noSidecar = await jpeg('4.jpg', 4, { captured: new Date('2019-07-06T09:00:00Z'), utcOffsetMinutes: 60 })
  const trastevere = await jpeg('6.jpg', 6)
  // Three MiB: larger than a read of the zip, so its entry is streamed in several.
  await writeOpaque(path.join(work, 'made', 'clip.mp4'), 3 << 20, 5)
  const clip = await bytesOf(path.join(work, 'made', 'clip.mp4'))
  const items: ExportItem[] = [
    { folder: YEAR, name: 'IMG_0001.jpg', data: colosseum },
    {
      folder: YEAR,
      name: 'IMG_0001.jpg.supplemental-metadata.json',
      data: sidecarJson({ title: 'IMG_0001.jpg', takenMs: at('2019-07-04T10:34:56Z'), geo: ROME, description: 'The Colosseum\nat noon', favorited: true }),
    },
    { folder: YEAR, name: 'IMG_0002.jpg', data: forum },
    { folder: YEAR, name: 'IMG_0002.jpg.json', data: sidecarJson({ title: 'IMG_0002.jpg', takenMs: at('2019-07-05T08:00:00Z') }) },
    { folder: YEAR, name: 'IMG_0003.jpg', data: binned },
    { folder: YEAR, name: 'IMG_0003.jpg.json', data: sidecarJson({ title: 'IMG_0003.jpg', takenMs: at('2019-07-05T09:00:00Z'), trashed: true }) },
    { folder: YEAR, name: 'IMG_0004.jpg', data: noSidecar },
    { folder: YEAR, name: 'VID_0005.mp4', data: clip },
    { folder: YEAR, name: 'VID_0005.mp4.supplemental-metadata.json', data: sidecarJson({ title: 'VID_0005.mp4', takenMs: at('2019-07-05T18:00:00Z') }) },
    { folder: YEAR, name: 'notes.txt', data: 'not a photo' },
    // The album, in the export's second zip: a copy of IMG_0002 (stored once, added to the album) and a photo only there.
    { folder: ALBUM, name: 'metadata.json', data: albumMetadataJson(ALBUM), archive: 1 },
    { folder: ALBUM, name: 'IMG_0002.jpg', data: forum, archive: 1 },
    { folder: ALBUM, name: 'IMG_0002.jpg.json', data: sidecarJson({ title: 'IMG_0002.jpg', takenMs: at('2019-07-05T08:00:00Z') }), archive: 1 },
    { folder: ALBUM, name: 'IMG_0006.jpg', data: trastevere, archive: 1 },
    { folder: ALBUM, name: 'IMG_0006.jpg.json', data: sidecarJson({ title: 'IMG_0006.jpg', takenMs: at('2019-07-06T17:00:00Z'), geo: ROME }), archive: 1 },
  ]
  await mkdir(path.join(work, 'export'))
  await mkdir(path.join(work, 'large'))
  archives = await writeTakeout(path.join(work, 'export'), items)
  // Past the in-memory bound: gathered into a Blob from its entry's stream, not held in one buffer.
  await writeOpaque(path.join(work, 'made', 'long.mp4'), IN_MEMORY_FILE_MAX + (1 << 20), 7)
  largeVideo = await bytesOf(path.join(work, 'made', 'long.mp4'))
  largeArchives = await writeTakeout(path.join(work, 'large'), [
    // Random bytes do not compress: zlib's default level writes them as stored blocks all the same,
    // after seconds of looking for matches; level 0 writes those blocks at once (still a deflated entry).
    { folder: YEAR, name: 'VID_0007.mp4', data: largeVideo, level: 0 },
    { folder: YEAR, name: 'VID_0007.mp4.json', data: sidecarJson({ title: 'VID_0007.mp4', takenMs: at('2019-08-01T10:00:00Z'), geo: ROME }) },
  ])
}, 120_000)
afterAll(async () => {
  if (work !== undefined) await rm(work, { recursive: true, force: true })
})

/**
 * Watches the page's reads of the zips it was given: the largest slice of a File named *.zip,
 * and how often one was read whole (arrayBuffer, bytes, stream or text on the File itself).
 */
const WATCH_ZIP_READS = `(() => {
  const reads = { largest: 0, whole: 0 }
  globalThis.__zipReads = reads
  const isZip = (blob) => blob instanceof File && blob.name.endsWith('.zip')
  const slice = Blob.prototype.slice
  Blob.prototype.slice = function (start = 0, end = this.size, type) {
    if (isZip(this)) reads.largest = Math.max(reads.largest, Math.min(end, this.size) - start)
    return slice.call(this, start, end, type)
  }
  for (const method of ['arrayBuffer', 'bytes', 'stream', 'text']) {
    const original = Blob.prototype[method]
    if (original !== undefined)
      Blob.prototype[method] = function (...args) {
        if (isZip(this)) reads.whole++
        return original.apply(this, args)
      }
  }
})()`

const zipReads = (page: Page): Promise<{ largest: number; whole: number }> => page.evaluate('globalThis.__zipReads')

const zipPicker = (page: Page) => page.locator('input[type=file][aria-label="Zip files of the export"]')

/** The live photos of an album from Node, each by its stored name with its metadata: what every device sees. */
async function photosOf(account: WebAccount, albumId: string): Promise<Map<string, AssetMetadata>> {
  const record = await albumRecordId(account.library.masterKey, albumId)
  const photos = new Map<string, AssetMetadata>()
  for (const entry of await liveEntries(account.library.client, albumId)) {
    if (entry.asset_id === record) continue
    const { metadata } = await openStoredAsset({ ...account.library, albumId }, entry)
    photos.set(metadata.name, metadata)
  }
  return photos
}

async function albumIdOf(account: WebAccount, name: string): Promise<string> {
  const album = (await namedAlbums(account.library)).find((a) => a.name === name)
  expect(album, `the album "${name}"`).toBeDefined()
  return album!.albumId
}

/** Chooses the zips and waits for the plan; answers the plan's lines. */
async function plan(page: Page, zips: readonly string[]): Promise<string[]> {
  await zipPicker(page).setInputFiles([...zips])
  await expect.poll(() => page.getByRole('heading', { name: 'What will be imported' }).isVisible(), { timeout: 30_000 }).toBe(true)
  return page.locator('.takeout-plan li').allTextContents()
}

/** Imports what is planned and waits for the report; answers its lines. */
async function importAll(page: Page, button: string): Promise<string[]> {
  await page.getByRole('button', { name: button }).click()
  await expect.poll(() => page.getByRole('heading', { name: 'Report' }).isVisible(), { timeout: 120_000, interval: 500 }).toBe(true)
  return page.locator('.takeout-report > ul > li').allTextContents()
}

const SIZES = [
  { label: 'desktop', suffix: '', viewport: { width: 1280, height: 900 } },
  { label: 'phone', suffix: '-phone', viewport: { width: 390, height: 844 } },
] as const

describe.each(SIZES)('importing a Google Takeout export at $label size', ({ label, suffix, viewport }) => {
  it('plans the zips, imports them with progress, reports, and the photos carry what their sidecars said', async () => {
    const { server, browser } = shared
    const account = await webAccount(server, `takeout-${label}`)
    const device: WatchedPage = await openDevice(browser, server.url, { viewport })
    await device.context.addInitScript(WATCH_ZIP_READS)
    const { page } = device
    await openAs(page, server, account, '/#/photos')
    await expect.poll(() => page.getByText('No photos yet.').isVisible(), { timeout: 15_000 }).toBe(true)
    if (label === 'desktop') {
      // Where uploads are chosen: below the albums of the upload chooser.
      await page.getByRole('button', { name: 'Upload', exact: true }).click()
      const dialog = page.getByRole('dialog', { name: 'Upload to which album?' })
      await expect.poll(() => dialog.getByRole('link', { name: 'Import from Google Takeout' }).isVisible()).toBe(true)
      await checkScreen(device, 'takeout-chooser', { phone: false })
      await dialog.getByRole('link', { name: 'Import from Google Takeout' }).click()
    } else await page.getByRole('link', { name: 'import your Google Photos library' }).click()
    await expect.poll(() => page.getByRole('heading', { name: 'Import from Google Takeout' }).isVisible()).toBe(true)
    await checkScreen(device, `takeout-start${suffix}`, { phone: false })

    expect(await plan(page, archives)).toEqual([
      expect.stringMatching(/^5 photos and videos \([\d.]+ MB\) into 2 albums$/),
      '4 with the date, place, description and favourite mark Google Photos had; 1 without (dated by their own EXIF)',
      "1 in Google Photos' trash, left out",
      '1 other file left out: 1 not a photo or video (by its name)',
    ])
    expect(await page.getByRole('list', { name: 'Zip files' }).getByRole('listitem').allTextContents()).toEqual(
      archives.map((archive) => expect.stringContaining(path.basename(archive))),
    )
    expect(await page.getByLabel('Album for your library').inputValue()).toBe('Google Photos')
    expect(await page.getByLabel('Keep where photos were taken').isChecked()).toBe(true)
    await page.getByText('The 2 albums').click()
    await checkScreen(device, `takeout-plan${suffix}`, { phone: false })

    // About 500 kB/s out: the clip takes some seconds, the progress is seen.
    const cdp = await device.context.newCDPSession(page)
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 20, downloadThroughput: -1, uploadThroughput: 500_000 })
    // A whole feed read at once (liveEntries' pages of 1000) would be a copy finding its photo's entry the slow way.
    const wholeFeeds: string[] = []
    page.on('request', (request) => {
      if (/\/feed\?after=\d+&limit=1000$/.test(request.url())) wholeFeeds.push(request.url())
    })
    await page.getByRole('button', { name: 'Import 5 photos and videos' }).click()
    await expect
      .poll(() => page.locator('.uploads li[data-state=sending]').filter({ hasText: 'VID_0005.mp4' }).textContent(), { timeout: 30_000 })
      .toMatch(/Encrypting and sending/)
    expect(await page.getByRole('button', { name: 'Stop' }).isVisible()).toBe(true)
    device.context.setDefaultTimeout(60_000)
    await checkScreen(device, `takeout-progress${suffix}`, { phone: false })
    device.context.setDefaultTimeout(10_000)
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 })
    await expect.poll(() => page.getByRole('heading', { name: 'Report' }).isVisible(), { timeout: 120_000, interval: 500 }).toBe(true)
    expect(await page.locator('.takeout-report > ul > li').allTextContents()).toEqual([
      expect.stringMatching(/^5 imported \([\d.]+ MB sent\), 0 already here, 0 failed$/),
      'Google Photos details: 4 matched (4 by name), 1 without',
      'Albums: 2; 1 photo added to a further album',
      "Left out: 1 in Google Photos' trash; 1 not a photo or video (by its name)",
    ])
    expect(await page.locator('.uploads li[data-state=stored]').count()).toBe(5)
    // The copy into the album was given its entry, read from where the import's own writes began.
    expect(wholeFeeds).toEqual([])
    await checkScreen(device, `takeout-report${suffix}`, { phone: false })
    // Never the whole zip: every read a slice of one window at most, though the clip's zip is larger.
    const reads = await zipReads(page)
    expect(reads.whole).toBe(0)
    expect(reads.largest).toBeGreaterThan(0)
    expect(reads.largest).toBeLessThanOrEqual(ZIP_READ_MAX)

    // What every device sees: the library's album (IMG_0002 stored once, then added to the album), the album, no trash.
    const library = await photosOf(account, await albumIdOf(account, 'Google Photos'))
    const trip = await photosOf(account, await albumIdOf(account, ALBUM))
    expect([...library.keys()].sort()).toEqual([`${YEAR}/IMG_0001.jpg`, `${YEAR}/IMG_0002.jpg`, `${YEAR}/IMG_0004.jpg`, `${YEAR}/VID_0005.mp4`])
    expect([...trip.keys()].sort()).toEqual([`${YEAR}/IMG_0002.jpg`, `${ALBUM}/IMG_0006.jpg`])
    expect(library.get(`${YEAR}/IMG_0001.jpg`)).toMatchObject({
      captured: at('2019-07-04T10:34:56Z'),
      capturedSource: 'takeout',
      capturedOffset: 120,
      location: ROME,
      description: 'The Colosseum\nat noon',
      favourite: true,
    })
    // No sidecar: its own EXIF date, and no place (the web app reads none from EXIF).
    expect(library.get(`${YEAR}/IMG_0004.jpg`)).toMatchObject({ capturedSource: 'exif-original', capturedOffset: 60 })
    expect(library.get(`${YEAR}/IMG_0004.jpg`)!.location).toBeUndefined()
    expect(library.get(`${YEAR}/VID_0005.mp4`)).toMatchObject({ type: 'video/mp4', size: 3 << 20, capturedSource: 'takeout' })
    expect(trip.get(`${ALBUM}/IMG_0006.jpg`)).toMatchObject({ capturedSource: 'takeout', location: ROME })

    // In the app: the album with its photos, and a photo's info.
    await page.getByRole('link', { name: 'See your albums' }).click()
    await page.getByRole('link', { name: ALBUM }).first().click()
    await expect
      .poll(() => decryptedThumbnails(page).then((names) => names.sort()), { timeout: 20_000 })
      .toEqual([`${YEAR}/IMG_0002.jpg`, `${ALBUM}/IMG_0006.jpg`])
    await page.goto(`/#/albums/${await albumIdOf(account, 'Google Photos')}`)
    await expect
      .poll(() => decryptedThumbnails(page).then((names) => names.sort()), { timeout: 20_000 })
      .toEqual([`${YEAR}/IMG_0001.jpg`, `${YEAR}/IMG_0002.jpg`, `${YEAR}/IMG_0004.jpg`])
    await page.getByRole('link', { name: `${YEAR}/IMG_0001.jpg` }).click()
    const dialog = page.getByRole('dialog')
    await dialog.getByRole('button', { name: 'Info', exact: true }).click()
    const info = dialog.locator('#photo-info')
    await expect.poll(() => info.locator('[data-fact=taken]').getAttribute('data-source')).toBe('takeout')
    expect(await info.locator('[data-fact=taken] time').getAttribute('datetime')).toBe('2019-07-04T12:34:56+02:00')
    expect(await info.locator('[data-fact=taken]').textContent()).toMatch(/UTC\+02:00 · from Google Photos \(Takeout\)$/)
    expect(await info.locator('[data-fact=description]').textContent()).toBe('The Colosseum\nat noon')
    expect(await info.locator('[data-fact=favourite]').isVisible()).toBe(true)
    expect(await dialog.getByRole('button', { name: 'Favourite' }).getAttribute('aria-pressed')).toBe('true')
    expect(await info.locator('[data-fact=place]').textContent()).toBe('41.8902° N, 12.4922° E')
    await checkScreen(device, `takeout-photo-info${suffix}`, { phone: false })

    if (label === 'desktop') {
      // The same zips again: every photo found where it was stored, nothing sent, the copy there already.
      await page.goto('/#/import')
      await page.getByRole('button', { name: 'Import other zip files' }).click()
      await plan(page, archives)
      expect(await importAll(page, 'Import 5 photos and videos')).toEqual([
        '0 imported (0 bytes sent), 5 already here, 0 failed',
        expect.stringMatching(/^Google Photos details: 4 matched/),
        'Albums: 2; 1 photo in a further album already',
        expect.stringMatching(/^Left out: /),
      ])
      expect((await photosOf(account, await albumIdOf(account, 'Google Photos'))).size).toBe(4)
      expect((await photosOf(account, await albumIdOf(account, ALBUM))).size).toBe(2)
    }
    await device.context.close()
  }, 240_000)
})

describe('importing a video larger than the in-memory bound', () => {
  it('gathers it from its entry, reading the zip a slice at a time, and stores it whole; places left out when asked', async () => {
    const { server, browser } = shared
    const account = await webAccount(server, 'takeout-large')
    const device = await openDevice(browser, server.url, { viewport: { width: 1280, height: 900 } })
    await device.context.addInitScript(WATCH_ZIP_READS)
    const { page } = device
    await openAs(page, server, account, '/#/import')
    await expect.poll(() => page.getByRole('heading', { name: 'Import from Google Takeout' }).isVisible(), { timeout: 15_000 }).toBe(true)
    // A file that is not a zip is named, with what to choose instead.
    await zipPicker(page).setInputFiles({ name: 'photos.zip', mimeType: 'application/zip', buffer: Buffer.from('not a zip at all') })
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toBe(
        'photos.zip is not a zip file that can be read (not a zip archive: no end-of-central-directory record). Choose the zip files of the export as Google Takeout made them.',
      )
    expect(await page.getByRole('button', { name: 'Choose other zip files' }).isVisible()).toBe(true)
    expect(await plan(page, largeArchives)).toEqual([
      expect.stringMatching(/^1 photo or video \(6\d\.\d MB\) into 1 album$/),
      '1 with the date, place, description and favourite mark Google Photos had',
    ])
    await page.getByLabel('Album for your library').fill('From Google')
    await page.getByLabel('Keep where photos were taken').uncheck()
    expect(await importAll(page, 'Import 1 photo or video')).toEqual([
      expect.stringMatching(/^1 imported \(6\d\.\d MB sent\), 0 already here, 0 failed$/),
      'Google Photos details: 1 matched (1 by name), 0 without',
      'Albums: 1',
    ])
    const reads = await zipReads(page)
    expect(reads.whole).toBe(0)
    expect(reads.largest).toBeLessThanOrEqual(ZIP_READ_MAX)
    const stored = await photosOf(account, await albumIdOf(account, 'From Google'))
    const video = stored.get(`${YEAR}/VID_0007.mp4`)!
    expect(video).toMatchObject({ size: largeVideo.length, capturedSource: 'takeout', captured: at('2019-08-01T10:00:00Z') })
    expect(video.location).toBeUndefined()
    // Its bytes arrived whole: the content mac the browser wrote is the one of the video's SHA-256.
    expect(video.contentMac).toEqual(await contentMacOf(account.library.masterKey, createHash('sha256').update(largeVideo).digest()))
    expect(device.problems).toEqual([])
    await device.context.close()
  }, 240_000)
})
