// The photo viewer (issue 36; docs/decisions/0056-viewer.md) in Chromium at desktop size
// (1280×900, a mouse) and phone size (390×844, touch): full screen on black over the app's bar;
// the neighbours' previews fetched before they are shown; the arrow keys and a swipe to the
// photo before or after; the wheel, a double-click and a pinch zoom, a drag pans; the info panel
// lists the camera, lens and exposure a JPEG's EXIF states (read at backup into the metadata)
// and its place; Escape goes back to the grid with the focus on the tile. Photos are stored from
// Node through the client library as coffer-photos stores them (the first with its location,
// which the CLI records on request). Each screen passes axe; its screenshot is docs/web/screens/viewer*.png.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { BrowserContext, CDPSession, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { liveEntries, openAlbum } from '../../src/client/albums.ts'
import { memorySource, restoreFile } from '../../src/client/files.ts'
import { describeMedia } from '../../src/client/node/media.ts'
import { backupFile } from '../../src/client/upload.ts'
import { toHex } from '../../src/sdk/bytes.ts'
import { checkScreen, serverAndBrowser, type WatchedPage } from '../support/browser.ts'
import { writePhoto } from '../support/photos.ts'
import { openAs, webAccount, type WebAccount } from '../support/web-account.ts'

/** Read through its getters: they are set in its beforeAll. */
const shared = serverAndBrowser()
const ALBUM = 'Lisbon 2024'
const CAMERA = { make: 'Canon', model: 'Canon EOS R6' }
const EXPOSURE = { LensModel: 'RF35mm F1.8 MACRO IS STM', ExposureTime: '1/250', FNumber: '28/10', ISOSpeedRatings: '100', FocalLength: '35/1' }
const PLACE = { latitude: 38.7077507, longitude: -9.1365919 }

interface Stored {
  readonly name: string
  readonly assetId: string
  /** Hex hash of its preview blob (every photo here is larger than a preview). */
  readonly preview: string
}

let folder: string
let account: WebAccount
let albumId: string
/** In the album's order: the first has the camera's EXIF and its place. */
const stored: Stored[] = []

beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'coffer-viewer-'))
  account = await webAccount(shared.server, 'viewer')
  const album = await openAlbum(account.library, ALBUM)
  albumId = album.albumId
  for (let n = 0; n < 4; n++) {
    const name = `IMG_${2400 + n}.jpg`
    const file = path.join(folder, name)
    await writePhoto(file, {
      format: 'jpeg',
      width: 2100 + 40 * n,
      height: 1400,
      seed: 500 + n,
      captured: new Date(Date.UTC(2024, 4, 10 + n, 9, 30)),
      utcOffsetMinutes: 60,
      ...(n === 0 ? { camera: CAMERA, gps: PLACE, moreExif: { IFD2: EXPOSURE } } : {}),
    })
    const bytes = new Uint8Array(await readFile(file))
    const result = await backupFile(
      { ...account.library, albumId, protocolVersion: album.protocolVersion },
      memorySource(bytes, { name, type: 'image/jpeg', modified: null }),
      { describe: () => describeMedia(bytes, 'image/jpeg', { location: n === 0 }) },
    )
    stored.push({ name, assetId: result.assetId, preview: '' })
  }
  const entries = await liveEntries(account.library.client, albumId)
  for (const [i, photo] of stored.entries()) {
    const opened = await restoreFile({ ...account.library, albumId }, entries.find((entry) => entry.asset_id === photo.assetId)!)
    stored[i] = { ...photo, preview: toHex(opened.metadata.blobs.find((blob) => blob.kind === 'preview')!.hash) }
  }
}, 60_000)
afterAll(async () => {
  if (folder !== undefined) await rm(folder, { recursive: true, force: true })
})

