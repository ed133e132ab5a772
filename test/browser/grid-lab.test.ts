// The grid lab in Chromium (docs/decisions/0032-grid-of-a-million.md): web/grid-lab.html, the
// album's grid alone over a synthetic album of a million photos (2006 to 2025). The date scrubber
// jumps to the end and to a month in the middle and the right photos are on screen, the wheel and
// the keys scroll it, no main-thread task while scrolling takes over 50 ms, and no element is
// taller than Chromium's 16,777,216 px. It prints its figures (docs/benchmarks.md, "Grid of a
// million"). Engine-free: it runs once (vitest.config.ts), the server only serving the assets.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WEB_CSP, WEB_DIST } from '../../src/http/web-app.ts'
import { checkScreen, launchChromium, openDevice, type WatchedPage } from '../support/browser.ts'
import { clearLongTasks, heap, longestTask, mib, onScreen, recordLongTasks, tallest } from '../support/grid.ts'
import { startServer, type TestServer } from '../support/server.ts'

/** Photos in the lab's synthetic album. */
const LAB_ITEMS = 1_000_000
/** Chromium's tallest element. */
const ELEMENT_LIMIT = 16_777_216
/** The longest main-thread task allowed while scrolling. */
const LONGEST_TASK_MS = 50
/** Scrolling passes at most, the quietest checked (below). */
const PASSES = 3

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

/** The lab's place of a synthetic photo. */
const placeOf = (id: string): number => Number(id.slice('photo-'.length))
const labPhoto = (place: number): string => `photo-${String(place).padStart(7, '0')}`

/** A page at the grid lab, long tasks recorded from its start. No route of the server serves the lab (docs/web.md, "The grid lab"): its page comes from the build, its assets from the server. */
async function openLab(options: { phone?: boolean; items?: number } = {}): Promise<WatchedPage> {
  const lab = await openDevice(browser, server.url, options)
  const html = await readFile(path.join(WEB_DIST, 'grid-lab.html'))
  await lab.page.route(`${server.url}/grid-lab.html*`, (route) =>
    route.fulfill({ body: html, contentType: 'text/html', headers: { 'content-security-policy': WEB_CSP } }),
  )
  await recordLongTasks(lab.page)
  await lab.page.goto(`/grid-lab.html?items=${options.items ?? LAB_ITEMS}`)
  return lab
}

