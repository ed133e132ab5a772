// The upload panel draws the library's progress events (src/client UploadProgress), not bytes it
// counts itself: a video larger than what is read into memory (64 MiB), read once and sent in
// parts as it is read, moves the bar steadily from start to end (before, the bar stopped at half,
// the page expecting two reads, and jumped to done). The page's bar is sampled ten times a second
// while the file goes. UPLOAD_PROGRESS_MIB sets the file's size: 128 MiB in `npm test`, 500 in
// `npm run test:long`.
import { createWriteStream } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { finished } from 'node:stream/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openAlbum } from '../../src/client/albums.ts'
import { checkScreen, openDevice, serverAndBrowser } from '../support/browser.ts'
import { liveAssetIds, picker } from '../support/gallery.ts'
import { openAs, webAccount } from '../support/web-account.ts'

const MIB = Number(process.env.UPLOAD_PROGRESS_MIB || 128)
const SIZE = MIB * 1024 * 1024
const shared = serverAndBrowser()
let folder: string
let video: string

beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'coffer-upload-progress-'))
  video = path.join(folder, 'holiday.mp4')
  const out = createWriteStream(video)
  for (let written = 0; written < SIZE; written += 16 << 20)
    if (!out.write(randomBytes(Math.min(16 << 20, SIZE - written)))) await new Promise<void>((resolve) => out.once('drain', () => resolve()))
  out.end()
  await finished(out)
})
afterAll(async () => {
  if (folder !== undefined) await rm(folder, { recursive: true, force: true })
})

/** What the page's sampler saw of the file's bar: value, max and its line's text, every 100 ms. */
interface Sample {
  readonly value: number
  readonly max: number
  readonly text: string
}

describe('the upload panel', () => {
  it(`moves the bar steadily for a ${MIB} MiB video read once: many values between 0 and the end, never back`, async () => {
    const { server, browser } = shared
    const account = await webAccount(server, 'upload-progress')
    const album = await openAlbum(account.library, 'Videos')
    const device = await openDevice(browser, server.url)
    const { page } = device
    await openAs(page, server, account, `/#/albums/${album.albumId}`)
    await expect.poll(() => page.getByRole('heading', { name: 'Videos' }).isVisible(), { timeout: 15_000 }).toBe(true)
    // The page samples its own bar, so that no sample waits on a round trip to the test.
    await page.evaluate(() => {
      type Bar = { readonly value: number; readonly max: number }
      type Item = { readonly textContent: string | null; querySelector(selector: string): Bar | null }
      const page = globalThis as unknown as { samples: unknown[]; document: { querySelector(selector: string): Item | null } }
      page.samples = []
      setInterval(() => {
        const item = page.document.querySelector('.uploads li[data-state=sending]')
        const bar = item?.querySelector('progress')
        if (item && bar) page.samples.push({ value: bar.value, max: bar.max, text: item.textContent ?? '' })
      }, 100)
    })
    const started = Date.now()
    await picker(page).setInputFiles(video)
    // Halfway or so, the panel as a person sees it (docs/web.md, "Uploads").
    await expect
      .poll(
        async () => {
          const samples = await page.evaluate(() => (globalThis as unknown as { samples: Sample[] }).samples)
          const last = samples.at(-1)
          return last === undefined ? 0 : last.value / last.max
        },
        { timeout: 120_000, interval: 250 },
      )
      .toBeGreaterThan(0.4)
    // The page is busy encrypting: a screenshot may wait a while for its frame.
    device.context.setDefaultTimeout(60_000)
    await checkScreen(device, 'upload-progress-large')
    device.context.setDefaultTimeout(10_000)
    await expect.poll(() => page.locator('.uploads li[data-state=stored]').count(), { timeout: 180_000, interval: 500 }).toBe(1)
    const seconds = (Date.now() - started) / 1000
    const samples = await page.evaluate(() => (globalThis as unknown as { samples: Sample[] }).samples)
    const fractions = samples.map((s) => s.value / s.max)
    const between = [...new Set(fractions.filter((f) => f > 0 && f < 1))]
    console.log(`${MIB} MiB through the page in ${seconds.toFixed(1)} s: ${samples.length} samples, ${between.length} distinct values between 0 and the end`)
    expect(samples.every((s) => s.max === SIZE)).toBe(true)
    expect(between.length).toBeGreaterThanOrEqual(4)
    // Never back, and no jump over most of the bar (the old page jumped from half to done).
    expect(fractions.every((f, i) => i === 0 || f >= fractions[i - 1]!)).toBe(true)
    expect(Math.max(...fractions.map((f, i) => f - (fractions[i - 1] ?? 0)))).toBeLessThan(0.5)
    expect(between.some((f) => f > 0.5 && f < 0.95)).toBe(true)
    expect(samples.some((s) => s.text.includes('Encrypting and sending'))).toBe(true)
    expect(await liveAssetIds(account.library, album.albumId)).toHaveLength(1)
    await device.context.close()
  }, 300_000)
})
