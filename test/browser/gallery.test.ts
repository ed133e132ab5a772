// The gallery in Chromium against a real server: an account set up from Node becomes the
// browser's device; albums are made, photos uploaded through the file picker and by drag and
// drop (every request the upload makes is searched for the photos' bytes, names and EXIF), seen
// as decrypted thumbnails, opened, downloaded, an upload interrupted by a reload finishes, photos
// deleted (with and without undo) and replaced; an album of many photos scrolls to its end; a
// photo the operator took down shows as withheld; the grid loads in batches, a placeholder in
// each tile before its thumbnail. Each screen passes axe.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { albumRecordId, liveEntries } from '../../src/client/albums.ts'
import { restoreFile } from '../../src/client/files.ts'
import { listTrash } from '../../src/client/trash.ts'
import { CofferAdmin } from '../../src/sdk/admin.ts'
import { checkScreen, launchChromium, openDevice, type WatchedPage } from '../support/browser.ts'
import { decryptedThumbnails, liveAssetIds, picker, seedAlbum, type Img } from '../support/gallery.ts'
import { openAs, webAccount, type WebAccount } from '../support/web-account.ts'
import { writePhoto } from '../support/photos.ts'
import { startServer, type TestServer } from '../support/server.ts'

const ADMIN_TOKEN = 'gallery-test-admin-token-0123456789'
/**
 * Photos in the big album: 200 in CI (filling it costs the server about 0.1 s a photo, mostly
 * fsyncs), GALLERY_ASSETS=2000 or 10000 by hand.
 */
const MANY = Number(process.env.GALLERY_ASSETS ?? 200)
const CAMERA = { make: 'Zyxwarr Optics', model: 'QK-7731 Mark IV' }
/** The cameras' clocks are at -07:00; the browser is in Tokyo (+09:00): the photo view shows the camera's clock, not Tokyo's. */
const CAMERA_OFFSET = -420
const BROWSER_ZONE = 'Asia/Tokyo'

let server: TestServer
let browser: Browser
let folder: string
/** The big album, filled from Node while the first tests drive the browser (it takes about 0.1 s a photo: the server fsyncs each write). */
let many: Promise<{ account: WebAccount; albumId: string }>

/** The upload list (each file's state and text) and the grid's tiles (data-asset, class, label): what a wait that ran out leaves to read. */
async function uploadsAndTiles(page: Page): Promise<string> {
  const uploads = await page.locator('.uploads li').evaluateAll((items) => items.map((item) => `${item.getAttribute('data-state')} ${item.textContent}`))
  const tiles = await page
    .locator('.grid [data-asset]')
    .evaluateAll((links) =>
      links.map(
        (link) =>
          `${link.getAttribute('data-asset')} ${link.getAttribute('class')} ${link.getAttribute('aria-label')}${link.hasAttribute('title') ? `: ${link.getAttribute('title')}` : ''}`,
      ),
    )
  return JSON.stringify({ uploads, tiles }, null, 1)
}

