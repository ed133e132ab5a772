// A public link's page in Chromium (issue 40; decision 0068), each visitor in a fresh browser
// context with no account: the owner (in Node) makes links to an album of real photos; the
// visitor opens the album's grid, a photo, and downloads its original byte for byte; a view-only
// link offers no download; a password is asked, a wrong one refused, the right one opens; an
// expired link and one revoked while it is open stop the page and say why; a link cut short or
// unknown says so. Afterwards nothing the server stored or logged holds the link's secret, its
// keys, its password or a photo's plaintext.
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { linkKeys, parseLinkUrl } from '../../src/client/format/link.ts'
import { createLink, revokeLink } from '../../src/client/links.ts'
import { contactsFile } from '../../src/client/node/contacts.ts'
import { nativeArgon2id } from '../../src/client/node/crypto.ts'
import type { SharingAccount } from '../../src/client/sharing.ts'
import { everyRow } from '../support/database.ts'
import { checkScreen, launchChromium, openDevice, type WatchedPage } from '../support/browser.ts'
import { decryptedThumbnails, seedAlbum, swatch } from '../support/gallery.ts'
import { startServer, type TestServer } from '../support/server.ts'
import { openAs, webAccount, type WebAccount } from '../support/web-account.ts'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'

const PHOTOS = 6
const PASSWORD = 'lemon cake'

let server: TestServer
let browser: Browser
let owner: SharingAccount
let ownerAccount: WebAccount
let albumId: string
const visitors: WatchedPage[] = []

beforeAll(async () => {
  ;[server, browser] = await Promise.all([startServer(), launchChromium()])
  const account = await webAccount(server, 'link-owner')
  ownerAccount = account
  owner = { library: account.library, contacts: contactsFile(path.join(mkdtempSync(path.join(tmpdir(), 'coffer-links-')), 'pins.sqlite')) }
  albumId = (await seedAlbum(account.library, 'Garden party', PHOTOS, 2)).album.albumId
}, 60_000)
afterAll(async () => {
  for (const visitor of visitors) await visitor.context.close()
  await browser?.close()
  await server?.close()
})

/** A fresh browser context with no account, at the link's URL. */
async function visit(url: string, options: { phone?: boolean } = {}): Promise<WatchedPage> {
  const visitor = await openDevice(browser, server.url, options)
  visitors.push(visitor)
  await visitor.page.goto(url)
  return visitor
}

const stopped = (page: Page) => page.locator('[data-stopped]')

async function gridShown(page: Page, count = PHOTOS): Promise<void> {
  await page.getByRole('heading', { name: 'Garden party', level: 1 }).waitFor()
  await expect.poll(() => page.locator('[data-facts]').textContent()).toContain(`${count} photos`)
  await expect.poll(async () => (await decryptedThumbnails(page)).length, { timeout: 15_000 }).toBe(count)
}

