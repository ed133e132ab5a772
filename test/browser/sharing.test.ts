// Sharing an album in the web app (issue 39; decision 0067), in Chromium against a real server,
// three accounts each in a browser of its own: the owner (desktop) invites a contributor and a
// viewer by email; the contributor (phone) sees the invitation, accepts it, opens the album with
// the keys sealed for her browser, sees who added each photo, and adds one; the owner sees it,
// added by her; both show the same safety number and mark each other verified; the viewer has
// nothing to add or delete with; removed, the viewer's album no longer opens. A lying server
// that lists a member the owner never added (its row inserted with SQL) is caught on the
// contributor's album page as a changed membership.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findAlbum } from '../../src/client/albums.ts'
import { memorySource } from '../../src/client/files.ts'
import { backupFile } from '../../src/client/upload.ts'
import { writeRows } from '../support/database.ts'
import { checkScreen, launchChromium, openDevice, type WatchedPage } from '../support/browser.ts'
import { decryptedThumbnails, picker, seedAlbum } from '../support/gallery.ts'
import { writePhoto } from '../support/photos.ts'
import { registered } from '../support/actors.ts'
import { startServer, type TestServer } from '../support/server.ts'
import { openAs, webAccount, type WebAccount } from '../support/web-account.ts'

let server: TestServer
let browser: Browser
let owner: WebAccount
let bea: WebAccount
let cal: WebAccount
let work: string

beforeAll(async () => {
  ;[server, browser] = await Promise.all([startServer(), launchChromium()])
  ;[owner, bea, cal] = await Promise.all([webAccount(server, 'web-owner'), webAccount(server, 'web-bea'), webAccount(server, 'web-cal')])
  work = await mkdtemp(path.join(tmpdir(), 'coffer-web-sharing-'))
}, 60_000)
afterAll(async () => {
  await browser?.close()
  await server?.close()
  if (work !== undefined) await rm(work, { recursive: true, force: true })
})

const people = (page: Page) => page.locator('details.people')

/** The album's people, unfolded (its summary clicked when folded). */
async function openPeople(page: Page): Promise<void> {
  await people(page).waitFor()
  if ((await people(page).getAttribute('open')) === null) await people(page).locator('summary').click()
}
const historyState = (page: Page): Promise<string | null> => page.locator('main.album').getAttribute('data-history')

async function invite(page: Page, email: string, role: 'viewer' | 'contributor'): Promise<void> {
  await openPeople(page)
  await people(page).getByLabel('Invite by email').fill(email)
  await people(page).getByLabel('as').selectOption(role)
  await page.getByRole('button', { name: 'Invite', exact: true }).click()
  await people(page).getByText(email).waitFor()
}

async function accept(device: WatchedPage, account: WebAccount, from: string): Promise<void> {
  await openAs(device.page, server, account, '/#/albums')
  const invitation = device.page.locator('section.invitations li').filter({ hasText: from })
  await invitation.waitFor()
  await invitation.getByRole('button', { name: 'Accept' }).click()
}

/** The 60 digits the safety number dialog shows for `email`, the dialog then left open. */
async function safetyNumberWith(page: Page, email: string): Promise<string> {
  await openPeople(page)
  await people(page).locator('li').filter({ hasText: email }).getByRole('button', { name: 'Safety number' }).click()
  const shown = page.locator('.safety-number')
  await shown.waitFor()
  return (await shown.getAttribute('data-number')) ?? ''
}