/** What these tests use of the page's globals (this program is typed for Node, not the DOM). */
interface PageGlobals {
  getComputedStyle(element: unknown): { readonly transform: string; readonly backgroundColor: string }
  readonly document: { elementFromPoint(x: number, y: number): { closest(selector: string): unknown } | null }
  readonly PointerEvent: new (type: string, init: object) => unknown
}
/** An element's box as the page lays it out. */
interface Laid {
  readonly offsetHeight: number
  readonly clientHeight: number
  dispatchEvent(event: unknown): boolean
}

/** expect.poll with room for the first screens (workers starting, keys made from their seeds). */
const poll = <T>(read: () => Promise<T>, timeout = 15_000) => expect.poll(read, { timeout })

/** The photo's transform as drawn: its scale and translation. */
async function drawn(page: Page): Promise<{ scale: number; x: number; y: number }> {
  const matrix = await page.locator('.viewer-stage img').evaluate((img) => (globalThis as unknown as PageGlobals).getComputedStyle(img).transform)
  const [a, , , , e, f] = /matrix\(([^)]+)\)/.exec(matrix)?.[1]?.split(',').map(Number) ?? [1, 0, 0, 1, 0, 0]
  return { scale: a!, x: e!, y: f! }
}

/** The centre of the stage, in page coordinates. */
async function stageCentre(page: Page): Promise<{ x: number; y: number }> {
  const box = (await page.locator('.viewer-stage').boundingBox())!
  return { x: box.x + box.width / 2, y: box.y + box.height / 2 }
}

/** Fingers on the screen through the DevTools protocol, as a phone's touch screen sends them: each step moves every finger by its own offset. */
async function touch(cdp: CDPSession, fingers: { x: number; y: number; dx: number; dy: number }[], steps = 8): Promise<void> {
  const at = (step: number) => fingers.map((f, id) => ({ x: f.x + (f.dx * step) / steps, y: f.y + (f.dy * step) / steps, id }))
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: at(0) })
  for (let step = 1; step <= steps; step++) await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: at(step) })
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] })
}

/** A swipe made of pointer events of type touch, dispatched on the stage (the desktop context has no touch screen). */
async function dispatchedSwipe(page: Page, dx: number): Promise<void> {
  const { x, y } = await stageCentre(page)
  await page.locator('.viewer-stage').evaluate(
    (stage, { x, y, dx }) => {
      const event = (type: string, at: number) =>
        new (globalThis as unknown as PageGlobals).PointerEvent(type, {
          pointerId: 7,
          pointerType: 'touch',
          isPrimary: true,
          clientX: at,
          clientY: y,
          bubbles: true,
          cancelable: true,
        })
      const target = stage as unknown as Laid
      target.dispatchEvent(event('pointerdown', x))
      for (let step = 1; step <= 8; step++) target.dispatchEvent(event('pointermove', x + (dx * step) / 8))
      target.dispatchEvent(event('pointerup', x + dx))
    },
    { x, y, dx },
  )
}

const SIZES = [
  { label: 'desktop', suffix: '', viewport: { width: 1280, height: 900 }, touch: false },
  { label: 'phone', suffix: '-phone', viewport: { width: 390, height: 844 }, touch: true },
] as const

