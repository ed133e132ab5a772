// Albums one can organise (decision 0060) in Chromium against a real server, at 1280×900 and
// 390×844: the empty states (no albums yet, an empty album), the cards with their cover, count
// and the months the photos were taken over, a rename from the album's page and the cover set
// from the photo view's menu, both seen from Node as every other device sees them. Each screen
// passes axe and is photographed.
import type { Browser } from 'playwright-core'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { albumRecordOf, openAlbum } from '../../src/client/albums.ts'
import { checkScreen, launchChromium, openDevice } from '../support/browser.ts'
import { seedAlbum } from '../support/gallery.ts'
import { openAs, webAccount, type WebAccount } from '../support/web-account.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
let browser: Browser
let account: WebAccount

beforeAll(async () => {
  ;[server, browser] = await Promise.all([startServer(), launchChromium()])
  account = await webAccount(server, 'albums')
}, 60_000)
afterAll(async () => {
  await browser?.close()
  await server?.close()
})

const poll = (read: () => Promise<unknown>, timeout = 20_000) => expect.poll(read, { timeout })
/** Dates taken of the seeded photos: July 2019, August 2020, August 2021. */
const TAKEN = [Date.UTC(2019, 6, 14, 12), Date.UTC(2020, 7, 2, 9), Date.UTC(2021, 7, 20, 18)]
/** Their thumbnails: a warm, a blue and a green gradient, so that the covers on the screenshots tell apart. */
const COLOURS = [
  [230, 120, 50],
  [60, 120, 220],
  [70, 170, 100],
] as const

async function gradient(n: number): Promise<Uint8Array> {
  const [r, g, b] = COLOURS[n]!
  const size = 64
  const pixels = Buffer.alloc(size * size * 3)
  for (let i = 0; i < size * size; i++) {
    const light = 0.6 + (0.4 * (i % size)) / size
    pixels.set([r * light, g * light, b * light], i * 3)
  }
  return new Uint8Array(
    await sharp(pixels, { raw: { width: size, height: size, channels: 3 } })
      .webp()
      .toBuffer(),
  )
}

describe('albums', () => {
  it('says what to do when there are none or an album is empty; shows each album as a card; renames one and sets its cover', async () => {
    const desktop = await openDevice(browser, server.url, { viewport: { width: 1280, height: 900 } })
    const phone = await openDevice(browser, server.url, { viewport: { width: 390, height: 844 } })
    for (const [device, name] of [
      [desktop, 'albums-empty'],
      [phone, 'albums-empty-phone'],
    ] as const) {
      await openAs(device.page, server, account, '/#/albums')
      await device.page.getByRole('heading', { name: 'Create an album' }).waitFor()
      await checkScreen(device, name, { phone: false })
    }

    const { album, assetIds } = await seedAlbum(account.library, 'Holiday', 3, 1, gradient, (n) => TAKEN[n]!)
    const empty = await openAlbum(account.library, 'Empty')
    const card = (page: typeof desktop.page, name: string) => page.locator('.album-card', { hasText: name })
    for (const [device, name] of [
      [desktop, 'albums'],
      [phone, 'albums-phone'],
    ] as const) {
      await device.page.reload()
      const holiday = card(device.page, 'Holiday')
      await poll(() => holiday.locator('.album-facts').textContent()).toBe('3 photosJul 2019 – Aug 2021')
      // No cover chosen: the newest photo by date taken.
      await poll(() => holiday.locator(`.album-cover[data-cover="${assetIds[2]}"] img`).isVisible()).toBe(true)
      await poll(() => card(device.page, 'Empty').locator('.album-facts').textContent()).toBe('0 photos')
      await checkScreen(device, name, { phone: false })
    }

    // Rename from the album's page (Enter saves), seen from Node.
    const { page } = desktop
    await card(page, 'Holiday').click()
    await page.getByRole('heading', { name: 'Holiday' }).waitFor()
    await page.getByRole('button', { name: 'Rename' }).click()
    const field = page.getByRole('textbox', { name: 'Album name' })
    expect(await field.evaluate((input) => input === input.ownerDocument.activeElement)).toBe(true)
    await field.fill('Spain 2019')
    await checkScreen(desktop, 'album-rename', { phone: false })
    await field.press('Enter')
    await page.getByRole('heading', { name: 'Spain 2019' }).waitFor()
    await poll(async () => (await albumRecordOf(account.library, album.albumId))?.name).toBe('Spain 2019')

    // The oldest photo made the cover from the photo view's menu.
    await page.goto(`/#/albums/${album.albumId}/${assetIds[0]}`)
    const more = page.getByRole('button', { name: 'More' })
    await more.click()
    await page.getByRole('button', { name: 'Set as album cover' }).click()
    await poll(async () => (await albumRecordOf(account.library, album.albumId))?.cover).toBe(assetIds[0])
    await more.click()
    expect(await page.getByRole('button', { name: 'This is the album cover' }).isDisabled()).toBe(true)
    await more.click()
    await page.keyboard.press('Escape')
    await page.getByRole('dialog').waitFor({ state: 'hidden' })
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Albums' }).click()
    await poll(() => card(page, 'Spain 2019').locator(`.album-cover[data-cover="${assetIds[0]}"] img`).isVisible()).toBe(true)
    expect(await card(page, 'Holiday').count()).toBe(0)

    // An empty album says how to fill it; at phone width, Escape leaves a rename as it was.
    await card(page, 'Empty').click()
    await page.getByRole('heading', { name: 'Add photos' }).waitFor()
    await checkScreen(desktop, 'album-empty', { phone: false })
    await phone.page.goto(`/#/albums/${empty.albumId}`)
    await phone.page.getByRole('heading', { name: 'Add photos' }).waitFor()
    await checkScreen(phone, 'album-empty-phone')
    await phone.page.getByRole('button', { name: 'Rename' }).click()
    await phone.page.getByRole('textbox', { name: 'Album name' }).fill('Someday')
    await checkScreen(phone, 'album-rename-phone')
    await phone.page.keyboard.press('Escape')
    await phone.page.getByRole('heading', { name: 'Empty' }).waitFor()
    expect((await albumRecordOf(account.library, empty.albumId))?.name).toBe('Empty')
  }, 180_000)
})