describe('a public link’s page', () => {
  it('shows the album with no account: the grid, a photo, and its original downloaded byte for byte, under the same CSP', async () => {
    const { url, link } = await createLink(owner, albumId)
    const visitor = await visit(url)
    const { page } = visitor
    const answer = await page.request.get(new URL(url).pathname)
    expect(answer.headers()['content-security-policy']).toContain("script-src 'self'")
    expect(answer.headers()['referrer-policy']).toBe('no-referrer')
    await gridShown(page)
    await checkScreen(visitor, 'link')

    await page.locator('.grid a[data-asset]').first().click()
    const viewer = page.getByRole('dialog')
    await viewer.locator('img[data-full]').waitFor()
    expect(page.url()).toMatch(new RegExp(`#${url.split('#')[1]}/[0-9a-f-]{36}$`))
    await checkScreen(visitor, 'link-photo')
    const name = (await viewer.getByRole('heading', { level: 2 }).textContent()) ?? ''
    const [download] = await Promise.all([page.waitForEvent('download'), viewer.getByRole('button', { name: 'Download' }).click()])
    const saved = await readFile((await download.path())!)
    const n = Number(/swatch-(\d+)/.exec(name)?.[1])
    expect(Buffer.from(saved).equals(Buffer.from(await swatch(n)))).toBe(true)
    // Back closes the photo, and the album is there again.
    await page.goBack()
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0)
    // A reload reads on with the session this tab kept: no other open is spent.
    await page.reload()
    await gridShown(page)
    const opensOf = async () => (await owner.library.client.listLinks(albumId)).links.find((made) => made.link_id === link.link_id)?.opens
    expect(await opensOf()).toBe(1)
    // Once that session has ended (LINK_SESSION_TTL_S, 12 h), a reload opens the link again.
    server.clock.advance(13 * 3600_000)
    await page.reload()
    await gridShown(page)
    expect(await opensOf()).toBe(2)
    expect(visitor.problems).toEqual([])
  })

  it('view only: the photo is shown, and no download offered', async () => {
    const { url } = await createLink(owner, albumId, { downloads: false })
    const { page, problems } = await visit(url, { phone: true })
    await gridShown(page)
    await expect.poll(() => page.locator('[data-facts]').textContent()).toContain('view only')
    await page.locator('.grid a[data-asset]').first().click()
    await page.getByRole('dialog').locator('img[data-full]').waitFor()
    expect(await page.getByRole('dialog').getByRole('button', { name: 'Download' }).count()).toBe(0)
    expect(problems).toEqual([])
  })

  it('asks for the password; a wrong one is refused, the right one opens it', async () => {
    const { url } = await createLink(owner, albumId, { password: PASSWORD, argon2id: nativeArgon2id })
    const visitor = await visit(url)
    const { page } = visitor
    const field = page.getByLabel('Password')
    await field.waitFor()
    await checkScreen(visitor, 'link-password')
    await field.fill('lemon pie')
    await page.getByRole('button', { name: 'Open' }).click()
    await page.getByText('That password is not this link’s').waitFor({ timeout: 30_000 })
    await field.fill(PASSWORD)
    await page.getByRole('button', { name: 'Open' }).click()
    await gridShown(page)
    expect(visitor.problems).toEqual([])
  })

  it('says a link expired, or was cut short, or does not exist', async () => {
    const { url } = await createLink(owner, albumId, { expiresInS: 60 })
    server.clock.advance(61_000)
    const expired = await visit(url)
    await expect.poll(() => stopped(expired.page).textContent()).toContain('This link has expired')
    await checkScreen(expired, 'link-expired')
    const cut = await visit(url.slice(0, -6))
    await expect.poll(() => stopped(cut.page).textContent()).toContain('This link is incomplete')
    const { linkId } = parseLinkUrl(url)
    const unknown = await visit(url.replace(linkId, `${linkId.slice(0, -2)}AA`))
    await expect.poll(() => stopped(unknown.page).textContent()).toContain('This link does not exist')
  })

  it('stops while open once its owner revokes it: the next photo is not shown, the page says why', async () => {
    const { url, link } = await createLink(owner, albumId)
    const { page } = await visit(url)
    await gridShown(page)
    await revokeLink(owner.library, link.link_id)
    await page.locator('.grid a[data-asset]').nth(2).click()
    await expect.poll(() => stopped(page).textContent()).toContain('turned off by the person who shared it')
    expect(await page.locator('.grid img').count()).toBe(0)
  })

  it('leaves nothing on the server that opens a linked photo: no secret, key, password or plaintext in its database, blobs or log', async () => {
    const { url } = await createLink(owner, albumId, { password: PASSWORD, argon2id: nativeArgon2id })
    const { page } = await visit(url)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Open' }).click()
    await gridShown(page)
    const { linkId, secret } = parseLinkUrl(url)
    const stretch = (await server.client().probeLink(linkId)).password!
    const passwordKey = await nativeArgon2id(new TextEncoder().encode(PASSWORD), Buffer.from(stretch.salt, 'base64'), {
      memoryKiB: stretch.memory_kib,
      passes: stretch.iterations,
      lanes: 1,
    })
    const keys = await linkKeys(linkId, secret, passwordKey)
    const secrets = [secret, passwordKey, keys.key, keys.token].flatMap((bytes) => {
      const buffer = Buffer.from(bytes)
      return [buffer.toString('hex'), buffer.toString('base64'), buffer.toString('base64url')]
    })
    const photos = await Promise.all(Array.from({ length: PHOTOS }, async (_, n) => Buffer.from(await swatch(n))))
    const needles = [...secrets, PASSWORD, ...photos.map((bytes) => bytes.toString('base64')), ...photos.map((bytes) => bytes.toString('hex'))]
    const haystacks = [JSON.stringify(await everyRow(server.database)), server.logs.join('\n')]
    for (const haystack of haystacks) for (const needle of needles) expect(haystack.includes(needle), needle.slice(0, 12)).toBe(false)
    // The blob folder, byte for byte: no photo's plaintext, no secret.
    const folder = server.deps.config.blobDir
    const files = (await readdir(folder, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile())
    expect(files.length).toBeGreaterThan(PHOTOS)
    for (const file of files) {
      const bytes = await readFile(path.join(file.parentPath, file.name))
      for (const needle of [...photos, Buffer.from(secret), Buffer.from(keys.key)]) expect(bytes.includes(needle)).toBe(false)
    }
  })

  it('is made, listed and revoked on the owner’s album page; the selection bar links the photos chosen', async () => {
    const ownerDevice = await openDevice(browser, server.url)
    visitors.push(ownerDevice)
    const { page } = ownerDevice
    await openAs(page, server, ownerAccount, `/#/albums/${albumId}`)
    await expect.poll(async () => (await decryptedThumbnails(page)).length, { timeout: 15_000 }).toBe(PHOTOS)
    const panel = page.locator('details.links')
    await panel.locator('summary').click()
    await panel.getByLabel('Allow downloads of the originals').uncheck()
    await panel.getByLabel('Expires').selectOption({ label: 'In a week' })
    await panel.getByRole('button', { name: 'Make link' }).click()
    const made = panel.locator('li[data-state="active"]').filter({ hasText: 'view only' }).first()
    await made.waitFor()
    await checkScreen(ownerDevice, 'link-panel')
    const url = await made.getByLabel('Link').inputValue()
    expect(url).toMatch(new RegExp(`^${server.url}/s/[A-Za-z0-9_-]{22}#[A-Za-z0-9_-]{43}$`))
    const guest = await visit(url)
    await gridShown(guest.page)

    // The selection bar: two photos chosen, a link to those two only.
    await page.getByRole('button', { name: 'Select', exact: true }).click()
    const tiles = page.locator('.grid [data-asset]')
    await tiles.nth(0).click()
    await tiles.nth(1).click()
    await page.getByRole('region', { name: 'Selection' }).getByRole('button', { name: 'Link', exact: true }).click()
    const dialog = page.getByRole('dialog')
    await dialog.getByRole('button', { name: 'Make link' }).click()
    const selectionUrl = await dialog.getByLabel('Link').inputValue()
    await dialog.getByRole('button', { name: 'Done' }).click()
    const chosen = await visit(selectionUrl)
    await gridShown(chosen.page, 2)

    // Listed with its opens; revoked from the panel, its open page stops at the next read.
    await page.reload()
    await panel.locator('summary').click()
    const row = panel.locator('li').filter({ has: page.locator(`input[value="${url}"]`) })
    await expect.poll(() => row.textContent()).toContain('opened 1 time')
    await row.getByRole('button', { name: 'Revoke' }).click()
    await expect.poll(() => row.getAttribute('data-state')).toBe('revoked')
    await guest.page.locator('.grid a[data-asset]').first().click()
    await expect.poll(() => stopped(guest.page).textContent()).toContain('turned off by the person who shared it')
    expect(ownerDevice.problems).toEqual([])
  })
})
