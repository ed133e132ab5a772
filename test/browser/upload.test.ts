// Uploading from the web app (issue 36, decision 0058), in Chromium at 1280×900 and 390×844,
// each screen axe-checked: a folder with a subfolder chosen with the folder picker lands with
// names from inside it ("sub/x.jpg"; hidden files and files that are not photos left out); the
// panel shows the whole upload's percentage, speed and time left while a few MiB go out (the
// network throttled, so that it lasts some seconds); on the Photos screen the Upload button asks
// for the album first (a new one, named there), then the photos, which land in it; files dropped
// on the Photos screen ask for the album too; copies of one photo dropped at once are one photo
// whose thumbnail opens (coffer-photos's case: test/client/photos-copies.test.ts). The folder
// walk of a drop (entries cannot be synthesized) is tested with fake entries in upload-rate.test.ts.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { albumFiles, namedAlbums, openAlbum } from '../../src/client/albums.ts'
import { checkScreen, openDevice, serverAndBrowser } from '../support/browser.ts'
import { decryptedThumbnails, liveAssetIds, picker } from '../support/gallery.ts'
import { writeOpaque, writePhoto } from '../support/photos.ts'
import { openAs, webAccount } from '../support/web-account.ts'

const shared = serverAndBrowser()
let folder: string

beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'coffer-upload-'))
  // Trip/a.jpg, Trip/sub/x.jpg, and what the folder picker leaves out.
  await mkdir(path.join(folder, 'Trip', 'sub'), { recursive: true })
  await mkdir(path.join(folder, 'Trip', '.cache'), { recursive: true })
  await writePhoto(path.join(folder, 'Trip', 'a.jpg'), { format: 'jpeg', width: 320, height: 240, seed: 1 })
  await writePhoto(path.join(folder, 'Trip', 'sub', 'x.jpg'), { format: 'jpeg', width: 320, height: 240, seed: 2 })
  await writePhoto(path.join(folder, 'Trip', '.cache', 'y.jpg'), { format: 'jpeg', width: 32, height: 32, seed: 3 })
  await writePhoto(path.join(folder, 'Trip', '.hidden.jpg'), { format: 'jpeg', width: 32, height: 32, seed: 4 })
  await writeFile(path.join(folder, 'Trip', 'notes.txt'), 'not a photo')
  // A few MiB for the progress: four 3 MiB clips.
  for (let n = 1; n <= 4; n++) await writeOpaque(path.join(folder, 'Clips', `clip-${n}.mp4`), 3 << 20, 40 + n)
  for (let n = 1; n <= 2; n++) await writePhoto(path.join(folder, 'Loose', `IMG_${n}.jpg`), { format: 'jpeg', width: 320, height: 240, seed: 10 + n })
}, 60_000)
afterAll(async () => {
  if (folder !== undefined) await rm(folder, { recursive: true, force: true })
})

const folderPicker = (page: Page) => page.locator('input[type=file][aria-label="Folder to add"]')
const stored = (page: Page) => page.locator('.uploads li[data-state=stored]').count()

/** Drops files (no folder: entries cannot be made by a script) on the page's main element, as from a desktop. */
async function dropFiles(page: Page, files: readonly { name: string; bytes: Buffer }[]): Promise<void> {
  const dataTransfer = await page.evaluateHandle(
    (files) => {
      const transfer = new (globalThis as unknown as { DataTransfer: new () => { items: { add(file: File): void } } }).DataTransfer()
      for (const file of files) transfer.items.add(new File([Uint8Array.from(atob(file.base64), (c) => c.charCodeAt(0))], file.name, { type: 'image/jpeg' }))
      return transfer
    },
    files.map((f) => ({ name: f.name, base64: f.bytes.toString('base64') })),
  )
  await page.locator('main').dispatchEvent('dragover', { dataTransfer })
  await page.locator('main').dispatchEvent('drop', { dataTransfer })
}

const SIZES = [
  { label: 'desktop', suffix: '', viewport: { width: 1280, height: 900 } },
  { label: 'phone', suffix: '-phone', viewport: { width: 390, height: 844 } },
] as const

