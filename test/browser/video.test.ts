// Videos in the web app (issue 41; docs/decisions/0069-video.md), in Chromium with real H.264 and
// VP9 files made here by ffmpeg: uploaded through the album page, each gets a poster frame read
// by the browser's own player (the tile's thumbnail) and its length (on the tile and in the info);
// opened, it plays through the service worker, which answers the video element's range requests
// with chunks fetched and decrypted for them alone: a seek to 90 % fetches nothing of the middle
// (the page's Range requests to the blob are counted), whether the file's index (moov) is at its
// start or at its end. A server that alters a chunk is caught where it is played.
import { mkdtemp, open, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { restoreFile } from '../../src/client/files.ts'
import { liveEntries } from '../../src/client/albums.ts'
import { createLink } from '../../src/client/links.ts'
import { contactsFile } from '../../src/client/node/contacts.ts'
import { folderOf } from '../support/blobs.ts'
import { checkScreen, openDevice, serverAndBrowser, type WatchedPage } from '../support/browser.ts'
import { picker } from '../support/gallery.ts'
import { readZip } from '../support/zip.ts'
import { writeVideo, type MadeVideo } from '../support/videos.ts'
import { openAs, webAccount, type WebAccount } from '../support/web-account.ts'

const shared = serverAndBrowser()
const poll = expect.poll

let folder: string
let account: WebAccount
let device: WatchedPage
let albumId: string
/** By name: what was made, and once uploaded, its asset and its original's ciphertext hash and size. */
const videos = new Map<string, MadeVideo & { assetId?: string; hash?: string; stored?: number }>()

beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'coffer-video-'))
  // A minute of H.264 (about 13 MB): the browser buffers 10 s ahead of where it plays, so a seek
  // to 90 % has most of the file to skip.
  for (const made of [
    await writeVideo(path.join(folder, 'beach.mp4'), { codec: 'h264', width: 640, height: 360, seconds: 60, faststart: true }),
    await writeVideo(path.join(folder, 'garden.mp4'), { codec: 'h264', width: 640, height: 360, seconds: 60 }),
    await writeVideo(path.join(folder, 'river.webm'), { codec: 'vp9', width: 640, height: 360, seconds: 4 }),
  ])
    videos.set(path.basename(made.file), made)
  account = await webAccount(shared.server, 'video')
  device = await openDevice(shared.browser, shared.server.url)
}, 60_000)
afterAll(async () => {
  await device?.context.close()
  if (folder !== undefined) await rm(folder, { recursive: true, force: true })
})

/** What the tests read of the page's video element (this file has no DOM types). */
interface VideoElement {
  readonly currentTime: number
  readonly duration: number
  readonly paused: boolean
  readonly readyState: number
  readonly videoWidth: number
  readonly error: { readonly code: number } | null
}

/** The page's Range requests for a blob, as [start, end] of its ciphertext, from now on. */
function rangesOf(page: Page, hash: string): [number, number][] {
  const seen: [number, number][] = []
  page.on('request', (request) => {
    if (!request.url().endsWith(`/v1/blobs/${hash}`)) return
    const match = /bytes=(\d+)-(\d+)/.exec(request.headers().range ?? '')
    seen.push(match === null ? [0, Number.POSITIVE_INFINITY] : [Number(match[1]), Number(match[2])])
  })
  return seen
}

const fetched = (ranges: [number, number][]): number => ranges.reduce((sum, [start, end]) => sum + end - start + 1, 0)

/** Whether a service worker controls the page, and the states of the registered one's workers (none: null). */
const workerState = (page: Page): Promise<unknown> =>
  page.evaluate(`(async () => {
    const registration = await navigator.serviceWorker.getRegistration()
    return {
      controlled: navigator.serviceWorker.controller !== null,
      registered: registration === undefined ? null : { active: registration.active?.state ?? null, installing: registration.installing?.state ?? null },
    }
  })()`)

