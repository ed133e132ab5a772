// The operator page (/admin) in Chromium against real servers: a wrong token refused, the right
// one opens it; an account found by email (any case) and by id, with its usage and second
// factor; suspend (confirmed, with a reason) and reinstate; take down (Escape cancels the
// confirmation), hold and release an asset of it, the record shown again after each action and
// the server's record agreeing; reset a second factor (offered only while one is on, confirmed
// with the reason asked in the confirmation); refusals as sentences; locking forgets the token;
// and on a server without ADMIN_TOKEN the page says the operator API is disabled. Each screen
// passes axe and breaks no CSP rule.
import { randomBytes, randomUUID } from 'node:crypto'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CofferAdmin } from '../../src/sdk/admin.ts'
import { PASSWORD, withSecondFactor } from '../support/actors.ts'
import { checkScreen, launchChromium, openDevice } from '../support/browser.ts'
import { member, upload } from '../support/cli.ts'
import { startServer, type TestServer } from '../support/server.ts'
import { webAccount } from '../support/web-account.ts'
import { seedAlbum } from '../support/gallery.ts'
import { createLink, openPublicLink } from '../../src/client/links.ts'
import { contactsFile } from '../../src/client/node/contacts.ts'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'

const ADMIN_TOKEN = randomBytes(32).toString('base64url')

let server: TestServer
let browser: Browser

beforeAll(async () => {
  ;[server, browser] = await Promise.all([startServer({ ADMIN_TOKEN }), launchChromium()])
}, 60_000)
afterAll(async () => {
  await browser?.close()
  await server?.close()
})

async function open(page: Page, token: string): Promise<void> {
  await page.getByLabel('Operator token').fill(token)
  await page.getByRole('button', { name: 'Open' }).click()
}

async function lookUp(page: Page, query: string): Promise<void> {
  await page.getByLabel('Account id or email').fill(query)
  await page.getByRole('button', { name: 'Look up' }).click()
}

