// The app on a phone and installed (docs/decisions/0057-phone-and-installable.md), in Chromium
// against a real server: at 390×844 (a touch screen) the compact header, the bottom bar and the
// account menu; at 1280×900 the header's links as before; the manifest and its icons; the
// service worker, which opens the app offline to its offline screen and caches nothing but the
// shell; and the share target: two JPEGs posted to /share as a phone's share sheet does, listed
// on #/share and uploaded into a new album. Each screen passes axe and is photographed.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkScreen, launchChromium, type WatchedPage } from '../support/browser.ts'
import { writePhoto } from '../support/photos.ts'
import { startServer, type TestServer } from '../support/server.ts'
import { openAs, webAccount } from '../support/web-account.ts'

let server: TestServer
let browser: Browser
let folder: string
const opened: WatchedPage[] = []

beforeAll(async () => {
  ;[server, browser, folder] = await Promise.all([startServer(), launchChromium(), mkdtemp(path.join(tmpdir(), 'coffer-phone-'))])
}, 60_000)
afterAll(async () => {
  for (const watched of opened) await watched.context.close()
  await browser?.close()
  await server?.close()
  if (folder !== undefined) await rm(folder, { recursive: true, force: true })
})

const poll = <T>(read: () => Promise<T>, timeout = 20_000) => expect.poll(read, { timeout })