describe.each(SIZES)('uploading at $label size', ({ label, suffix, viewport }) => {
  it('takes a folder with a subfolder from the folder picker: named from inside it, hidden files and non-photos left out', async () => {
    const { server, browser } = shared
    const account = await webAccount(server, `upload-folder-${label}`)
    const album = await openAlbum(account.library, 'Trip')
    const device = await openDevice(browser, server.url, { viewport })
    const { page } = device
    await openAs(page, server, account, `/#/albums/${album.albumId}`)
    await expect.poll(() => page.getByRole('heading', { name: 'Trip' }).isVisible(), { timeout: 15_000 }).toBe(true)
    expect(await page.getByRole('button', { name: 'Add a folder' }).isVisible()).toBe(true)
    await folderPicker(page).setInputFiles(path.join(folder, 'Trip'))
    await expect.poll(() => stored(page), { timeout: 30_000 }).toBe(2)
    await expect.poll(() => decryptedThumbnails(page).then((names) => names.sort()), { timeout: 15_000 }).toEqual(['a.jpg', 'sub/x.jpg'])
    expect(await liveAssetIds(account.library, album.albumId)).toHaveLength(2)
    await checkScreen(device, `upload-folder${suffix}`, { phone: false })
    await device.context.close()
  }, 90_000)

  it('shows the percentage, the speed and the time left while a few MiB go out', async () => {
    const { server, browser } = shared
    const account = await webAccount(server, `upload-progress-${label}`)
    const album = await openAlbum(account.library, 'Clips')
    const device = await openDevice(browser, server.url, { viewport })
    const { page } = device
    await openAs(page, server, account, `/#/albums/${album.albumId}`)
    await expect.poll(() => page.getByRole('heading', { name: 'Clips' }).isVisible(), { timeout: 15_000 }).toBe(true)
    // About 2 MB/s out: the 12 MiB take some seconds, the speed has time to be measured.
    const cdp = await device.context.newCDPSession(page)
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 20, downloadThroughput: -1, uploadThroughput: 2_000_000 })
    await folderPicker(page).setInputFiles(path.join(folder, 'Clips'))
    const summary = page.locator('.upload-summary')
    expect(await summary.getAttribute('aria-live')).toBe('polite')
    const seen: string[] = []
    await expect
      .poll(
        async () => {
          const text = (await summary.textContent()) ?? ''
          if (text !== seen.at(-1)) seen.push(text)
          return /^\d+% · [\d.]+ (kB|MB)\/s · (about .+ left|a few seconds left)$/.test(text)
        },
        { timeout: 60_000, interval: 200 },
      )
      .toBe(true)
    device.context.setDefaultTimeout(60_000)
    await checkScreen(device, `upload-progress-summary${suffix}`, { phone: false })
    device.context.setDefaultTimeout(10_000)
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 })
    await expect.poll(() => stored(page), { timeout: 120_000, interval: 500 }).toBe(4)
    // Once done, the line goes; it said "estimating…" before the first speed.
    await expect.poll(() => summary.textContent()).toBe('')
    console.log(`the whole upload's line at ${label} size: ${seen.join(' | ')}`)
    expect(seen.some((text) => /estimating…/.test(text))).toBe(true)
    expect(await liveAssetIds(account.library, album.albumId)).toHaveLength(4)
    await device.context.close()
  }, 180_000)

  it('asks on the Photos screen for the album first (a new one), then the photos, which land in it; a drop there asks too', async () => {
    const { server, browser } = shared
    const account = await webAccount(server, `upload-chooser-${label}`)
    await openAlbum(account.library, 'Summer 2021')
    const kept = await openAlbum(account.library, 'Birthdays')
    const device = await openDevice(browser, server.url, { viewport })
    const { page } = device
    await openAs(page, server, account, '/#/photos')
    await expect.poll(() => page.getByText('No photos yet.').isVisible(), { timeout: 15_000 }).toBe(true)
    await page.getByRole('button', { name: 'Upload', exact: true }).click()
    const dialog = page.getByRole('dialog', { name: 'Upload to which album?' })
    await expect.poll(() => dialog.getByRole('radio', { name: 'Birthdays' }).isVisible()).toBe(true)
    expect(await dialog.getByRole('radio').evaluateAll((radios) => radios.map((radio) => radio.parentElement?.textContent))).toEqual([
      'Birthdays',
      'Summer 2021',
      'A new album',
    ])
    await dialog.getByRole('radio', { name: 'A new album' }).check()
    await dialog.getByLabel('Name of the new album').fill('Lisbon')
    await checkScreen(device, `upload-chooser${suffix}`, { phone: false })
    await dialog.getByRole('button', { name: 'Continue' }).click()
    const files = page.getByRole('dialog', { name: 'Add to Lisbon' })
    await expect.poll(() => files.getByRole('button', { name: 'Choose a folder' }).isVisible()).toBe(true)
    await checkScreen(device, `upload-chooser-files${suffix}`, { phone: false })
    await picker(page).setInputFiles([path.join(folder, 'Loose', 'IMG_1.jpg'), path.join(folder, 'Loose', 'IMG_2.jpg')])
    // The album opens, and its uploads take the photos.
    await expect.poll(() => page.getByRole('heading', { name: 'Lisbon' }).isVisible(), { timeout: 15_000 }).toBe(true)
    await expect.poll(() => stored(page), { timeout: 30_000 }).toBe(2)
    const lisbon = (await namedAlbums(account.library)).find((a) => a.name === 'Lisbon')
    expect(lisbon).toBeDefined()
    expect(await liveAssetIds(account.library, lisbon!.albumId)).toHaveLength(2)

    // Files dropped on the Photos screen: the chooser first, then straight to the album chosen.
    await page.goto('/#/photos')
    await expect.poll(() => page.getByRole('button', { name: 'Upload', exact: true }).isVisible(), { timeout: 15_000 }).toBe(true)
    const { readFile } = await import('node:fs/promises')
    await dropFiles(page, [{ name: 'dropped.jpg', bytes: await readFile(path.join(folder, 'Trip', 'a.jpg')) }])
    const asked = page.getByRole('dialog', { name: 'Upload the dropped files to which album?' })
    await expect.poll(() => asked.getByRole('radio', { name: 'Birthdays' }).isVisible()).toBe(true)
    await asked.getByRole('radio', { name: 'Birthdays' }).check()
    await asked.getByRole('button', { name: 'Upload' }).click()
    await expect.poll(() => page.getByRole('heading', { name: 'Birthdays' }).isVisible(), { timeout: 15_000 }).toBe(true)
    await expect.poll(() => stored(page), { timeout: 30_000 }).toBe(1)
    expect(await liveAssetIds(account.library, kept.albumId)).toHaveLength(1)
    await device.context.close()
  }, 120_000)
})

