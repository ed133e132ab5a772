// Favourites, Add to album… and Move to album… in the viewer (decision 0061), in Chromium: the
// heart (and `f`) marks a photo, "Add to album…" puts it in a second album through the album
// chooser, the Photos screen then shows it once with both albums in its info panel and a filled
// heart, the Favourites screen lists it, and "Move to album…" takes another photo out of its
// album into the other. The album chooser and the Favourites screen pass axe at 1280×900 and
// 390×844; their screenshots are docs/web/screens/album-chooser*.png and favourites*.png.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ALBUM_RECORD_TYPE, findAssetEntry, liveEntries, openAlbum } from '../../src/client/albums.ts'
import { memorySource, restoreFile } from '../../src/client/files.ts'
import { describeMedia } from '../../src/client/node/media.ts'
import { backupFile } from '../../src/client/upload.ts'
import { checkScreen, openDevice, serverAndBrowser, type WatchedPage } from '../support/browser.ts'
import { openAs, webAccount, type WebAccount } from '../support/web-account.ts'
import { writePhoto } from '../support/photos.ts'

const shared = serverAndBrowser()
let account: WebAccount
let lisbon: string
let porto: string
const photos: { name: string; assetId: string }[] = []

const poll = <T>(read: () => Promise<T>, timeout = 20_000) => expect.poll(read, { timeout })

beforeAll(async () => {
  account = await webAccount(shared.server, 'organise')
  const album = await openAlbum(account.library, 'Lisbon')
  lisbon = album.albumId
  porto = (await openAlbum(account.library, 'Porto')).albumId
  const folder = await mkdtemp(path.join(tmpdir(), 'coffer-organise-'))
  try {
    for (const [n, name] of ['IMG_3001.jpg', 'IMG_3002.jpg'].entries()) {
      const file = path.join(folder, name)
      await writePhoto(file, { format: 'jpeg', width: 900, height: 600, seed: 3001 + n, captured: new Date(Date.UTC(2024, 5, 1 + n, 10)) })
      const bytes = new Uint8Array(await readFile(file))
      const stored = await backupFile(
        { ...account.library, albumId: lisbon, protocolVersion: album.protocolVersion },
        memorySource(bytes, { name, type: 'image/jpeg', modified: null }),
        { describe: () => describeMedia(bytes, 'image/jpeg') },
      )
      photos.push({ name, assetId: stored.assetId })
    }
  } finally {
    await rm(folder, { recursive: true, force: true })
  }
}, 60_000)

/** The favourite mark the album's current version of the photo carries, read through the client library. */
async function favouriteIn(albumId: string, assetId: string): Promise<boolean | null> {
  const entry = await findAssetEntry(account.library.client, albumId, assetId)
  return entry === null ? null : (await restoreFile({ ...account.library, albumId }, entry)).metadata.favourite === true
}

const namesIn = async (albumId: string) => {
  const names: string[] = []
  for (const entry of await liveEntries(account.library.client, albumId)) {
    const { metadata } = await restoreFile({ ...account.library, albumId }, entry)
    if (metadata.type !== ALBUM_RECORD_TYPE) names.push(metadata.name)
  }
  return names.sort()
}

async function openPhoto(page: Page, name: string): Promise<void> {
  await page.getByRole('link', { name }).first().click()
  await poll(() => page.getByRole('dialog').getByRole('heading', { level: 2 }).textContent()).toBe(name)
}

async function chooseAlbum(page: Page, action: 'Add to album…' | 'Move to album…', album: string, watched?: { watched: WatchedPage; screen: string }) {
  await page.getByRole('dialog').getByRole('button', { name: 'More' }).click()
  await page.getByRole('button', { name: action }).click()
  const chooser = page.getByRole('dialog', { name: action === 'Add to album…' ? 'Add to which album?' : 'Move to which album?' })
  await chooser.getByRole('radio', { name: album }).check()
  if (watched !== undefined) await checkScreen(watched.watched, watched.screen)
  await chooser.getByRole('button', { name: action === 'Add to album…' ? 'Add' : 'Move', exact: true }).click()
}

describe('organising photos in the viewer', () => {
  let watched: WatchedPage
  afterAll(() => watched?.context.close())

  it('marks a favourite, adds it to another album, shows it once on Photos with both albums, lists it in Favourites, and moves another', async () => {
    watched = await openDevice(shared.browser, shared.server.url, { viewport: { width: 1280, height: 900 } })
    const { page } = watched
    await openAs(page, shared.server, account, `/#/albums/${encodeURIComponent(lisbon)}`)
    await page.getByRole('link', { name: photos[0]!.name }).waitFor({ timeout: 20_000 })
    await openPhoto(page, photos[0]!.name)
    const heart = page.getByRole('button', { name: 'Favourite' })
    expect(await heart.getAttribute('aria-pressed')).toBe('false')
    await page.keyboard.press('f')
    await poll(() => favouriteIn(lisbon, photos[0]!.assetId)).toBe(true)
    await poll(() => page.getByRole('button', { name: 'Favourite' }).getAttribute('aria-pressed')).toBe('true')

    await chooseAlbum(page, 'Add to album…', 'Porto', { watched, screen: 'album-chooser' })
    await page.getByRole('status').filter({ hasText: 'Added to Porto' }).waitFor()
    expect(await namesIn(porto)).toEqual([photos[0]!.name])
    expect(await namesIn(lisbon)).toEqual([photos[0]!.name, photos[1]!.name])

    // The Photos screen: the photo in two albums once, its info naming both, its heart filled.
    await page.goto('/#/photos')
    await poll(() => page.locator('[data-asset]').count()).toBe(2)
    await openPhoto(page, photos[0]!.name)
    await page.getByRole('button', { name: 'Info' }).click()
    await poll(() => page.locator('[data-fact=album]').textContent()).toBe('Lisbon, Porto')
    expect(await page.locator('[data-fact=favourite]').isVisible()).toBe(true)
    expect(await page.getByRole('button', { name: 'Favourite' }).getAttribute('aria-pressed')).toBe('true')

    await page.goto('/#/favourites')
    await poll(() => page.locator('[data-asset]').count()).toBe(1)
    await checkScreen(watched, 'favourites')

    // Move the other photo: out of Lisbon, into Porto; the view goes back to the album.
    await page.goto(`/#/albums/${encodeURIComponent(lisbon)}`)
    await openPhoto(page, photos[1]!.name)
    await chooseAlbum(page, 'Move to album…', 'Porto')
    await poll(() => page.getByRole('dialog').count()).toBe(0)
    await poll(() => namesIn(lisbon)).toEqual([photos[0]!.name])
    expect(await namesIn(porto)).toEqual([photos[0]!.name, photos[1]!.name])
    expect(watched.problems).toEqual([])
  }, 120_000)

  it('at phone width (the same page, narrowed): the Favourites screen and the album chooser', async () => {
    const { page } = watched
    await page.setViewportSize({ width: 390, height: 844 })
    await page.goto('/#/favourites')
    await poll(() => page.locator('[data-asset]').count()).toBe(1)
    await checkScreen(watched, 'favourites-phone')
    await openPhoto(page, photos[0]!.name)
    // Opened from the date index this time: the albums' names come from their records.
    await poll(() => page.locator('[data-fact=album]').textContent()).toBe('Lisbon, Porto')
    await page.getByRole('dialog').getByRole('button', { name: 'More' }).click()
    await page.getByRole('button', { name: 'Add to album…' }).click()
    await page.getByRole('dialog', { name: 'Add to which album?' }).getByRole('radio').first().waitFor()
    await checkScreen(watched, 'album-chooser-phone')
  }, 60_000)
})