describe('the grid lab', () => {
  it('keeps the focused tile (the same element) when the grid is laid out again over more photos', async () => {
    const { page } = await openLab({ items: 1000 })
    const tile = page.locator(`[data-asset="${labPhoto(5)}"]`)
    await tile.focus()
    await page.evaluate(`globalThis.focusedBefore = document.activeElement`)
    const height = () => page.evaluate<number>(`document.querySelector('.grid').getBoundingClientRect().height`)
    const before = await height()
    // A click from the page's side: the focus stays on the tile.
    await page.evaluate(`[...document.querySelectorAll('button')].find((button) => button.textContent === 'Add 100').click()`)
    await poll(height).toBeGreaterThan(before)
    expect(await page.evaluate<boolean>(`document.activeElement === globalThis.focusedBefore && globalThis.focusedBefore.isConnected`)).toBe(true)
    expect(await page.evaluate<string | undefined>(`document.activeElement?.dataset.asset`)).toBe(labPhoto(5))
  })

  it(`holds ${LAB_ITEMS.toLocaleString('en')} photos: the scrubber jumps to the end and the middle, the wheel and keys scroll, no task over ${LONGEST_TASK_MS} ms, no element over ${ELEMENT_LIMIT} px`, async () => {
    const opening = performance.now()
    const lab = await openLab()
    const { page } = lab
    await poll(() => onScreen(page)).toContain(labPhoto(0))
    const firstScreen = performance.now() - opening
    expect(await page.locator('.tile').count()).toBeLessThan(200)
    expect(await tallest(page)).toBeLessThan(ELEMENT_LIMIT)

    // To the end with the keyboard: the last photo on screen.
    const scrubber = page.getByRole('slider', { name: 'Jump to a month' })
    expect(await scrubber.getAttribute('aria-valuetext')).toBe('January 2006')
    await scrubber.focus()
    let jumping = performance.now()
    await scrubber.press('End')
    await poll(() => onScreen(page)).toContain(labPhoto(LAB_ITEMS - 1))
    const endJump = performance.now() - jumping
    expect(await scrubber.getAttribute('aria-valuetext')).toBe('December 2025')
    expect(await tallest(page)).toBeLessThan(ELEMENT_LIMIT)

    // A month in the middle: ten years on from the start, January 2016's first photo (the 120th month of 240) heads the screen.
    await scrubber.press('Home')
    await poll(() => onScreen(page)).toContain(labPhoto(0))
    for (let year = 0; year < 10; year++) await scrubber.press('PageDown')
    await poll(() => scrubber.getAttribute('aria-valuetext')).toBe('January 2016')
    await poll(async () => (await onScreen(page))[0]).toBe(labPhoto(LAB_ITEMS / 2))
    expect(await page.getByRole('heading', { name: 'January 2016' }).isVisible()).toBe(true)

    // A click half way down the scrubber: the middle of the album.
    const box = (await scrubber.boundingBox())!
    jumping = performance.now()
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2)
    await poll(async () => Math.abs(placeOf((await onScreen(page))[0] ?? 'photo-0') - LAB_ITEMS / 2)).toBeLessThan(LAB_ITEMS / 100)
    const middleJump = performance.now() - jumping

    // A drag from the top to three quarters down: the grid follows, and ends three quarters in.
    await page.mouse.move(box.x + box.width / 2, box.y + 2)
    await page.mouse.down()
    await poll(async () => placeOf((await onScreen(page))[0] ?? 'photo-9999999')).toBeLessThan(LAB_ITEMS / 100)
    await page.mouse.move(box.x + box.width / 2, box.y + box.height * 0.75, { steps: 10 })
    await page.mouse.up()
    await poll(async () => Math.abs(placeOf((await onScreen(page))[0] ?? 'photo-0') - LAB_ITEMS * 0.75)).toBeLessThan(LAB_ITEMS / 100)

    // The observer sees long tasks: making the lab's million ids took one.
    expect(await longestTask(page)).toBeGreaterThan(LONGEST_TASK_MS)

    // The wheel over the grid moves it pixel for pixel, though its scroll space is scaled; then the
    // keys; then the wheel back up. A task of the grid's own would come back in every pass; one
    // stretched by a busy machine (another process given the core mid-task) does not: the check
    // is on the quietest of up to PASSES passes, and every pass's longest task is printed.
    const tile = (await page.locator('.tile').first().boundingBox())!
    const columns = Math.max(
      ...(await page.locator('.grid-row').evaluateAll((rows) => rows.map((row) => (row as unknown as { childElementCount: number }).childElementCount))),
    )
    const steps = 20
    const passes: number[] = []
    while (passes.length < PASSES && !passes.some((longest) => longest <= LONGEST_TASK_MS)) {
      await clearLongTasks(page)
      await page.mouse.move(tile.x + 10, 400)
      const firstBefore = placeOf((await onScreen(page))[0]!)
      for (let step = 0; step < steps; step++) {
        await page.mouse.wheel(0, 400)
        await page.waitForTimeout(30)
      }
      await page.waitForTimeout(300)
      const rows = (steps * 400) / (tile.height + 4)
      const moved = placeOf((await onScreen(page))[0]!) - firstBefore
      expect(moved).toBeGreaterThan(rows * columns * 0.8)
      expect(moved).toBeLessThan(rows * columns * 1.2)
      // The keys of the page (the scrubber has its own): nothing focused.
      await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { blur(): void } } }).document.activeElement.blur())
      const beforeKeys = placeOf((await onScreen(page))[0]!)
      for (let press = 0; press < 10; press++) await page.keyboard.press('PageDown')
      for (let press = 0; press < 10; press++) await page.keyboard.press('ArrowDown')
      await page.waitForTimeout(300)
      expect(placeOf((await onScreen(page))[0]!)).toBeGreaterThan(beforeKeys)
      for (let step = 0; step < steps; step++) {
        await page.mouse.wheel(0, -600)
        await page.waitForTimeout(30)
      }
      await page.waitForTimeout(300)
      passes.push(await longestTask(page))
    }
    const longest = Math.min(...passes)
    expect(longest).toBeLessThanOrEqual(LONGEST_TASK_MS)
    expect(await tallest(page)).toBeLessThan(ELEMENT_LIMIT)
    await checkScreen(lab, 'grid-lab', { phone: false })
    console.log(
      `grid lab, ${LAB_ITEMS} photos: first screen ${firstScreen.toFixed(0)} ms, scrubber to the end ${endJump.toFixed(0)} ms, to the middle ${middleJump.toFixed(0)} ms, ` +
        `longest task while scrolling ${passes.map((pass) => pass.toFixed(0)).join(' / ')} ms (by pass), JS heap ${mib(await heap(page))}, tallest element ${await tallest(page)} px`,
    )
    await lab.context.close()
  }, 120_000)

  it(`holds ${LAB_ITEMS.toLocaleString('en')} photos at phone width: three columns, the scroll space still capped, the scrubber reaches the last photo`, async () => {
    const lab = await openLab({ phone: true })
    const { page } = lab
    await poll(() => onScreen(page)).toContain(labPhoto(0))
    expect(await page.locator('.grid-row').first().locator('.tile').count()).toBe(3)
    // Tab down eight rows, past the screen's bottom: the focused tile is brought on screen.
    await page.locator(`a[data-asset="${labPhoto(0)}"]`).focus()
    for (let press = 0; press < 24; press++) await page.keyboard.press('Tab')
    await poll(() =>
      page.evaluate(() =>
        (globalThis as unknown as { document: { activeElement: { getAttribute(name: string): string | null } } }).document.activeElement.getAttribute(
          'data-asset',
        ),
      ),
    ).toBe(labPhoto(24))
    expect(await onScreen(page)).toContain(labPhoto(24))
    const scrubber = page.getByRole('slider', { name: 'Jump to a month' })
    await scrubber.focus()
    await scrubber.press('End')
    await poll(() => onScreen(page)).toContain(labPhoto(LAB_ITEMS - 1))
    expect(await tallest(page)).toBeLessThan(ELEMENT_LIMIT)
    expect(lab.problems).toEqual([])
    await lab.context.close()
  }, 60_000)
})