beforeAll(async () => {
  ;[server, browser, folder] = await Promise.all([startServer({ ADMIN_TOKEN }), launchChromium(), mkdtemp(path.join(tmpdir(), 'coffer-gallery-'))])
  many = webAccount(server, 'gallery-many').then(async (account) => ({ account, albumId: (await seedAlbum(account.library, 'Many', MANY, 2)).album.albumId }))
  many.catch(() => {}) // awaited (and its failure reported) by the test that uses it
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
  /** The EXIF DateTimeOriginal as written (the wall clock at CAMERA_OFFSET). */
  readonly exifTime: string
}

async function photo(n: number, size: { width: number; height: number } = { width: 640, height: 480 }): Promise<Photo> {
  const name = `IMG_${String(n).padStart(4, '0')}.jpg`
  const file = path.join(folder, name)
  const captured = new Date(Date.UTC(2021, 4, 1 + (n % 27), 8 + (n % 12), n % 60, 7))
  await writePhoto(file, {
    format: 'jpeg',
    ...size,
    seed: 7000 + n,
    captured,
    utcOffsetMinutes: CAMERA_OFFSET,
    camera: CAMERA,
    gps: { latitude: 48.8582602, longitude: 2.2944991 },
  })
  const exifTime = new Date(captured.getTime() + CAMERA_OFFSET * 60_000).toISOString().slice(0, 19).replace('T', ' ').replace(/-/g, ':')
  return { name, file, bytes: await readFile(file), captured, exifTime }
}

/** expect.poll with room for the first screens (workers starting, keys made from their seeds). */
const poll = <T>(read: () => Promise<T>, timeout = 15_000) => expect.poll(read, { timeout })

/** Waits until the page's scroll position holds still for a quarter of a second (at most 15 s). */
async function scrollSettled(page: Page): Promise<void> {
  const scrollY = () => page.evaluate(() => (globalThis as unknown as { scrollY: number }).scrollY)
  let before = await scrollY()
  for (let tries = 0; tries < 60; tries++) {
    await page.waitForTimeout(250)
    const now = await scrollY()
    if (now === before) return
    before = now
  }
  throw new Error('the page kept scrolling')
}

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

/** Starts keeping every text the page's main heading shows; the returned function reads them, in order. */
async function recordHeadings(page: Page): Promise<() => Promise<string[]>> {
  await page.evaluate(() => {
    // The page's globals (this file is type-checked without the DOM's types).
    const page = globalThis as unknown as {
      document: { body: unknown; querySelector(selector: string): { textContent: string | null } | null }
      MutationObserver: new (seen: () => void) => { observe(node: unknown, options: object): void }
      headingsSeen: string[]
    }
    const seen: string[] = []
    const look = (): void => {
      const text = page.document.querySelector('main h1')?.textContent ?? null
      if (text !== null && text !== seen.at(-1)) seen.push(text)
    }
    look()
    new page.MutationObserver(look).observe(page.document.body, { subtree: true, childList: true, characterData: true })
    page.headingsSeen = seen
  })
  return () => page.evaluate(() => [...(globalThis as unknown as { headingsSeen: string[] }).headingsSeen])
}

describe('the gallery', () => {
  let account: WebAccount
  let device: WatchedPage
  let albumId: string
  const photos: Photo[] = []

  it('lists no albums, makes one, and uploads 20 photos through the picker without the server seeing a byte, a name or an EXIF value of them', async () => {
    account = await webAccount(server, 'gallery')
    device = await openDevice(browser, server.url, { timezoneId: BROWSER_ZONE })
    const { page } = device
    for (let n = 1; n <= 21; n++) photos.push(await photo(n))
    await openAs(page, server, account, '/#/albums')
    await poll(() => page.getByRole('heading', { name: 'Create an album' }).isVisible()).toBe(true)
    await page.getByLabel('New album').fill('Summer 2021')
    const headings = await recordHeadings(page)
    await page.getByRole('button', { name: 'Create album' }).click()
    await poll(() => page.getByRole('heading', { name: 'Summer 2021' }).isVisible()).toBe(true)
    albumId = decodeURIComponent(new URL(page.url()).hash.split('/')[2]!)
    // The new album is named at once: never "Album" or "Unnamed album" while its record comes back.
    await poll(() => page.getByRole('heading', { name: 'Add photos' }).isVisible()).toBe(true)
    expect(await headings()).toEqual(['Albums', 'Summer 2021'])

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
    await checkScreen(device, 'upload-progress')
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
    expect(opened.metadata).toMatchObject({
      type: 'image/jpeg',
      size: source.bytes.length,
      width: 640,
      height: 480,
      captured: source.captured.getTime(),
      capturedSource: 'exif-original', // metadata version 3, the fields coffer-photos writes
      capturedOffset: CAMERA_OFFSET,
      camera: CAMERA, // read from its EXIF in the browser's worker, as coffer-photos reads it
    })
    expect(opened.metadata.location).toBeUndefined()
    expect(opened.metadata.blobs.map((b) => [b.kind, b.type])).toEqual([
      ['original', 'image/jpeg'],
      ['thumbnail', 'image/webp'],
    ])
    expect(device.problems).toEqual([])
  }, 120_000)

  it('adds a photo dropped on the page, shows the grid and the albums, opens a photo with its metadata, and downloads the original', async () => {
    const { page } = device
    const dropped = photos[20]!
    await dropFiles(page, [dropped])
    await poll(async () => (await decryptedThumbnails(page)).includes(dropped.name), 30_000).toBe(true)
    await checkScreen(device, 'album')

    await page.getByRole('link', { name: 'Albums', exact: true }).first().click()
    await poll(() => page.getByRole('link', { name: 'Summer 2021' }).isVisible()).toBe(true)
    await page.getByRole('link', { name: 'Summer 2021' }).click()

    const shown = photos[4]!
    await page.getByRole('link', { name: shown.name }).click()
    const shownId = new URL(page.url()).hash.split('/')[3]!
    const dialog = page.getByRole('dialog')
    await poll(() => dialog.locator('[data-fact=dimensions]').textContent()).toBe('640 × 480')
    expect(await dialog.getByRole('heading').textContent()).toBe(shown.name)
    // The date taken at the camera's clock, with its offset, and where it came from (src/client/taken.ts), not in the browser's zone.
    const cameraClock = shown.exifTime.replace(/^(\d{4}):(\d{2}):(\d{2}) /, '$1-$2-$3T')
    expect(await dialog.locator('[data-fact=taken] time').getAttribute('datetime')).toBe(`${cameraClock}-07:00`)
    const inWords = (timeZone: string) => new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeStyle: 'medium', timeZone }).format(shown.captured)
    expect(await dialog.locator('[data-fact=taken]').textContent()).toBe(`${inWords('Etc/GMT+7')} UTC\u221207:00 · from the camera (EXIF)`)
    expect(inWords('Etc/GMT+7')).not.toBe(inWords(BROWSER_ZONE))
    expect(await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone)).toBe(BROWSER_ZONE)
    expect(await dialog.locator('[data-fact=type]').textContent()).toBe('image/jpeg')
    // Decimal, as file managers show sizes (web/src/lib/format.ts), in the browser's language (en-US here).
    expect(await dialog.locator('[data-fact=size]').textContent()).toBe(`${Number((shown.bytes.length / 1000).toFixed(1))} kB`)
    // The original replaces the preview once decrypted.
    await poll(() => dialog.locator('img[data-full=original]').evaluate((img) => (img as unknown as Img).naturalWidth)).toBe(640)
    await dialog.getByRole('button', { name: 'More' }).click()
    expect(await dialog.getByRole('link', { name: 'Custody' }).getAttribute('href')).toBe(`#/custody/${albumId}/${shownId}`)
    await dialog.getByRole('button', { name: 'More' }).click()
    await checkScreen(device, 'photo')

    const [download] = await Promise.all([page.waitForEvent('download'), dialog.getByRole('button', { name: 'Download' }).click()])
    expect(download.suggestedFilename()).toBe(shown.name)
    expect(Buffer.compare(await readFile((await download.path())!), shown.bytes)).toBe(0)

    // The arrow keys go to the next photo and back, Escape to the grid.
    await page.keyboard.press('ArrowRight')
    await poll(() => dialog.getByRole('heading').textContent()).not.toBe(shown.name)
    await page.keyboard.press('ArrowLeft')
    await poll(() => dialog.getByRole('heading').textContent()).toBe(shown.name)
    await page.keyboard.press('Escape')
    await poll(() => dialog.count()).toBe(0)
    // Focus is back on the photo's tile, not on the page.
    await poll(() => page.locator(':focus').evaluateAll((focused) => focused.map((element) => element.getAttribute('data-asset')))).toEqual([shownId])
    expect(device.problems).toEqual([])
  }, 60_000)

  it('uploads a photo into a second album from one read, without sending its original again: the same encrypted original, the same content mac', async () => {
    const { page } = device
    const again = photos[0]!
    const usedBefore = (await account.library.client.storageUsage()).stored_bytes
    await page.goto(`${server.url}/#/albums`)
    await page.getByLabel('New album').fill('Copies')
    await page.getByRole('button', { name: 'Create album' }).click()
    await poll(() => page.getByRole('heading', { name: 'Copies' }).isVisible()).toBe(true)
    const copiesId = decodeURIComponent(new URL(page.url()).hash.split('/')[2]!)
    const sent: number[] = []
    await page.route('**/v1/upload/*/blobs/*', async (route) => {
      sent.push(route.request().postDataBuffer()?.length ?? 0)
      await route.continue()
    })
    await picker(page).setInputFiles([again.file])
    await poll(async () => (await decryptedThumbnails(page)).length, 30_000).toBe(1)
    await page.unrouteAll()
    // Only the thumbnail went: the original's bytes were already the account's.
    expect(sent).toHaveLength(1)
    expect(sent[0]!).toBeLessThan(again.bytes.length / 2)
    expect((await account.library.client.storageUsage()).stored_bytes - usedBefore).toBeLessThan(again.bytes.length / 2)
    const openedIn = async (id: string) => {
      for (const entry of await liveEntries(account.library.client, id)) {
        const file = await restoreFile({ ...account.library, albumId: id }, entry)
        if (file.metadata.name === again.name) return file
      }
      throw new Error(`${again.name} is not in album ${id}`)
    }
    const [first, copy] = [await openedIn(albumId), await openedIn(copiesId)]
    expect(copy.envelope.ciphertext_hash).toBe(first.envelope.ciphertext_hash)
    expect(copy.metadata.contentMac).toEqual(first.metadata.contentMac)
    expect(copy.metadata.contentMac).toHaveLength(32)
    await page.goto(`${server.url}/#/albums/${encodeURIComponent(albumId)}`)
    expect(device.problems).toEqual([])
  }, 60_000)

  it('finishes an upload that a reload interrupted', async () => {
    const { page } = device
    const big = await Promise.all([101, 102, 103].map((n) => photo(n, { width: 2100, height: 1400 })))
    await picker(page).setInputFiles(big.map((p) => p.file))
    await poll(() => page.locator('.uploads li[data-state=stored]').count(), 30_000).toBeGreaterThan(0)
    await page.reload()
    // The queue came back from IndexedDB: the files left are listed again, and sent.
    await poll(() => page.getByRole('heading', { name: 'Uploads' }).isVisible()).toBe(true)
    await poll(async () => (await decryptedThumbnails(page)).filter((name) => name.startsWith('IMG_01')).length, 60_000)
      .toBe(3)
      .catch(async (error: unknown) => {
        throw new Error(`${String(error)}; the page shows ${await uploadsAndTiles(page)}`, { cause: error })
      })
    const live = await liveAssetIds(account.library, albumId)
    expect(live).toHaveLength(24)
    expect(new Set(live).size).toBe(24)
    // Larger than a preview: one was made.
    const entry = (await liveEntries(account.library.client, albumId)).at(-1)!
    const opened = await restoreFile({ ...account.library, albumId }, entry)
    expect(opened.metadata.blobs.map((b) => b.kind)).toEqual(['original', 'thumbnail', 'preview'])
    expect(device.problems).toEqual([])
  }, 90_000)

  it('ends the upload session a reload left before its commit, so the file sent again is paired with its own thumbnail', async () => {
    const { page } = device
    const cut = await photo(104)
    // Page 1 sends every blob; its commit never reaches the server, and the page is reloaded.
    const sessions: string[] = []
    const onRequest = (request: { url(): string }) => {
      const upload = /\/v1\/upload\/([^/]+)\/blobs\//.exec(request.url())?.[1]
      if (upload !== undefined && !sessions.includes(upload)) sessions.push(upload)
    }
    page.on('request', onRequest)
    let commitHeld!: () => void
    const held = new Promise<void>((resolve) => {
      commitHeld = resolve
    })
    // The first commit is held, never answered (the reload cancels it); the reloaded page's goes on.
    let commits = 0
    await page.route('**/v1/albums/*/ops', async (route) => {
      if (commits++ === 0) return commitHeld()
      await route.continue()
    })
    await picker(page).setInputFiles(cut.file)
    await held
    expect(sessions).toHaveLength(1)
    const left = sessions[0]!
    // Open at the server, every blob of it stored: a manifest of the same original could be paired with it.
    expect((await account.library.client.uploadSessionStatus(left)).blobs.every((blob) => blob.present)).toBe(true)
    expect((await server.deps.storage.findUploadSession(left))?.closedAt).toBeNull()
    await page.reload()
    await poll(async () => (await decryptedThumbnails(page)).includes(cut.name), 30_000)
      .toBe(true)
      .catch(async (error: unknown) => {
        throw new Error(`${String(error)}; the page shows ${await uploadsAndTiles(page)}`, { cause: error })
      })
    page.off('request', onRequest)
    await page.unrouteAll({ behavior: 'ignoreErrors' })
    expect(commits).toBe(2)
    // The reloaded page ended the session it found before sending the file again in a new one.
    expect(sessions).toHaveLength(2)
    expect((await server.deps.storage.findUploadSession(left))?.closedAt).toEqual(expect.any(Number))
    expect(await liveAssetIds(account.library, albumId)).toHaveLength(25)
    expect(device.problems).toEqual([])
  }, 60_000)

  it('deletes to Recently deleted: Undo restores at once; there, Restore brings a photo back and Delete now deletes one for good', async () => {
    const { page } = device
    const kept = photos[1]!
    await page.getByRole('link', { name: kept.name }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'More' }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click()
    await poll(() => page.getByText('Moved 1 photo to Recently deleted.').isVisible(), 20_000).toBe(true)
    expect(await decryptedThumbnails(page)).not.toContain(kept.name)
    await checkScreen(device, 'undo')
    await page.getByRole('button', { name: 'Undo' }).click()
    await poll(() => page.getByText('Restored 1 photo.').isVisible(), 20_000).toBe(true)
    await poll(async () => (await decryptedThumbnails(page)).includes(kept.name)).toBe(true)
    expect((await listTrash(account.library)).files).toEqual([])

    await page.getByRole('button', { name: 'Select', exact: true }).click()
    const [back, gone] = [photos[2]!, photos[3]!]
    for (const p of [back, gone]) await page.getByRole('button', { name: `Select ${p.name}` }).click()
    await page.getByRole('region', { name: 'Selection' }).getByRole('button', { name: 'Delete' }).click()
    await poll(() => page.getByText('Moved 2 photos to Recently deleted.').isVisible(), 20_000).toBe(true)
    const names = await decryptedThumbnails(page)
    for (const p of [back, gone]) expect(names).not.toContain(p.name)
    expect(names).toContain(kept.name)
    // Still live on the server, held in the trash with the signed deletes.
    expect(await liveAssetIds(account.library, albumId)).toHaveLength(25)
    expect((await listTrash(account.library)).files).toHaveLength(2)

    // The Photos screen leaves them out too.
    // (The album's 25 and the one photo of "Copies", the same original as one of them, counted once.)
    await page.goto(`${server.url}/#/photos`)
    await poll(() => page.locator('.reading-dates').textContent(), 30_000).toBe('23 photos')
    for (const p of [back, gone]) expect(await decryptedThumbnails(page)).not.toContain(p.name)

    await page.goto(`${server.url}/#/trash`)
    await poll(() => page.locator('.trash-item img').count(), 20_000).toBe(2)
    expect(await page.locator('.trash-item').first().textContent()).toMatch(/30 days left/)
    await checkScreen(device, 'trash')
    await page.getByRole('button', { name: `Restore ${back.name}` }).click()
    await poll(() => page.locator('.trash-item').count(), 20_000).toBe(1)
    await page.getByRole('button', { name: `Delete now: ${gone.name}` }).click()
    await page.getByRole('dialog', { name: 'Delete this photo for good?' }).getByRole('button', { name: 'Delete for good' }).click()
    await poll(() => page.getByText('Nothing here.').isVisible(), 20_000).toBe(true)
    await checkScreen(device, 'trash-empty')
    expect(await liveAssetIds(account.library, albumId)).toHaveLength(24)
    expect((await listTrash(account.library)).files).toEqual([])

    await page.goto(`${server.url}/#/albums/${albumId}`)
    await poll(async () => (await decryptedThumbnails(page)).includes(back.name), 20_000).toBe(true)
    expect(await decryptedThumbnails(page)).not.toContain(gone.name)
    expect(device.problems).toEqual([])
  }, 90_000)

  it('replaces a photo with a new version after the undo window', async () => {
    const { page } = device
    const old = photos[5]!
    const fresh = await photo(200)
    await page.getByRole('link', { name: old.name }).click()
    const assetId = new URL(page.url()).hash.split('/')[3]!
    await page.locator('input[type=file][aria-label="New version of this photo"]').setInputFiles(fresh.file)
    await poll(() => page.getByText(`Replaced the photo with ${fresh.name}. This is final`).isVisible(), 30_000).toBe(true)
    await poll(() => page.getByRole('dialog').getByRole('heading').textContent()).toBe(fresh.name)
    const entry = (await liveEntries(account.library.client, albumId)).find((e) => e.asset_id === assetId)!
    expect(entry.action).toBe('replace')
    expect((await restoreFile({ ...account.library, albumId }, entry)).metadata.name).toBe(fresh.name)
    expect(device.problems).toEqual([])
    await device.context.close()
  }, 60_000)

  it('loads the grid in batches, never a blob at a time, each tile showing a placeholder before its thumbnail', async () => {
    const { account: owner, albumId: manyId } = await many
    const watched = await openDevice(browser, server.url)
    const { page } = watched
    /** Hashes asked for by each batch request; the hashes of single blob downloads apart. */
    const batches: number[] = []
    const singles: string[] = []
    page.on('request', (request) => {
      const { pathname } = new URL(request.url())
      if (pathname === '/v1/blobs/batch') batches.push((request.postDataJSON() as { hashes: string[] }).hashes.length)
      else if (pathname.startsWith('/v1/blobs/')) singles.push(pathname.slice('/v1/blobs/'.length))
    })
    // Each batch answer held back a moment, so that what a tile shows before its thumbnail stays long enough to be seen.
    await page.route('**/v1/blobs/batch', async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 400))
      await route.continue()
    })
    // When each tile first showed a placeholder, one naming its photo, and its thumbnail (ms since the page began).
    await page.addInitScript(() => {
      type Tile = { getAttribute(name: string): string | null; querySelector(selector: string): unknown }
      const page = globalThis as unknown as {
        document: { querySelectorAll(selector: string): Iterable<Tile> }
        performance: { now(): number }
        MutationObserver: new (callback: () => void) => { observe(target: unknown, options: unknown): void }
        firstSeen: Record<string, Record<string, number>>
      }
      const firstSeen: Record<string, Record<string, number>> = {}
      page.firstSeen = firstSeen
      const look = (): void => {
        for (const tile of page.document.querySelectorAll('a[data-asset]')) {
          const asset = tile.getAttribute('data-asset') ?? ''
          firstSeen[asset] ??= {}
          const seen = firstSeen[asset]
          const now = page.performance.now()
          if (tile.querySelector('.tile-placeholder') !== null) {
            seen.placeholder ??= now
            if (/^swatch-\d+\.webp, loading$/.test(tile.getAttribute('aria-label') ?? '')) seen.named ??= now
          }
          if (tile.querySelector('img') !== null) seen.thumbnail ??= now
        }
      }
      new page.MutationObserver(look).observe(page.document, { subtree: true, childList: true, attributes: true, attributeFilter: ['aria-label'] })
    })
    await openAs(page, server, owner, `/#/albums/${manyId}`)
    await poll(() => page.getByText(`${MANY} photos.`).isVisible(), 60_000).toBe(true)
    await poll(async () => (await decryptedThumbnails(page)).length).toBeGreaterThan(8)
    await poll(() => page.locator('.tile-placeholder').count()).toBe(0)
    const shown = (await decryptedThumbnails(page)).length

    // The one blob read alone is the album's record (its name), not a tile's.
    const recordId = await albumRecordId(owner.library.masterKey, manyId)
    const record = (await liveEntries(owner.library.client, manyId)).find((entry) => entry.asset_id === recordId)
    expect(singles).toEqual([record?.metadata_blob_hash])
    // A metadata batch and a thumbnail batch per group of tiles: far fewer requests than tiles.
    expect(batches.length).toBeGreaterThanOrEqual(2)
    expect(batches.length).toBeLessThanOrEqual(Math.ceil(shown / 4))
    expect(Math.max(...batches)).toBeLessThanOrEqual(100)
    expect(batches.reduce((sum, hashes) => sum + hashes, 0)).toBeGreaterThanOrEqual(2 * shown)

    const firstSeen = await page.evaluate(() => (globalThis as unknown as { firstSeen: Record<string, Record<string, number>> }).firstSeen)
    const drawn = Object.values(firstSeen).filter((seen) => seen.thumbnail !== undefined)
    expect(drawn.length).toBe(shown)
    for (const seen of drawn) expect(seen.placeholder).toBeLessThan(seen.thumbnail!)
    // Once its metadata is open the placeholder names the photo, while its thumbnail is still on the way.
    expect(drawn.filter((seen) => seen.named !== undefined && seen.named < seen.thumbnail!).length).toBeGreaterThan(shown / 2)
    expect(watched.problems).toEqual([])
    await watched.context.close()
  }, 120_000)

  it('shows a photo whose files the server refused as one that cannot be opened, with the reason on hover', async () => {
    const { account: owner, albumId: manyId } = await many
    const watched = await openDevice(browser, server.url)
    const { page } = watched
    // Every batch answered with a server error: no tile's metadata can be read.
    await page.route('**/v1/blobs/batch', (route) =>
      route.fulfill({
        status: 500,
        contentType: 'application/problem+json',
        body: JSON.stringify({
          type: 'about:blank',
          title: 'Internal Server Error',
          status: 500,
          detail: 'The blob store broke',
          instance: '',
          code: 'error.internal',
        }),
      }),
    )
    await openAs(page, server, owner, `/#/albums/${manyId}`)
    await poll(() => page.getByText(`${MANY} photos.`).isVisible(), 60_000).toBe(true)
    const failed = page.locator('a[data-asset].tile-failed').first()
    await poll(() => failed.getAttribute('title')).toBe('The blob store broke. Try again; if it keeps failing, tell the operator (request unknown).')
    expect(await failed.getAttribute('aria-label')).toBe('Photo that cannot be opened')
    expect(await failed.textContent()).toBe('Cannot be opened')
    // A tile that opened has no such title.
    expect(await page.locator('a[data-asset][title]:not(.tile-failed)').count()).toBe(0)
    expect(watched.problems).toEqual([])
    await watched.context.close()
  }, 120_000)

  it(`scrolls an album of ${MANY} photos to its end, holding only the rows on screen, and shows a photo the operator took down as withheld`, async () => {
    const { account: owner, albumId: manyId } = await many
    // The first in the feed: the grid's first tile.
    const withheld = (await liveAssetIds(owner.library, manyId))[0]!
    await new CofferAdmin({ baseUrl: server.url, adminToken: ADMIN_TOKEN }).takeDown(withheld, 'test')
    const phone = await openDevice(browser, server.url, { phone: true })
    const { page } = phone
    await openAs(page, server, owner, `/#/albums/${manyId}`)
    await poll(() => page.getByText(`${MANY} photos.`).isVisible(), 60_000).toBe(true)
    await poll(async () => (await decryptedThumbnails(page)).length).toBeGreaterThan(8)
    expect(await page.locator('.tile').count()).toBeLessThan(MANY / 2)

    const last = `swatch-${String(MANY - 1).padStart(5, '0')}.webp`
    for (let tries = 0; tries < 100 && !(await decryptedThumbnails(page)).includes(last); tries++) {
      await page.mouse.wheel(0, 4000)
      await page.waitForTimeout(50)
    }
    await poll(async () => (await decryptedThumbnails(page)).includes(last), 20_000).toBe(true)
    expect(await page.locator('.tile').count()).toBeLessThan(MANY / 2)

    // Wheel events queued on a busy machine are still applied after the last one was sent: back
    // to the top only once the page has stopped moving, or they carry it down again.
    await scrollSettled(page)
    await page.evaluate(() => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0))
    const tile = page.locator(`a[data-asset="${withheld}"]`)
    await poll(() => tile.textContent()).toBe('Withheld by the operator')
    await tile.click()
    await poll(() => page.getByRole('dialog').getByText('Withheld by the operator').isVisible()).toBe(true)
    expect(phone.problems).toEqual([])
    await phone.context.close()
  }, 180_000)
})
