// Selecting photos and saving them as a zip, in Chromium against a real server
// (docs/decisions/0062-selection-and-zip-downloads.md). Ten photos in two albums, dated over
// three days; the two albums share two file names. On the Photos screen: the arrow keys move the
// focus tile to tile (up and down to the nearest tile of the row above or below), Enter opens a
// photo and Escape comes back to its tile; Space selects, a shift-click selects a range, a day's
// check selects the day, Escape clears; Select all then Download streams a zip through the
// service worker whose every file is the original byte for byte, the second of a name renamed as
// a restore renames it; two photos deleted from the selection are gone for every device. On the
// album page, Download album writes through the save picker (here over the origin's private file
// system: Chromium's picker cannot be answered from a test) a zip of the album's photos. The bar
// at 1280x900 and 390x844, passing axe.
import { readFile } from 'node:fs/promises'
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { liveEntries } from '../../src/client/albums.ts'
import { restoreFile } from '../../src/client/files.ts'
import { listTrash } from '../../src/client/trash.ts'
import { checkScreen, openDevice, serverAndBrowser } from '../support/browser.ts'
import { seedAlbum } from '../support/gallery.ts'
import { openAs, webAccount } from '../support/web-account.ts'
import { readZip } from '../support/zip.ts'

const running = serverAndBrowser()

const poll = <T>(read: () => Promise<T>, timeout = 20_000) => expect.poll(read, { timeout })

const at = (day: string, hour: number): number => Date.parse(`${day}T${String(hour).padStart(2, '0')}:00:00Z`)

/** Album B's two photos are the newest; then A's: two more on that day, three the day before last, three a month earlier. */
const B_TAKEN = [at('2024-05-12', 15), at('2024-05-12', 14)]
const A_TAKEN = [at('2024-05-12', 13), at('2024-05-12', 12), at('2024-05-10', 12), at('2024-05-10', 11), at('2024-05-10', 10)]
A_TAKEN.push(at('2024-04-02', 12), at('2024-04-02', 11), at('2024-04-02', 10))

/** The focused element's asset id. */
const focusedAsset = (page: Page): Promise<string | undefined> => page.evaluate('document.activeElement?.dataset.asset')

/** Reads a file the fake save picker wrote into the origin's private file system. */
const savedFile = (page: Page, name: string): Promise<Buffer> =>
  page
    .evaluate<number[]>(`(async () => {
      const handle = await (await navigator.storage.getDirectory()).getFileHandle(${JSON.stringify(name)})
      return Array.from(new Uint8Array(await (await handle.getFile()).arrayBuffer()))
    })()`)
    .then((bytes) => Buffer.from(bytes))