describe('copies of one photo added at once', () => {
  it('are one photo: the first is stored, the others found stored, and its thumbnail and every file open', async () => {
    const { server, browser } = shared
    const account = await webAccount(server, 'upload-copies')
    const album = await openAlbum(account.library, 'Copies')
    const device = await openDevice(browser, server.url, { viewport: SIZES[0].viewport })
    const { page } = device
    await openAs(page, server, account, `/#/albums/${album.albumId}`)
    await expect.poll(() => page.getByRole('heading', { name: 'Copies' }).isVisible(), { timeout: 15_000 }).toBe(true)
    const { readFile } = await import('node:fs/promises')
    const bytes = await readFile(path.join(folder, 'Trip', 'sub', 'x.jpg'))
    // Sent two at a time: copies of one content at once would each have an upload session open on the one original.
    await dropFiles(
      page,
      Array.from({ length: 4 }, (_, i) => ({ name: `copy-${i}.jpg`, bytes })),
    )
    await expect.poll(() => page.locator('.uploads li[data-state=present]').count(), { timeout: 30_000 }).toBe(3)
    expect(await stored(page)).toBe(1)
    expect(await page.locator('.uploads li[data-state=failed]').count()).toBe(0)
    expect(await liveAssetIds(account.library, album.albumId)).toHaveLength(1)
    // The asset's bundle is the one its manifest names: the thumbnail its metadata names is the
    // one stored (derivative() checks its hash), and the grid shows it.
    for await (const file of albumFiles(account.library, album.albumId)) expect((await file.derivative('thumbnail'))?.length).toBeGreaterThan(0)
    await expect.poll(() => decryptedThumbnails(page).then((shown) => shown.length), { timeout: 30_000 }).toBe(1)
    await device.context.close()
  }, 120_000)
})