/** A browser context at phone size (a touch screen) or desktop size, its page watched as openDevice's are. */
async function openSized(phone: boolean): Promise<WatchedPage> {
  const context = await browser.newContext({
    baseURL: server.url,
    viewport: phone ? { width: 390, height: 844 } : { width: 1280, height: 900 },
    ...(phone ? { isMobile: true, hasTouch: true } : {}),
    reducedMotion: 'reduce',
  })
  context.setDefaultTimeout(10_000)
  const page = await context.newPage()
  const problems: string[] = []
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content.Security.Policy|Refused to/i.test(message.text())) problems.push(`CSP: ${message.text()}`)
  })
  page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`))
  const watched = { page, context, problems }
  opened.push(watched)
  return watched
}

/**
 * Waits for the service worker to be active and to control the page. Its activation claims the
 * pages open, but Chromium may not hand a page loaded before the worker was active to it (seen
 * once in CI): a page loaded once the worker is active always is, as every later visit is.
 */
async function controlled(page: Page): Promise<void> {
  await page.evaluate('navigator.serviceWorker.ready.then(() => true)')
  if (!(await page.evaluate('navigator.serviceWorker.controller !== null'))) await page.reload()
  await poll(() => page.evaluate('navigator.serviceWorker.controller !== null')).toBe(true)
}

describe('at phone size', () => {
  it('has a compact header, a bottom bar with Photos and Albums, and an account menu whose links work', async () => {
    const account = await webAccount(server, 'phone')
    const device = await openSized(true)
    const { page } = device
    await openAs(page, server, account, '/#/photos')
    await page.getByRole('heading', { level: 1 }).waitFor()
    const header = (await page.locator('header.bar').boundingBox())!
    expect(header.height).toBeLessThanOrEqual(64)
    // The wide header's links are not shown: the bottom bar has the places.
    await expect(page.getByRole('navigation', { name: 'Main' }).isVisible()).resolves.toBe(false)
    const bottom = page.getByRole('navigation', { name: 'Sections' })
    const photos = bottom.getByRole('link', { name: 'Photos' })
    const albums = bottom.getByRole('link', { name: 'Albums' })
    expect(await photos.getAttribute('aria-current')).toBe('page')
    for (const link of [photos, albums]) {
      const box = (await link.boundingBox())!
      expect(box.height).toBeGreaterThanOrEqual(44)
      expect(box.y + box.height).toBeLessThanOrEqual(844 + 1)
    }
    await checkScreen(device, 'phone-header')

    await albums.click()
    await page.getByRole('heading', { name: 'Albums' }).waitFor()
    expect(await albums.getAttribute('aria-current')).toBe('page')
    expect(await photos.getAttribute('aria-current')).toBeNull()
    await checkScreen(device, 'albums-empty-phone')

    const accountButton = page.getByRole('button', { name: 'Account', exact: true })
    expect(await accountButton.getAttribute('aria-expanded')).toBe('false')
    await accountButton.click()
    const menu = page.locator('#account-menu')
    await menu.waitFor()
    expect(await accountButton.getAttribute('aria-expanded')).toBe('true')
    expect(await menu.textContent()).toContain(account.email)
    for (const name of ['Add a device', 'Recently deleted', 'Security', 'Moderation record'])
      expect(await menu.getByRole('link', { name }).isVisible()).toBe(true)
    await checkScreen(device, 'phone-menu')
    // Escape closes it, the focus back on its button.
    await page.keyboard.press('Escape')
    await expect(menu.isVisible()).resolves.toBe(false)
    await poll(() => page.evaluate('document.activeElement?.getAttribute("aria-controls")')).toBe('account-menu')

    for (const [name, heading] of [
      ['Security', 'Security'],
      ['Recently deleted', 'Recently deleted'],
      ['Moderation record', 'Moderation record'],
      ['Add a device', 'Add a device'],
    ] as const) {
      await accountButton.click()
      await menu.getByRole('link', { name }).click()
      await page.getByRole('heading', { level: 1, name: heading }).waitFor()
      await expect(menu.isVisible()).resolves.toBe(false)
    }
    await accountButton.click()
    await menu.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('button', { name: 'Sign in' }).waitFor()
    expect(device.problems).toEqual([])
  }, 60_000)

  it('keeps the header links at 1280×900, with no bottom bar', async () => {
    const account = await webAccount(server, 'desktop')
    const device = await openSized(false)
    const { page } = device
    await openAs(page, server, account, '/#/albums')
    await page.getByRole('heading', { name: 'Albums' }).waitFor()
    const main = page.getByRole('navigation', { name: 'Main' })
    for (const name of ['Photos', 'Albums', 'Favourites', 'Add a device', 'Recently deleted', 'Security', 'Moderation record'])
      expect(await main.getByRole('link', { name }).isVisible()).toBe(true)
    // One row of links: the email gives way (it is Sign out's title).
    const links = await main.getByRole('link').evaluateAll((all) => all.map((link) => Math.round(link.getBoundingClientRect().top)))
    expect(new Set(links).size).toBe(1)
    expect(await page.getByRole('button', { name: 'Sign out' }).getAttribute('title')).toBe(`Signed in as ${account.email}`)
    expect(await page.getByRole('navigation', { name: 'Sections' }).isVisible()).toBe(false)
    expect(await page.getByRole('button', { name: 'Account', exact: true }).isVisible()).toBe(false)
    expect(await page.getByRole('button', { name: 'Sign out' }).isVisible()).toBe(true)
    await checkScreen(device, 'desktop-header', { phone: false })
  })
})

describe('installed', () => {
  for (const phone of [true, false])
    it(`has a manifest with its icons, and a service worker that opens the app offline and caches only the shell (${phone ? 'phone' : 'desktop'})`, async () => {
      const account = await webAccount(server, 'offline')
      const device = await openSized(phone)
      const { page, context } = device
      await openAs(page, server, account, '/#/photos')
      await page.getByRole('heading', { level: 1 }).waitFor()

      const manifestUrl = await page.locator('link[rel="manifest"]').getAttribute('href')
      expect(manifestUrl).toBe('/manifest.webmanifest')
      const manifest = (await page.evaluate(async (url) => (await fetch(url)).json(), manifestUrl!)) as {
        name: string
        start_url: string
        display: string
        icons: { src: string; sizes: string; purpose: string }[]
        share_target: { action: string; method: string; enctype: string; params: { files: { name: string; accept: string[] }[] } }
      }
      expect(manifest).toMatchObject({ name: 'Coffer Photos', display: 'standalone', start_url: '/#/photos' })
      expect(manifest.share_target).toMatchObject({ action: '/share', method: 'POST', enctype: 'multipart/form-data' })
      expect(manifest.share_target.params.files).toEqual([{ name: 'photos', accept: ['image/*', 'video/*'] }])
      for (const icon of manifest.icons) {
        const loaded = await page.evaluate(`(async () => {
          const answer = await fetch(${JSON.stringify(icon.src)})
          const image = await createImageBitmap(await answer.blob())
          return { status: answer.status, type: answer.headers.get('content-type'), size: image.width + 'x' + image.height }
        })()`)
        expect(loaded).toEqual({ status: 200, type: 'image/png', size: icon.sizes })
      }

      await controlled(page)
      // The Cache API holds the shell and nothing else: no API answer, no blob.
      const cached = (await page.evaluate(`(async () => {
        const urls = []
        for (const name of await caches.keys()) for (const request of await (await caches.open(name)).keys()) urls.push(new URL(request.url).pathname)
        return { names: await caches.keys(), urls }
      })()`)) as { names: string[]; urls: string[] }
      expect(cached.names).toHaveLength(1)
      expect(cached.urls).toContain('/')
      expect(cached.urls.filter((url) => url.startsWith('/v1/'))).toEqual([])
      expect(cached.urls.filter((url) => url !== '/' && url !== '/manifest.webmanifest' && !url.startsWith('/assets/') && !url.startsWith('/icons/'))).toEqual(
        [],
      )

      await context.setOffline(true)
      await page.reload()
      await page.getByRole('heading', { name: 'You are offline' }).waitFor()
      await checkScreen(device, phone ? 'offline-phone' : 'offline', { phone: false })
      await context.setOffline(false)
      // Back online, the app goes on by itself.
      await page.getByRole('heading', { name: 'You are offline' }).waitFor({ state: 'detached' })
      await page.getByRole('heading', { level: 1 }).waitFor()
      expect(device.problems).toEqual([])
    })
})

/** Posts files to /share as a share sheet does: a form's multipart POST navigating to it, from a page of no origin. */
async function share(page: Page, files: { name: string; type: string; bytes: number[] }[]): Promise<void> {
  await page.goto('about:blank')
  // A script of its own: this program is typed for Node, not the DOM.
  await page.evaluate(`(() => {
    const form = document.createElement('form')
    form.method = 'post'
    form.enctype = 'multipart/form-data'
    form.action = ${JSON.stringify(`${server.url}/share`)}
    const input = document.createElement('input')
    input.type = 'file'
    input.name = 'photos'
    input.multiple = true
    const transfer = new DataTransfer()
    for (const file of ${JSON.stringify(files)}) transfer.items.add(new File([new Uint8Array(file.bytes)], file.name, { type: file.type }))
    input.files = transfer.files
    form.append(input)
    document.body.append(form)
    form.submit()
  })()`)
}

describe('a share target', () => {
  it('takes two photos from the share sheet into a new album', async () => {
    const account = await webAccount(server, 'share')
    const device = await openSized(true)
    const { page } = device
    await openAs(page, server, account, '/#/albums')
    await page.getByRole('heading', { name: 'Albums' }).waitFor()
    await controlled(page)

    const files = []
    for (const [n, name] of ['beach.jpg', 'harbour.jpg'].entries()) {
      const file = path.join(folder, name)
      await writePhoto(file, { format: 'jpeg', width: 320 + n * 40, height: 240, seed: 57 + n })
      files.push({ name, type: 'image/jpeg', bytes: [...(await readFile(file))] })
    }
    await share(page, files)
    await page.waitForURL(/\/#\/share$/)
    await page.getByRole('heading', { name: 'Add shared photos' }).waitFor()
    const list = page.locator('.shared-files li')
    await poll(() => list.allTextContents()).toEqual([expect.stringContaining('beach.jpg'), expect.stringContaining('harbour.jpg')])
    await page.getByLabel("New album's name").fill('From my phone')
    await checkScreen(device, 'share')

    await page.getByRole('button', { name: 'Add 2 files' }).click()
    await page.getByRole('heading', { name: 'From my phone' }).waitFor()
    // The album's upload panel sends them; both then show as photos.
    await poll(() => page.locator('.grid [data-asset] img').count(), 60_000).toBe(2)
    await checkScreen(device, 'share-done')
    // Asked again, the worker has nothing left.
    await page.goto('/#/share')
    await page.getByText('No shared files are waiting here').waitFor()
    await checkScreen(device, 'share-gone')
    expect(device.problems).toEqual([])
  }, 60_000)

  it('asks a signed-out person to sign in first (desktop size)', async () => {
    const device = await openSized(false)
    const { page } = device
    await page.goto('/')
    await page.getByRole('button', { name: 'Sign in' }).waitFor()
    await controlled(page)
    await share(page, [{ name: 'one.jpg', type: 'image/jpeg', bytes: [0xff, 0xd8, 0xff, 0xd9] }])
    await page.waitForURL(/\/#\/share$/)
    await page.getByText('Sign in to add the photos you shared').waitFor()
    await checkScreen(device, 'share-sign-in')
  })
})