describe('selecting photos', () => {
  it('moves with the arrows, selects by key, range and day, and saves a selection or an album as a zip byte for byte', async () => {
    const { server, browser } = running
    const account = await webAccount(server, 'web-selection')
    const a = await seedAlbum(account.library, 'Trip', A_TAKEN.length, 1, undefined, (n) => A_TAKEN[n]!)
    const b = await seedAlbum(account.library, 'Home', B_TAKEN.length, 1, undefined, (n) => B_TAKEN[n]!)
    // One at a time, so that assetIds[n] is swatch n. The timeline's order (newest first) and each photo's original, as Node restores it.
    const [a0, a1, ...aRest] = a.assetIds
    const order = [b.assetIds[0]!, b.assetIds[1]!, a0!, a1!, ...aRest]
    const originals = new Map<string, Buffer>()
    for (const album of [a.album, b.album])
      for (const entry of await liveEntries(account.library.client, album.albumId)) {
        if (!order.includes(entry.asset_id)) continue
        const parts: Uint8Array[] = []
        for await (const part of (await restoreFile({ ...account.library, albumId: album.albumId }, entry)).bytes) parts.push(part)
        originals.set(entry.asset_id, Buffer.concat(parts))
      }
    const name = (n: number) => `swatch-${String(n).padStart(5, '0')}.webp`
    const zipNames = [name(0), name(1), `swatch-00000 (${a0!.slice(0, 8)}).webp`, `swatch-00001 (${a1!.slice(0, 8)}).webp`, ...aRest.map((_, i) => name(i + 2))]

    const device = await openDevice(browser, server.url, { viewport: { width: 1280, height: 900 } })
    const { page } = device
    await openAs(page, server, account, '/#/photos')
    const tile = (index: number) => page.locator(`[data-asset="${order[index]}"]`)
    // Once every date is read, the tiles are in the timeline's order.
    const shown = () =>
      page.locator('.grid [data-asset]').evaluateAll((tiles) => tiles.map((t) => (t as unknown as { dataset: { asset: string } }).dataset.asset))
    await poll(shown).toEqual(order)

    // The arrows: along the timeline, and up and down to the nearest tile across (the day below has three).
    await tile(0).focus()
    await page.keyboard.press('ArrowRight')
    expect(await focusedAsset(page)).toBe(order[1])
    await page.keyboard.press('ArrowRight')
    await page.keyboard.press('ArrowRight')
    expect(await focusedAsset(page)).toBe(order[3])
    await page.keyboard.press('ArrowDown')
    expect(await focusedAsset(page)).toBe(order[6])
    await page.keyboard.press('ArrowUp')
    expect(await focusedAsset(page)).toBe(order[2])
    await page.keyboard.press('ArrowDown')
    await page.keyboard.press('ArrowDown')
    expect(await focusedAsset(page)).toBe(order[9])
    await page.keyboard.press('Enter')
    await poll(() => page.getByRole('dialog').isVisible()).toBe(true)
    expect(page.url()).toContain(order[9])
    await page.keyboard.press('Escape')
    await poll(() => focusedAsset(page)).toBe(order[9])

    // Space selects the focused tile; a shift-click selects from it to the tile clicked.
    const bar = page.getByRole('region', { name: 'Selection' })
    const count = () => bar.getByRole('status').textContent()
    await page.keyboard.press(' ')
    await poll(count).toBe('1 selected')
    await tile(6).click({ modifiers: ['Shift'] })
    await poll(count).toBe('4 selected')
    for (const index of [6, 7, 8, 9]) expect(await tile(index).getAttribute('aria-pressed')).toBe('true')
    expect(await tile(5).getAttribute('aria-pressed')).toBe('false')
    // The first day's check: its four photos join the selection; again, they leave it.
    const firstDay = page.locator('.grid-day').first().locator('.section-check')
    await firstDay.click()
    await poll(count).toBe('8 selected')
    expect(await firstDay.getAttribute('aria-pressed')).toBe('true')
    await checkScreen(device, 'selection', { phone: false })
    await firstDay.click()
    await poll(count).toBe('4 selected')
    await page.keyboard.press('Escape')
    await poll(() => bar.isVisible()).toBe(false)
    expect(await tile(6).getAttribute('aria-pressed')).toBeNull()

    // Select all, Download: streamed through the service worker into the browser's downloads.
    await page.evaluate(() => Object.defineProperty(globalThis, 'showSaveFilePicker', { value: undefined, configurable: true }))
    await page.getByRole('button', { name: 'Select', exact: true }).click()
    await bar.getByRole('button', { name: 'Select all' }).click()
    await poll(count).toBe('10 selected')
    const [download] = await Promise.all([page.waitForEvent('download'), bar.getByRole('button', { name: 'Download' }).click()])
    expect(download.suggestedFilename()).toBe('Photos.zip')
    const files = readZip(await readFile((await download.path())!))
    expect(files.map((file) => file.name)).toEqual(zipNames)
    for (const [i, file] of files.entries()) expect(file.bytes.equals(originals.get(order[i]!)!), file.name).toBe(true)
    await poll(() => page.getByText('Saved 10 photos as Photos.zip').isVisible()).toBe(true)

    // Delete two (the corner's check, then Space): moved to Recently deleted.
    await page.keyboard.press('Escape')
    // Without Select: the check in a tile's corner selects it (and the grid is then in select mode).
    const box = (await tile(8).boundingBox())!
    await tile(8).click({ position: { x: box.width - 12, y: 12 } })
    await poll(count).toBe('1 selected')
    expect(page.url()).not.toContain(order[8])
    // In select mode a tile is a button: Space selects it once, not once by the grid's keys and again by the button.
    await tile(9).focus()
    await page.keyboard.press(' ')
    await poll(count).toBe('2 selected')
    await bar.getByRole('button', { name: 'Delete' }).click()
    await poll(() => page.getByText('Moved 2 photos to Recently deleted.').isVisible(), 20_000).toBe(true)
    // In the trash (decision 0059): still live on the server, out of every list.
    expect((await listTrash(account.library)).files.map((file) => file.assetId).sort()).toEqual([order[8], order[9]].sort())
    await poll(() => page.locator('.grid [data-asset]').count()).toBe(8)

    // The album page's Download album, through the save picker (the origin's private file system stands in for the disk).
    await page.evaluate(`Object.defineProperty(globalThis, 'showSaveFilePicker', {
      configurable: true,
      value: async ({ suggestedName }) => (await navigator.storage.getDirectory()).getFileHandle(suggestedName, { create: true }),
    })`)
    await page.goto(`/#/albums/${a.album.albumId}`)
    await poll(() => page.locator('.grid [data-asset]').count()).toBe(6)
    await page.getByRole('button', { name: 'Download album' }).click()
    await poll(() => page.getByText('Saved 6 photos as Trip.zip').isVisible()).toBe(true)
    const album = readZip(await savedFile(page, 'Trip.zip'))
    expect(album.map((file) => file.name).sort()).toEqual([name(0), name(1), ...aRest.slice(0, 4).map((_, i) => name(i + 2))].sort())
    for (const file of album) {
      const n = Number(file.name.slice(7, 12))
      expect(file.bytes.equals(originals.get(a.assetIds[n]!)!), file.name).toBe(true)
    }

    // At phone width the bar sits at the bottom, above the app's bar.
    await page.setViewportSize({ width: 390, height: 844 })
    await page.goto('/#/photos')
    await poll(() => page.locator('.grid [data-asset]').count()).toBe(8)
    await page.getByRole('button', { name: 'Select', exact: true }).click()
    await tile(2).click()
    await tile(3).click()
    await poll(count).toBe('2 selected')
    await checkScreen(device, 'selection-phone')
    await device.context.close()
  }, 120_000)
})