describe.each(SIZES)('the viewer at $label size', ({ suffix, viewport, touch: isPhone }) => {
  let context: BrowserContext
  let watched: WatchedPage
  let page: Page
  /** Every GET of a single blob, by hash, in order. */
  const blobGets: string[] = []

  beforeAll(async () => {
    context = await shared.browser.newContext({
      baseURL: shared.server.url,
      viewport,
      reducedMotion: 'reduce',
      timezoneId: 'America/New_York',
      ...(isPhone ? { hasTouch: true, isMobile: true, deviceScaleFactor: 2 } : {}),
    })
    context.setDefaultTimeout(10_000)
    page = await context.newPage()
    const problems: string[] = []
    page.on('console', (message) => {
      if (message.type() === 'error' && /Content.Security.Policy|Refused to/i.test(message.text())) problems.push(`CSP: ${message.text()}`)
    })
    page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`))
    page.on('request', (request) => {
      const hash = /\/v1\/blobs\/([0-9a-f]{64})$/.exec(new URL(request.url()).pathname)?.[1]
      if (request.method() === 'GET' && hash !== undefined) blobGets.push(hash)
    })
    watched = { page, context, problems }
    await openAs(page, shared.server, account, `/#/albums/${encodeURIComponent(albumId)}`)
    await page.getByRole('link', { name: stored[1]!.name }).waitFor({ timeout: 20_000 })
  }, 60_000)
  afterAll(async () => {
    await context?.close()
  })

  const dialog = () => page.getByRole('dialog')
  const heading = () => dialog().getByRole('heading', { level: 2 })
  /** Waits until the viewer shows this photo's original. */
  const showing = async (photo: Stored) => {
    await poll(() => heading().textContent()).toBe(photo.name)
    await poll(() => dialog().locator('img[data-full=original]').count()).toBe(1)
  }

  it('opens full screen on black over the app, and fetches the previews of the photos before and after before they are shown', async () => {
    await page.getByRole('link', { name: stored[1]!.name }).click()
    await showing(stored[1]!)
    const viewer = page.locator('.viewer')
    expect(await viewer.evaluate((element) => (globalThis as unknown as PageGlobals).getComputedStyle(element).backgroundColor)).toBe('rgb(0, 0, 0)')
    expect(await viewer.boundingBox()).toEqual({ x: 0, y: 0, ...viewport })
    // The app's own bar is under it: the top-left corner is the viewer's.
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).document.elementFromPoint(4, 4)?.closest('.viewer') !== null)).toBe(true)
    // The photo fits the stage.
    const photo = (await dialog().locator('img').boundingBox())!
    const stage = (await page.locator('.viewer-stage').boundingBox())!
    expect(photo.width).toBeLessThanOrEqual(stage.width + 0.5)
    expect(photo.height).toBeLessThanOrEqual(stage.height + 0.5)
    expect(Math.max(photo.width / stage.width, photo.height / stage.height)).toBeGreaterThan(0.98)
    // The previous and next photos' previews are already fetched (and so decrypted in the workers).
    await poll(async () => [stored[0]!.preview, stored[2]!.preview].every((hash) => blobGets.includes(hash))).toBe(true)
    expect(blobGets).not.toContain(stored[3]!.preview)
    // Prev and next at the sides, within the screen.
    for (const name of ['Previous photo', 'Next photo']) {
      const box = (await dialog().getByRole('link', { name }).boundingBox())!
      expect(box.x).toBeGreaterThanOrEqual(0)
      expect(box.x + box.width).toBeLessThanOrEqual(viewport.width)
    }
    await checkScreen(watched, `viewer${suffix}`, { phone: false })
  }, 60_000)

  it('goes to the photo before and after with the arrow keys, showing the preview fetched ahead without fetching it again', async () => {
    await page.keyboard.press('ArrowLeft')
    await showing(stored[0]!)
    expect(blobGets.filter((hash) => hash === stored[0]!.preview)).toHaveLength(1)
    await page.keyboard.press('ArrowRight')
    await showing(stored[1]!)
    await page.keyboard.press('ArrowRight')
    await showing(stored[2]!)
    expect(blobGets.filter((hash) => hash === stored[2]!.preview)).toHaveLength(1)
    // Opening the third fetched the fourth's ahead.
    await poll(async () => blobGets.includes(stored[3]!.preview)).toBe(true)
    await page.keyboard.press('ArrowLeft')
    await showing(stored[1]!)
    expect(watched.problems).toEqual([])
  }, 60_000)

  it('zooms with the wheel about the pointer, toggles 2× with a double-click, pans with a drag, and + - 0 from the keyboard', async () => {
    const centre = await stageCentre(page)
    await page.mouse.move(centre.x + 60, centre.y + 40)
    await page.mouse.wheel(0, -600)
    await poll(async () => (await drawn(page)).scale).toBeGreaterThan(1.3)
    // About the pointer: the point under it stays, so the photo moved away from it (up too where it is taller than the stage, else it stays centred).
    const wheeled = await drawn(page)
    expect(wheeled.x).toBeLessThan(0)
    expect(wheeled.y).toBeLessThanOrEqual(0)
    await page.keyboard.press('0')
    await poll(async () => (await drawn(page)).scale).toBe(1)

    await page.mouse.dblclick(centre.x, centre.y)
    await poll(async () => (await drawn(page)).scale).toBe(2)
    const before = await drawn(page)
    await page.mouse.move(centre.x, centre.y)
    await page.mouse.down()
    await page.mouse.move(centre.x + 80, centre.y + 30, { steps: 5 })
    await page.mouse.up()
    const dragged = await drawn(page)
    expect(dragged.scale).toBe(2)
    expect(dragged.x - before.x).toBeCloseTo(80, 0)
    // Down by as far as its edge allows: 30 px, or none where the photo at 2× is not as tall as the stage.
    expect(dragged.y - before.y).toBeCloseTo(Math.max(0, Math.min(30, (1400 * (await photoFit(page)) * 2 - (await stageHeight(page))) / 2 - before.y)), 0)
    await page.mouse.dblclick(centre.x, centre.y)
    await poll(async () => (await drawn(page)).scale).toBe(1)
    expect(await drawn(page)).toEqual({ scale: 1, x: 0, y: 0 })

    await page.keyboard.press('+')
    await poll(async () => (await drawn(page)).scale).toBe(2)
    await page.keyboard.press('-')
    await poll(async () => (await drawn(page)).scale).toBe(1)
    // Zoomed, the original is what is drawn.
    expect(await dialog().locator('img').getAttribute('data-full')).toBe('original')
  }, 30_000)

  if (isPhone)
    it('zooms with a pinch and pans with one finger', async () => {
      const cdp = await context.newCDPSession(page)
      const { x, y } = await stageCentre(page)
      await touch(cdp, [
        { x: x - 30, y, dx: -70, dy: 0 },
        { x: x + 30, y, dx: 70, dy: 0 },
      ])
      await poll(async () => (await drawn(page)).scale).toBeGreaterThan(1.8)
      const pinched = await drawn(page)
      await touch(cdp, [{ x, y, dx: 60, dy: 0 }])
      await poll(async () => (await drawn(page)).x).toBeGreaterThan(pinched.x + 30)
      // Zoomed, a finger moving across pans: still the same photo.
      expect(await heading().textContent()).toBe(stored[1]!.name)
      await page.keyboard.press('0')
      await poll(async () => (await drawn(page)).scale).toBe(1)
      await cdp.detach()
    }, 30_000)

  it('moves to the next photo with a swipe to the left, and back with one to the right', async () => {
    if (isPhone) {
      const cdp = await context.newCDPSession(page)
      const { x, y } = await stageCentre(page)
      await touch(cdp, [{ x: x + 100, y, dx: -200, dy: 10 }])
      await showing(stored[2]!)
      await touch(cdp, [{ x: x - 100, y, dx: 200, dy: -10 }])
      await showing(stored[1]!)
      // Up and down is not a swipe.
      await touch(cdp, [{ x, y: y - 100, dx: 10, dy: 200 }])
      await page.waitForTimeout(300)
      expect(await heading().textContent()).toBe(stored[1]!.name)
      await cdp.detach()
    } else {
      await dispatchedSwipe(page, -220)
      await showing(stored[2]!)
      await dispatchedSwipe(page, 220)
      await showing(stored[1]!)
    }
    expect(watched.problems).toEqual([])
  }, 30_000)

  it('lists the camera, lens, exposure, size, album and place in the info panel', async () => {
    await page.keyboard.press('ArrowLeft')
    await showing(stored[0]!)
    const info = dialog().locator('#photo-info')
    if (isPhone) await dialog().getByRole('button', { name: 'Info', exact: true }).tap()
    else await page.keyboard.press('i')
    await poll(() => info.isVisible()).toBe(true)
    const fact = (name: string) => info.locator(`[data-fact=${name}]`).textContent()
    expect(await fact('camera')).toBe('Canon EOS R6')
    expect(await fact('lens')).toBe('RF35mm F1.8 MACRO IS STM')
    expect(await fact('exposure')).toBe('1/250 s · f/2.8 · ISO 100 · 35 mm')
    expect(await fact('dimensions')).toBe('2100 × 1400')
    expect(await fact('megapixels')).toBe(' · 2.9 MP')
    expect(await fact('album')).toBe(ALBUM)
    expect(await fact('place')).toBe('38.7078° N, 9.1366° W')
    // Named from the table shipped with the app (loaded now), with a link to the map there.
    await poll(() => info.locator('[data-fact=place-name]').textContent()).toBe('Lisbon, Portugal')
    expect(await info.getByRole('link', { name: 'Map' }).getAttribute('href')).toBe(
      'https://www.openstreetmap.org/?mlat=38.70775&mlon=-9.13659#map=13/38.70775/-9.13659',
    )
    expect(await info.locator('[data-fact=taken]').getAttribute('data-source')).toBe('exif-original')
    expect(await dialog().getByRole('button', { name: 'Info', exact: true }).getAttribute('aria-pressed')).toBe('true')
    // The panel stays open on the next photo, which states no lens or exposure (test/support/photos.ts writes only a make and model).
    await page.keyboard.press('ArrowRight')
    await showing(stored[1]!)
    expect(await info.isVisible()).toBe(true)
    expect(await fact('camera')).toBe('Coffer Test photo')
    expect(await info.locator('[data-fact=exposure]').count()).toBe(0)
    expect(await info.locator('[data-fact=place]').count()).toBe(0)
    await page.keyboard.press('ArrowLeft')
    await showing(stored[0]!)
    await checkScreen(watched, `viewer-info${suffix}`, { phone: false })
    await page.keyboard.press('i')
    await poll(() => info.isVisible()).toBe(false)
  }, 30_000)

  it('keeps Replace, Delete and Custody under More, and goes back to the grid with Escape, the focus on the tile of the photo it showed', async () => {
    const more = dialog().getByRole('button', { name: 'More' })
    await more.click()
    expect(await more.getAttribute('aria-expanded')).toBe('true')
    expect(await dialog().getByRole('link', { name: 'Custody' }).getAttribute('href')).toBe(`#/custody/${albumId}/${stored[0]!.assetId}`)
    expect(await dialog().getByRole('button', { name: 'Delete' }).isVisible()).toBe(true)
    // Escape closes the menu first, then the viewer.
    await page.keyboard.press('Escape')
    expect(await more.getAttribute('aria-expanded')).toBe('false')
    await page.keyboard.press('Escape')
    await poll(() => dialog().count()).toBe(0)
    await poll(() => page.locator(':focus').evaluateAll((focused) => focused.map((element) => element.getAttribute('data-asset')))).toEqual([
      stored[0]!.assetId,
    ])
    expect(watched.problems).toEqual([])
  }, 30_000)
})

/** The photo's fitted scale (its height as drawn at 1× over its own). */
async function photoFit(page: Page): Promise<number> {
  const height = await page.locator('.viewer-stage img').evaluate((img) => (img as unknown as Laid).offsetHeight)
  return height / 1400
}

async function stageHeight(page: Page): Promise<number> {
  return page.locator('.viewer-stage').evaluate((stage) => (stage as unknown as Laid).clientHeight)
}