describe('sharing an album in the web app', { timeout: 180_000 }, () => {
  it('invites a contributor and a viewer, who accept, see who added each photo, compare safety numbers; the contributor adds, the viewer only looks; removed, the album closes', async () => {
    const { album } = await seedAlbum(owner.library, 'Beach house', 2, 1)
    const ownerPage = await openDevice(browser, server.url)
    await openAs(ownerPage.page, server, owner, `/#/albums/${album.albumId}`)
    await ownerPage.page.getByRole('heading', { name: 'Beach house' }).waitFor()
    await people(ownerPage.page).locator('summary', { hasText: 'Share' }).waitFor()
    await openPeople(ownerPage.page)
    await people(ownerPage.page).getByText('Only you can see this album.').waitFor()
    await invite(ownerPage.page, bea.email, 'contributor')
    await invite(ownerPage.page, cal.email, 'viewer')
    expect(await people(ownerPage.page).locator('li').filter({ hasText: bea.email }).textContent()).toContain('contributor, invited')
    await checkScreen(ownerPage, 'sharing-owner')

    // Bea, on her phone: the invitation, accepted; the album opens with the keys sealed for this browser.
    const beaPage = await openDevice(browser, server.url, { phone: true })
    await openAs(beaPage.page, server, bea, '/#/albums')
    await beaPage.page.locator('section.invitations').getByText(`${owner.email} invites you to an album, to view and add photos.`).waitFor()
    await checkScreen(beaPage, 'sharing-invitation')
    await beaPage.page.locator('section.invitations li').getByRole('button', { name: 'Accept' }).click()
    await beaPage.page.getByRole('heading', { name: 'Beach house' }).waitFor()
    await people(beaPage.page)
      .locator('summary', { hasText: `Shared by ${owner.email}` })
      .waitFor()
    await expect.poll(() => decryptedThumbnails(beaPage.page), { timeout: 20_000 }).toHaveLength(2)
    await expect.poll(() => historyState(beaPage.page), { timeout: 20_000 }).toBe('trusted')
    expect(await beaPage.page.getByRole('button', { name: 'Rename' }).count()).toBe(0)
    await checkScreen(beaPage, 'sharing-member-album')

    // She adds a photo of her own; the owner sees it, added by her.
    const file = path.join(work, 'dunes.jpg')
    await writePhoto(file, { format: 'jpeg', width: 64, height: 48, seed: 21 })
    await picker(beaPage.page).setInputFiles(file)
    await expect.poll(() => decryptedThumbnails(beaPage.page), { timeout: 30_000 }).toHaveLength(3)
    await ownerPage.page.reload()
    await expect.poll(() => decryptedThumbnails(ownerPage.page), { timeout: 30_000 }).toHaveLength(3)
    await expect.poll(() => historyState(ownerPage.page), { timeout: 20_000 }).toBe('trusted')
    await ownerPage.page
      .locator('.grid a')
      .filter({ has: ownerPage.page.locator('img[alt="dunes.jpg"]') })
      .click()
    await ownerPage.page.getByRole('button', { name: 'Info' }).click()
    await expect.poll(() => ownerPage.page.locator('[data-fact="added-by"]').textContent()).toBe(bea.email)
    await checkScreen(ownerPage, 'sharing-added-by')
    await ownerPage.page.keyboard.press('Escape')

    // Bea checks the album's custody, her photo and the owner's alike, with the keys she holds.
    await beaPage.page.goto(`/#/custody/${album.albumId}`)
    await beaPage.page.getByRole('status').filter({ hasText: 'All 3 photos' }).waitFor({ timeout: 30_000 })
    await beaPage.page.goto(`/#/albums/${album.albumId}`)
    await beaPage.page.getByRole('heading', { name: 'Beach house' }).waitFor()

    // The same safety number on both sides; each marks the other verified.
    const onBea = await safetyNumberWith(beaPage.page, owner.email)
    const onOwner = await safetyNumberWith(ownerPage.page, bea.email)
    expect(onBea).toMatch(/^(\d{5} ){11}\d{5}$/)
    expect(onOwner).toBe(onBea)
    await checkScreen(ownerPage, 'sharing-safety-number')
    await ownerPage.page.getByRole('button', { name: 'They match' }).click()
    await people(ownerPage.page).locator('li').filter({ hasText: bea.email }).getByText('verified').waitFor()

    // Cal, a viewer: the album opens, with nothing to add or delete with.
    const calPage = await openDevice(browser, server.url)
    await accept(calPage, cal, owner.email)
    await calPage.page.getByRole('heading', { name: 'Beach house' }).waitFor()
    await expect.poll(() => decryptedThumbnails(calPage.page), { timeout: 20_000 }).toHaveLength(3)
    expect(await picker(calPage.page).count()).toBe(0)
    await calPage.page.goto('/#/albums')
    await calPage.page.getByRole('heading', { name: 'Shared with you' }).waitFor()
    await calPage.page
      .locator('.album-card')
      .filter({ hasText: `Shared by ${owner.email}, to view` })
      .getByText('Beach house')
      .waitFor()
    await checkScreen(calPage, 'sharing-shared-with-you')

    // Removed: the album no longer opens for Cal. The owner's page, opened again, lists Cal as in the album.
    await ownerPage.page.reload()
    await people(ownerPage.page).locator('summary', { hasText: 'Shared with 2 people' }).waitFor()
    await expect.poll(() => historyState(ownerPage.page), { timeout: 20_000 }).toBe('trusted')
    await openPeople(ownerPage.page)
    await people(ownerPage.page).locator('li').filter({ hasText: cal.email }).getByText('viewer', { exact: true }).waitFor()
    await people(ownerPage.page).locator('li').filter({ hasText: cal.email }).getByRole('button', { name: 'Remove' }).click()
    await expect.poll(() => people(ownerPage.page).getByText(cal.email).count(), { timeout: 30_000 }).toBe(0)
    await calPage.page.goto(`/#/albums/${album.albumId}`)
    await calPage.page.getByRole('heading', { name: 'This album does not open' }).waitFor()
    for (const device of [ownerPage, beaPage, calPage]) await device.context.close()
  })

  it('a member the owner never added, listed by the server: the album page says the server changed its membership', async () => {
    const { album } = await seedAlbum(owner.library, 'Garden', 1, 1)
    const ownerPage = await openDevice(browser, server.url)
    await openAs(ownerPage.page, server, owner, `/#/albums/${album.albumId}`)
    await invite(ownerPage.page, bea.email, 'viewer')
    await ownerPage.context.close()
    const beaPage = await openDevice(browser, server.url, { phone: true })
    await accept(beaPage, bea, owner.email)
    await expect.poll(() => historyState(beaPage.page), { timeout: 20_000 }).toBe('trusted')

    const intruder = await registered(server, 'web-intruder')
    const { user_id: intruderId } = await intruder.client.getProfile()
    await writeRows(
      server.database,
      "INSERT INTO album_members (album_id, user_id, role, state, invited_by, invitation, created_at, accepted_at) VALUES (?, ?, 'viewer', 'active', ?, ?, 1, 2)",
      [album.albumId, intruderId, owner.userId, Buffer.from([1])],
    )
    const alert = beaPage.page.getByRole('alert').filter({ hasText: "The server changed this album's history" })
    // The People list reads the server's listing; the album's check holds it to the owner's record.
    await beaPage.page.reload()
    await alert.waitFor({ timeout: 20_000 })
    expect(await alert.getAttribute('data-kind')).toBe('membership')
    expect(await alert.textContent()).toContain(`the server lists ${intruder.email} as a member the owner did not add (or removed)`)
    await checkScreen(beaPage, 'sharing-membership-tampered')
    await beaPage.context.close()
  })
  it('share everything: every album shared with a partner, a new one too; the partner accepts them all at once', async () => {
    const ownerPage = await openDevice(browser, server.url)
    await openAs(ownerPage.page, server, owner, '/#/albums')
    const everything = ownerPage.page.locator('details.share-everything')
    await everything.locator('summary').click()
    await ownerPage.page.getByLabel('Share every album with').fill(cal.email)
    await everything.getByRole('button', { name: 'Share everything' }).click()
    const owned = (await owner.client.listAlbums()).albums.length
    // The album whose members the server changed (the test before) is left alone, and said so; the others are shared.
    expect(owned).toBe(2) // Beach house, and Garden, whose members the server changed
    const said = `You share every album with ${cal.email} now. 1 invitation sent. 1 album was not shared`
    await everything.getByRole('status').filter({ hasText: said }).waitFor({ timeout: 30_000 })
    await checkScreen(ownerPage, 'sharing-everything')
    await ownerPage.page.getByLabel('New album').fill('Picnic')
    await ownerPage.page.getByRole('button', { name: 'Create album' }).click()
    await ownerPage.page.getByRole('heading', { name: 'Picnic' }).waitFor()
    await ownerPage.context.close()

    const calPage = await openDevice(browser, server.url, { phone: true })
    await openAs(calPage.page, server, cal, '/#/albums')
    await calPage.page.locator('details.share-everything summary').click()
    await calPage.page.getByText(`${owner.email} shares every album with you.`).waitFor()
    const acceptAll = calPage.page.getByRole('button', { name: `Accept all ${owned} from people who share everything with you` })
    await acceptAll.click()
    await calPage.page.getByRole('heading', { name: 'Shared with you' }).waitFor({ timeout: 30_000 })
    await calPage.page.locator('.album-card').filter({ hasText: 'Picnic' }).waitFor()
    expect(await calPage.page.locator('section.invitations').count()).toBe(0)
    // A browser that never opened Beach house: its three photos are new; Picnic has none.
    const beachCard = calPage.page.locator('.album-card').filter({ hasText: 'Beach house' })
    expect(await beachCard.locator('.badge').textContent()).toBe('3 new')
    expect(await calPage.page.locator('.album-card').filter({ hasText: 'Picnic' }).locator('.badge').count()).toBe(0)
    await checkScreen(calPage, 'sharing-everything-accepted')
    // Opened once, nothing is new; then the photo the owner adds is.
    await beachCard.click()
    await expect.poll(() => historyState(calPage.page), { timeout: 20_000 }).toBe('trusted')
    await calPage.page.goto('/#/albums')
    await calPage.page.getByRole('heading', { name: 'Shared with you' }).waitFor()
    await calPage.page.locator('.album-card').filter({ hasText: 'Picnic' }).waitFor()
    expect(await beachCard.locator('.badge').count()).toBe(0)
    const beach = (await findAlbum(owner.library, 'Beach house'))!
    const later = path.join(work, 'later.jpg')
    await writePhoto(later, { format: 'jpeg', width: 40, height: 30, seed: 33 })
    const bytes = new Uint8Array(await readFile(later))
    await backupFile(
      { ...owner.library, albumId: beach.albumId, protocolVersion: beach.protocolVersion },
      memorySource(bytes, { name: 'later.jpg', type: 'image/jpeg', modified: null }),
    )
    await calPage.page.reload()
    await beachCard.locator('.badge').waitFor()
    expect(await beachCard.locator('.badge').textContent()).toBe('1 new')
    await calPage.context.close()
  })
})
