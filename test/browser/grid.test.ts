// The grid at scale in Chromium against a real server (docs/decisions/0032-grid-of-a-million.md):
// an album of COFFER_GRID_ASSETS real photos seeded through the SDK, taken to its last photo's
// thumbnail with the date scrubber, and a photo opened and closed leaves the grid where it was.
// It prints its figures (docs/benchmarks.md, "Grid of a million"). The million photos are the
// grid lab's (grid-lab.test.ts).
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkScreen, launchChromium, openDevice } from '../support/browser.ts'
import { decryptedThumbnails, liveAssetIds, seedAlbum } from '../support/gallery.ts'
import { clearLongTasks, heap, longestTask, mib, onScreen, recordLongTasks, type PageGlobals } from '../support/grid.ts'
import { startServer, type TestServer } from '../support/server.ts'
import { openAs, webAccount } from '../support/web-account.ts'

/** Real photos in the album: 300 in CI (seeding costs the server 50 to 80 ms a photo), COFFER_GRID_ASSETS=10000 by hand. */
const ASSETS = Number(process.env.COFFER_GRID_ASSETS ?? 300)

let server: TestServer
let browser: Browser

beforeAll(async () => {
  ;[server, browser] = await Promise.all([startServer(), launchChromium()])
}, 60_000)
afterAll(async () => {
  await browser?.close()
  await server?.close()
})

const poll = <T>(read: () => Promise<T>, timeout = 15_000) => expect.poll(read, { timeout })

describe('the grid', () => {
  it(
    `takes an album of ${ASSETS} real photos to its last thumbnail with the scrubber, and keeps its place across a photo opened and closed`,
    async () => {
      const seeding = performance.now()
      const account = await webAccount(server, 'grid-many')
      const { album } = await seedAlbum(account.library, 'Many', ASSETS, 8)
      const seeded = performance.now() - seeding
      const last = (await liveAssetIds(account.library, album.albumId)).at(-1)!
      const device = await openDevice(browser, server.url)
      const { page } = device
      await recordLongTasks(page)
      const opening = performance.now()
      await openAs(page, server, account, `/#/albums/${album.albumId}`)
      await poll(async () => (await decryptedThumbnails(page)).length, 30_000).toBeGreaterThan(8)
      const firstScreen = performance.now() - opening
      await poll(() => page.getByText(`${ASSETS} photos.`).isVisible(), 120_000).toBe(true)
      const scanned = performance.now() - opening

      const scrubber = page.getByRole('slider', { name: 'Jump to a month' })
      await scrubber.focus()
      await clearLongTasks(page)
      const jumping = performance.now()
      await scrubber.press('End')
      const lastTile = page.locator(`a[data-asset="${last}"] img`)
      await poll(() => lastTile.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth), 30_000).toBeGreaterThan(0)
      const endJump = performance.now() - jumping
      expect(await onScreen(page)).toContain(last)

      // Back up with the wheel, a screen at a time.
      await page.mouse.move(300, 500)
      for (let step = 0; step < 20; step++) {
        await page.mouse.wheel(0, -400)
        await page.waitForTimeout(30)
      }
      await page.waitForTimeout(300)
      const longest = await longestTask(page)

      // A photo opened from the grid and closed: the same tiles on screen.
      const before = await onScreen(page)
      const scrolled = await page.evaluate(() => (globalThis as unknown as PageGlobals).scrollY)
      await page.locator(`a[data-asset="${before[0]}"]`).click()
      await poll(() => page.getByRole('dialog').isVisible()).toBe(true)
      await page.keyboard.press('Escape')
      await poll(() => page.getByRole('dialog').count()).toBe(0)
      expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).scrollY)).toBe(scrolled)
      expect(await onScreen(page)).toEqual(before)
      await checkScreen(device, 'album-scrubber')
      console.log(
        `grid, album of ${ASSETS} real photos: seeded in ${(seeded / 1000).toFixed(1)} s, first screen ${firstScreen.toFixed(0)} ms, whole feed read ${(scanned / 1000).toFixed(1)} s, ` +
          `scrubber to the last thumbnail ${endJump.toFixed(0)} ms, longest task while scrolling ${longest.toFixed(0)} ms, JS heap ${mib(await heap(page))}`,
      )
      await device.context.close()
    },
    30 * 60_000,
  )
})