/** Runs `use` on a device of its own (a fresh browser context: nothing cached, no worker yet), closed afterwards. */
async function onAnotherDevice(use: (other: WatchedPage) => Promise<void>): Promise<void> {
  const other = await openDevice(shared.browser, shared.server.url)
  try {
    await use(other)
  } finally {
    await other.context.close()
  }
}

async function openVideo(page: Page, name: string): Promise<void> {
  await page.goto(`/#/albums/${encodeURIComponent(albumId)}/${videos.get(name)!.assetId}`)
  // The app waits up to 10 s for a worker to take over, and 10 s more for it to answer (web/src/lib/video.ts).
  const streamed = await poll(() => page.locator('.viewer video').getAttribute('data-streamed'), { timeout: 25_000 })
    .toBe('yes')
    .then(
      () => true,
      () => false,
    )
  expect(streamed, `${name} did not stream; the page's worker: ${JSON.stringify(await workerState(page))}`).toBe(true)
}

const video = (page: Page) => page.locator('.viewer video')
const state = (page: Page): Promise<VideoElement> =>
  video(page).evaluate((element) => {
    const v = element as unknown as VideoElement
    return { currentTime: v.currentTime, duration: v.duration, paused: v.paused, readyState: v.readyState, videoWidth: v.videoWidth, error: v.error }
  })