describe('the operator page', () => {
  it('refuses a wrong token, finds an account by email, suspends and reinstates it, and acts on its asset', async () => {
    const alice = await member(server.url)
    const { result: asset, blobs } = await upload(alice)
    const original = [...blobs.keys()][0]!
    const device = await openDevice(browser, server.url)
    const { page } = device
    await page.goto('/admin')
    await expect.poll(() => page.getByLabel('Operator token').isVisible()).toBe(true)
    await checkScreen(device, 'admin-token')
    await open(page, `${ADMIN_TOKEN}x`)
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('not this server’s operator token')
    await open(page, ADMIN_TOKEN)
    await expect.poll(() => page.getByRole('heading', { name: 'Find an account' }).isVisible()).toBe(true)

    await lookUp(page, `  ${alice.email.toUpperCase()}`)
    const card = page.getByRole('region', { name: alice.email })
    await expect.poll(() => card.isVisible()).toBe(true)
    const facts = await card.locator('.facts').textContent()
    for (const fact of [alice.userId, 'Active', 'in 1 asset (photos, videos and album records)', 'Second factorOff']) expect(facts).toContain(fact)
    expect(await card.textContent()).toContain('No moderation events')
    expect(await card.getByRole('button', { name: 'Reset second factor' }).count()).toBe(0)
    await checkScreen(device, 'admin-account')

    // Suspend, with a reason, after confirming.
    await card.getByLabel(/^Reason/).fill('spam reports')
    await card.getByRole('button', { name: 'Suspend account' }).click()
    const confirm = page.getByRole('dialog', { name: `Suspend ${alice.email}?` })
    await expect.poll(() => confirm.isVisible()).toBe(true)
    expect(await confirm.textContent()).toContain('Reason recorded: “spam reports”')
    await checkScreen(device, 'admin-confirm')
    await confirm.getByRole('button', { name: 'Suspend', exact: true }).click()
    await expect.poll(() => card.getByRole('status').textContent()).toBe('Account suspended.')
    expect(await card.locator('.facts').textContent()).toContain('Suspended since')
    expect(await card.locator('.record li').allTextContents()).toEqual([expect.stringMatching(/: Account suspended\. Reason: “spam reports”$/)])
    expect(await alice.client.moderationRecord()).toMatchObject({ standing: 'suspended', events: [{ action: 'suspended', reason: 'spam reports' }] })

    // Reinstate: no confirmation, no reason.
    await card.getByRole('button', { name: 'Reinstate account' }).click()
    await expect.poll(() => card.getByRole('status').textContent()).toBe('Account reinstated.')
    expect(await card.locator('.facts').textContent()).toContain('Active')
    expect((await card.locator('.record li').allTextContents())[1]).toMatch(/: Account reinstated\. No reason given\.$/)
    expect((await alice.client.moderationRecord()).standing).toBe('active')

    // Take down its asset: Escape cancels the confirmation and nothing happens; then confirmed.
    const assets = page.getByRole('region', { name: 'Act on an asset' })
    await assets.getByLabel('Asset id').fill(asset.asset_id)
    await assets.getByLabel(/^Reason/).fill('court order')
    await assets.getByRole('button', { name: 'Take down' }).click()
    await expect.poll(() => page.getByRole('dialog').isVisible()).toBe(true)
    await page.keyboard.press('Escape')
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0)
    expect((await alice.client.moderationRecord()).events).toHaveLength(2)
    await assets.getByRole('button', { name: 'Take down' }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Take down' }).click()
    await expect.poll(() => assets.getByRole('status').textContent()).toBe('Asset taken down: its files are withheld.')
    // The record is the account's on screen: shown in its card.
    expect((await card.locator('.record li').allTextContents())[2]).toMatch(new RegExp(`: Asset ${asset.asset_id} taken down\\. Reason: “court order”$`))
    await expect(alice.client.downloadBlob(original)).rejects.toMatchObject({ status: 451, code: 'error.moderation.taken_down' })

    await assets.getByRole('button', { name: 'Legal hold' }).click()
    await expect.poll(() => assets.getByRole('status').textContent()).toContain('legal hold')
    await assets.getByRole('button', { name: 'Lift hold' }).click()
    await expect.poll(() => assets.getByRole('status').textContent()).toBe('Legal hold lifted.')
    expect(await card.locator('.record li').count()).toBe(5)
    expect((await alice.client.moderationRecord()).events.map((event) => event.action)).toEqual([
      'suspended',
      'reinstated',
      'taken_down',
      'legal_hold',
      'hold_lifted',
    ])

    // Restore undoes the takedown: the files are served again, and the record says so.
    await assets.getByRole('button', { name: 'Restore' }).click()
    await expect.poll(() => assets.getByRole('status').textContent()).toBe('Asset restored: its files are served again.')
    expect((await card.locator('.record li').allTextContents())[5]).toMatch(new RegExp(`: Asset ${asset.asset_id} restored\\. No reason given\\.$`))
    expect((await alice.client.downloadBlob(original)).byteLength).toBeGreaterThan(0)

    // Refusals as sentences: a hold already lifted, an unknown asset, an id that is none.
    await assets.getByRole('button', { name: 'Lift hold' }).click()
    await expect.poll(() => assets.getByRole('alert').textContent()).toContain('That would change nothing')
    await assets.getByLabel('Asset id').fill(randomUUID())
    await assets.getByRole('button', { name: 'Legal hold' }).click()
    await expect.poll(() => assets.getByRole('alert').textContent()).toBe('No asset has this id. Check it and try again.')
    await assets.getByLabel('Asset id').fill('photo-17')
    await assets.getByRole('button', { name: 'Legal hold' }).click()
    await expect.poll(() => assets.getByRole('alert').textContent()).toContain('An asset id is a UUID')
    expect((await alice.client.moderationRecord()).events).toHaveLength(6)
    await checkScreen(device, 'admin-record')
    await device.context.close()
  }, 90_000)

  it('resets a second factor after a confirmation that asks for the reason: the account’s sessions end, the record says so', async () => {
    const carol = await withSecondFactor(server, 'admin-reset')
    const { user_id: userId } = await carol.client.getProfile()
    const admin = new CofferAdmin({ baseUrl: server.url, adminToken: ADMIN_TOKEN })
    const device = await openDevice(browser, server.url)
    const { page } = device
    await page.goto('/admin')
    await open(page, ADMIN_TOKEN)
    await lookUp(page, carol.email)
    const card = page.getByRole('region', { name: carol.email })
    await expect.poll(() => card.locator('.facts').textContent()).toContain('Second factorOn (authenticator app)')

    // Escape cancels the confirmation: nothing is reset.
    await card.getByRole('button', { name: 'Reset second factor' }).click()
    const confirm = page.getByRole('dialog', { name: `Reset the second factor of ${carol.email}?` })
    await expect.poll(() => confirm.isVisible()).toBe(true)
    await page.keyboard.press('Escape')
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0)
    expect((await admin.account(userId)).second_factor.enabled).toBe(true)

    await card.getByRole('button', { name: 'Reset second factor' }).click()
    expect(await confirm.getByLabel('Reason (optional; the owner sees it)').count()).toBe(1)
    await confirm.getByLabel(/^Reason/).fill('lost phone; identity checked by video call')
    await checkScreen(device, 'admin-reset-second-factor')
    await confirm.getByRole('button', { name: 'Reset', exact: true }).click()
    await expect.poll(() => card.getByRole('status').textContent()).toContain('Second factor reset: every session of the account ended')
    expect(await card.locator('.facts').textContent()).toContain('Second factorOff')
    expect(await card.getByRole('button', { name: 'Reset second factor' }).count()).toBe(0)
    expect(await card.locator('.record li').allTextContents()).toEqual([
      expect.stringMatching(/: Second factor reset: every session ended\. Reason: “lost phone; identity checked by video call”$/),
    ])

    // The server agrees: no second factor, the owner's session ended, the password alone signs in, the record says why.
    expect((await admin.account(userId)).second_factor.enabled).toBe(false)
    await expect(carol.client.getProfile()).rejects.toMatchObject({ status: 401 })
    const again = server.client()
    expect((await again.login(carol.email, PASSWORD)).kind).toBe('session')
    expect((await again.moderationRecord()).events).toEqual([
      expect.objectContaining({ action: 'second_factor_reset', reason: 'lost phone; identity checked by video call' }),
    ])
    await device.context.close()
  }, 60_000)

  it('lists an account’s public links without their keys, and disables one: its open page stops, its owner sees why', async () => {
    const owner = await webAccount(server, 'admin-links')
    const sharing = { library: owner.library, contacts: contactsFile(path.join(await mkdtemp(path.join(tmpdir(), 'coffer-admin-links-')), 'pins.sqlite')) }
    const { album } = await seedAlbum(owner.library, 'Reported', 1, 1)
    const { url, link } = await createLink(sharing, album.albumId)
    const opened = await openPublicLink(url)
    const device = await openDevice(browser, server.url)
    const { page } = device
    await page.goto('/admin')
    await open(page, ADMIN_TOKEN)
    await lookUp(page, owner.email)
    const card = page.getByRole('region', { name: owner.email })
    const row = card.locator(`li[data-link="${link.link_id}"]`)
    await expect.poll(() => row.textContent()).toContain('works')
    // The operator sees the link's id, never its secret.
    expect(await card.textContent()).not.toContain(url.split('#')[1])
    await row.getByRole('button', { name: 'Disable' }).click()
    const confirm = page.getByRole('dialog', { name: `Disable the link ${link.link_id}?` })
    await confirm.getByLabel(/^Reason/).fill('reported: not the owner’s photos')
    await checkScreen(device, 'admin-disable-link')
    await confirm.getByRole('button', { name: 'Disable', exact: true }).click()
    await expect.poll(() => row.getAttribute('data-state')).toBe('disabled')
    await expect(opened.client.feed(album.albumId)).rejects.toMatchObject({ status: 410, code: 'error.link.disabled' })
    expect((await owner.client.listLinks()).links).toEqual([
      expect.objectContaining({ link_id: link.link_id, state: 'disabled', disabled_reason: 'reported: not the owner’s photos' }),
    ])
    await device.context.close()
  }, 60_000)

  it('deletes an account after a confirmation that asks for the reason: the card becomes its tombstone, with the record and no action left', async () => {
    const dave = await member(server.url)
    await upload(dave)
    const admin = new CofferAdmin({ baseUrl: server.url, adminToken: ADMIN_TOKEN })
    const device = await openDevice(browser, server.url)
    const { page } = device
    await page.goto('/admin')
    await open(page, ADMIN_TOKEN)
    await lookUp(page, dave.email)
    const card = page.getByRole('region', { name: dave.email })
    await expect.poll(() => card.isVisible()).toBe(true)

    await card.getByRole('button', { name: 'Delete account' }).click()
    const confirm = page.getByRole('dialog', { name: `Delete the account ${dave.email}?` })
    await expect.poll(() => confirm.isVisible()).toBe(true)
    await page.keyboard.press('Escape')
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0)
    expect((await admin.account(dave.userId)).state).toBe('active')

    await card.getByRole('button', { name: 'Delete account' }).click()
    // Nobody is left to read it: the label says where the reason goes.
    expect(await confirm.getByLabel("Reason (optional; kept in the account's record)").count()).toBe(1)
    await confirm.getByLabel(/^Reason/).fill('asked to leave by email')
    await checkScreen(device, 'admin-delete-account')
    await confirm.getByRole('button', { name: 'Delete for good' }).click()
    const tombstone = page.getByRole('region', { name: 'Deleted account' })
    await expect.poll(() => tombstone.isVisible()).toBe(true)
    const facts = await tombstone.locator('.facts').textContent()
    for (const fact of [dave.userId, 'Deleted', 'in 0 assets']) expect(facts).toContain(fact)
    expect(await tombstone.locator('.record li').allTextContents()).toEqual([expect.stringMatching(/: Account deleted: .*Reason: “asked to leave by email”$/)])
    expect(await tombstone.getByRole('button').count()).toBe(0)

    // The server agrees: the tombstone, the owner signed out, the email free.
    expect((await admin.account(dave.userId)).state).toBe('deleted')
    await expect(dave.client.getProfile()).rejects.toMatchObject({ status: 401 })
    expect(await admin.findAccounts(dave.email)).toEqual([])
    expect(device.problems).toEqual([])
    await device.context.close()
  }, 60_000)

  it('at phone width: finds an account by id with its second factor on, says when none matches, and locks', async () => {
    const bob = await withSecondFactor(server, 'admin-phone')
    const { user_id: userId } = await bob.client.getProfile()
    const device = await openDevice(browser, server.url, { phone: true })
    const { page } = device
    await page.goto('/admin')
    await open(page, ADMIN_TOKEN)
    await lookUp(page, `nobody-${randomUUID()}@example.test`)
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('No account has the email')
    await lookUp(page, randomUUID())
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('No account has this id. Check it and try again.')
    await lookUp(page, userId.toUpperCase())
    const card = page.getByRole('region', { name: bob.email })
    await expect.poll(() => card.isVisible()).toBe(true)
    expect(await card.locator('.facts').textContent()).toContain('On (authenticator app), 10 recovery codes left')
    await checkScreen(device, 'admin-phone')

    await page.getByRole('button', { name: 'Lock' }).click()
    await expect.poll(() => page.getByRole('status').textContent()).toContain('the token is forgotten')
    expect(await page.getByLabel('Operator token').inputValue()).toBe('')
    await device.context.close()
  })

  it('says the operator API is disabled, and how to enable it, on a server without ADMIN_TOKEN', async () => {
    const plain = await startServer()
    try {
      const device = await openDevice(browser, plain.url)
      const { page } = device
      await page.goto('/admin')
      await expect.poll(() => page.getByRole('heading', { name: 'The operator API is disabled' }).isVisible()).toBe(true)
      expect(await page.locator('main').textContent()).toContain('ADMIN_TOKEN=')
      expect(await page.getByLabel('Operator token').count()).toBe(0)
      await checkScreen(device, 'admin-disabled')
      await device.context.close()
    } finally {
      await plain.close()
    }
  })
})