// A minute per test: a video that does not stream is found by waiting out the app's own 20 s (openVideo).
describe('videos in the web app', { timeout: 60_000 }, () => {
  it('backs up videos picked on the album page: each with its poster frame and its length on the tile, and its length and size in the info', async () => {
    await openAs(device.page, shared.server, account, '/#/albums')
    const { page } = device
    await page.getByLabel('New album').fill('Summer films')
    await page.getByRole('button', { name: 'Create album' }).click()
    await poll(() => page.getByRole('heading', { name: 'Add photos' }).isVisible()).toBe(true)
    albumId = decodeURIComponent(new URL(page.url()).hash.split('/')[2]!)
    await picker(page).setInputFiles([...videos.values()].map((made) => made.file))
    await poll(() => page.locator('.tile-video').count(), { timeout: 60_000 }).toBe(3)
    for (const entry of await liveEntries(account.library.client, albumId)) {
      if (entry.action !== 'create') continue
      const opened = await restoreFile({ ...account.library, albumId }, entry).catch(() => null)
      const made = opened === null ? undefined : videos.get(opened.metadata.name)
      if (made === undefined || opened === null) continue
      made.assetId = entry.asset_id
      made.hash = opened.envelope.ciphertext_hash
      made.stored = (await readFile(folderOf(shared.server).pathOf(made.hash))).length
    }
    await page.goto(`/#/albums/${encodeURIComponent(albumId)}`)
    const tiles = page.locator('.tile')
    await poll(() => tiles.locator('img').count()).toBe(3)
    // Each poster decoded to pixels of the video's shape.
    const posters = await tiles
      .locator('img')
      .evaluateAll((imgs) =>
        imgs.map((img) => ({ alt: (img as unknown as { alt: string }).alt, w: (img as unknown as { naturalWidth: number }).naturalWidth })),
      )
    expect(posters.map((poster) => poster.alt).sort()).toEqual(['beach.mp4', 'garden.mp4', 'river.webm'])
    for (const poster of posters) expect(poster.w).toBeGreaterThan(100)
    expect((await page.locator('.tile-video').allTextContents()).map((text) => text.trim()).sort()).toEqual(['▶ 0:04', '▶ 1:00', '▶ 1:00'])
    await checkScreen(device, 'videos')

    await openVideo(page, 'river.webm')
    await page.keyboard.press('i')
    await expect.poll(() => page.locator('[data-fact=duration]').textContent()).toBe('0:04')
    expect(await page.locator('[data-fact=dimensions]').textContent()).toBe('640 × 360')
    await page.keyboard.press('i')
  })

  for (const name of ['beach.mp4', 'garden.mp4'] as const) {
    it(`${name} (moov at its ${name === 'beach.mp4' ? 'start' : 'end'}) plays at once and seeks to 90 % without fetching what it skips`, async () => {
      const { page } = device
      const made = videos.get(name)!
      const ranges = rangesOf(page, made.hash!)
      await openVideo(page, name)
      await poll(async () => (await state(page)).currentTime, { timeout: 15_000 }).toBeGreaterThan(0.3)
      const playing = await state(page)
      expect(playing.error).toBeNull()
      expect(playing.duration).toBeCloseTo(60, 0)
      const beforeSeek = ranges.length
      await video(page).evaluate((element) => {
        const v = element as unknown as { currentTime: number; duration: number }
        v.currentTime = v.duration * 0.9
      })
      await poll(async () => (await state(page)).currentTime, { timeout: 15_000 }).toBeGreaterThan(53.5)
      await poll(async () => (await state(page)).readyState, { timeout: 15_000 }).toBeGreaterThanOrEqual(2)
      // What it skipped was not fetched: between what was read from the start (as far as the
      // browser buffered ahead, 10 s or so) and where the seek landed (54 s, decoded from the
      // key frame at 50 s, 83 % in), at least a fifth of the file, no range at all.
      const size = made.stored!
      const front = Math.max(...ranges.filter(([start]) => start < size / 2).map(([, end]) => end))
      const back = Math.min(...ranges.filter(([start]) => start >= size / 2).map(([start]) => start))
      expect(back - front, ranges.map(([start, end]) => `${start}-${end}`).join(', ')).toBeGreaterThan(size * 0.2)
      expect(fetched(ranges)).toBeLessThan(size * 0.8)
      expect(ranges.length).toBeGreaterThan(beforeSeek) // the seek did fetch, from where it landed
      // Its index at the end was read before it played: a range from its last tenth, then the start.
      if (name === 'garden.mp4') expect(ranges.slice(0, beforeSeek).some(([start]) => start > size * 0.9)).toBe(true)
      expect(device.problems).toEqual([])
    })
  }

  it('plays a VP9 WebM', async () => {
    const { page } = device
    await openVideo(page, 'river.webm')
    await poll(async () => (await state(page)).currentTime, { timeout: 15_000 }).toBeGreaterThan(0.3)
    expect((await state(page)).videoWidth).toBe(640)
  })

  it('plays a video through a public link the same way: streamed, with no account', async () => {
    const owner = { library: account.library, contacts: contactsFile(path.join(folder, 'pins.sqlite')) }
    const { url } = await createLink(owner, albumId)
    await onAnotherDevice(async (visitor) => {
      const { page } = visitor
      await page.goto(url)
      // A first visit: the page registers the worker, which takes the page over.
      await poll(() => page.evaluate('navigator.serviceWorker.controller !== null'), { timeout: 15_000 }).toBe(true)
      await page.locator(`.grid a[data-asset="${videos.get('river.webm')!.assetId}"]`).click()
      await poll(() => page.locator('.viewer video').getAttribute('data-streamed')).toBe('yes')
      await poll(async () => (await state(page)).currentTime, { timeout: 15_000 }).toBeGreaterThan(0.3)
      await checkScreen(visitor, 'link-video')
      expect(visitor.problems).toEqual([])
    })
  })

  it('streams on a page whose worker failed to install: opening a video registers it again', async () => {
    await onAnotherDevice(async (other) => {
      const { page, context } = other
      // The worker's fetch of a shell file fails, as on a dropped connection: its install fails and the browser forgets it.
      let refusing = true
      let refused = 0
      await context.route('**/manifest.webmanifest', (route) => {
        if (!refusing || route.request().serviceWorker() === null) return route.continue()
        refused++
        return route.abort('connectionreset')
      })
      await openAs(page, shared.server, account, `/#/albums/${encodeURIComponent(albumId)}`)
      await page.evaluate('navigator.serviceWorker.getRegistration().then((registration) => registration?.unregister())')
      const before = refused
      await page.reload()
      await poll(async () => refused > before && JSON.stringify(await workerState(page))).toBe(JSON.stringify({ controlled: false, registered: null }))
      refusing = false
      await openVideo(page, 'river.webm')
      await poll(async () => (await state(page)).currentTime, { timeout: 15_000 }).toBeGreaterThan(0.3)
      expect(other.problems).toEqual([])
    })
  })

  it('streams on a page its worker does not control (force-reloaded): opening a video asks the worker to take it over', async () => {
    await onAnotherDevice(async (other) => {
      const { page, context } = other
      await openAs(page, shared.server, account, `/#/albums/${encodeURIComponent(albumId)}`)
      await poll(() => page.evaluate('navigator.serviceWorker.controller !== null'), { timeout: 15_000 }).toBe(true)
      // A reload that bypasses the worker, as Shift+Reload does: the page loads without it, which stays active.
      const cdp = await context.newCDPSession(page)
      await cdp.send('Page.reload', { ignoreCache: true })
      await poll(async () => JSON.stringify(await workerState(page))).toBe(
        JSON.stringify({ controlled: false, registered: { active: 'activated', installing: null } }),
      )
      await openVideo(page, 'river.webm')
      await poll(async () => (await state(page)).currentTime, { timeout: 15_000 }).toBeGreaterThan(0.3)
      expect(other.problems).toEqual([])
    })
  })

  it('stops with a clear error where the server altered a chunk, and plays what it did not alter', async () => {
    // Another device: this one's HTTP cache holds what it fetched of the video, and the altered bytes it will fetch stay out of it.
    const other = await openDevice(shared.browser, shared.server.url)
    const { page } = other
    const made = videos.get('beach.mp4')!
    const file = folderOf(shared.server).pathOf(made.hash!)
    const at = Math.floor(made.stored! * 0.6)
    const handle = await open(file, 'r+')
    const original = Buffer.alloc(64)
    try {
      await openAs(page, shared.server, account, `/#/albums/${encodeURIComponent(albumId)}`)
      await poll(() => page.evaluate('navigator.serviceWorker.controller !== null'), { timeout: 15_000 }).toBe(true)
      await handle.read(original, 0, 64, at)
      await handle.write(Buffer.from(original.map((byte) => byte ^ 0xff)), 0, 64, at)
      await openVideo(page, 'beach.mp4')
      await poll(async () => (await state(page)).currentTime, { timeout: 15_000 }).toBeGreaterThan(0.3)
      await video(page).evaluate((element) => {
        ;(element as unknown as { currentTime: number }).currentTime = 60 * 0.6
      })
      await poll(() => page.locator('.viewer-notes').textContent(), { timeout: 15_000 }).toMatch(/not the ones backed up/)
    } finally {
      await handle.write(original, 0, 64, at)
      await handle.close()
      await other.context.close()
    }
  })

  it('downloads the videos as a zip byte for byte, as photos are', async () => {
    const { page } = device
    await page.goto(`/#/albums/${encodeURIComponent(albumId)}`)
    await page.evaluate(() => Object.defineProperty(globalThis, 'showSaveFilePicker', { value: undefined, configurable: true }))
    await page.getByRole('button', { name: 'Select', exact: true }).click()
    const bar = page.getByRole('region', { name: 'Selection' })
    await bar.getByRole('button', { name: 'Select all' }).click()
    const [download] = await Promise.all([page.waitForEvent('download'), bar.getByRole('button', { name: 'Download' }).click()])
    const files = readZip(await readFile((await download.path())!))
    expect(files.map((file) => file.name).sort()).toEqual([...videos.keys()].sort())
    for (const file of files) expect(file.bytes.equals(await readFile(videos.get(file.name)!.file)), file.name).toBe(true)
    await page.keyboard.press('Escape')
  })
})
