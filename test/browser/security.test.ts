// The security screens in Chromium against a real server: sessions and devices (revoke one from
// another browser and watch it sign out; revoke all), TOTP set up through the QR screen and used
// to sign in, its recovery codes (shown once, used to sign in, made anew behind the password),
// password change, security events, forgetting the browser, deleting the account, and the
// moderation record with the suspension banner after an operator action, and a photo taken down
// named by what this browser kept of it (its photo index). Each screen passes axe.
import { randomUUID } from 'node:crypto'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Secret, TOTP } from 'otpauth'
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { openAlbum } from '../../src/client/albums.ts'
import { describeMedia } from '../../src/client/node/media.ts'
import { backupFile } from '../../src/client/upload.ts'
import { CofferAdmin } from '../../src/sdk/admin.ts'
import { IdentityKey } from '../../src/sdk/identity.ts'
import { authenticatorFor, PASSWORD, problemOf, THIRTY_SECONDS, wrongCode, type Authenticator } from '../support/actors.ts'
import { checkScreen, openDevice, serverAndBrowser, signOut } from '../support/browser.ts'
import { decryptedThumbnails, picker, type Img } from '../support/gallery.ts'
import { writePhoto } from '../support/photos.ts'
import { BROWSER_DEVICE, OTHER_DEVICE, openAs, storedNames, webAccount } from '../support/web-account.ts'

const ADMIN_TOKEN = 'admin-token-for-the-security-screens-test'
/** A 1×1 PNG: a photo to add. */
const PNG_1PX = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='

const running = serverAndBrowser({ ADMIN_TOKEN })
const admin = () => new CofferAdmin({ baseUrl: running.server.url, adminToken: ADMIN_TOKEN })

const signInHeading = (page: Page) => page.getByRole('heading', { name: 'Sign in to Coffer Photos' })

async function signInThroughPage(page: Page, email: string, password = PASSWORD): Promise<void> {
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
}

/**
 * The records of the page's photo index (web/src/lib/photo-index.ts: its directory and one per
 * photo), all sealed; 0 when it has none. Never makes the database: the app makes it, with its store.
 */
function photoIndexRecords(page: Page): Promise<number> {
  return page.evaluate(
    () =>
      new Promise<number>((resolve, reject) => {
        type Request<T> = { result: T; error: unknown; transaction: { abort(): void }; onsuccess: (() => void) | null; onerror: (() => void) | null }
        type Database = { transaction(store: string): { objectStore(name: string): { count(): Request<number> } }; close(): void }
        const open = (
          globalThis as unknown as { indexedDB: { open(name: string): Request<Database> & { onupgradeneeded: (() => void) | null } } }
        ).indexedDB.open('coffer-photo-index')
        open.onupgradeneeded = () => open.transaction.abort() // not made yet: left to the app
        open.onerror = () => resolve(0)
        open.onsuccess = () => {
          const count = open.result.transaction('photos').objectStore('photos').count()
          count.onsuccess = () => {
            open.result.close()
            resolve(count.result)
          }
          count.onerror = () => reject(count.error)
        }
      }),
  )
}

/** The sessions list's entry for a session of another browser (Chrome, not this one). */
const otherBrowserSession = (page: Page) => page.getByRole('listitem').filter({ hasText: 'Chrome' }).filter({ hasNotText: 'This device' })

describe('the security screen', () => {
  it('lists sessions and the verified devices, signs out another browser, and signs out every device with the identity proof', async () => {
    const { server, browser } = running
    const account = await webAccount(server, 'web-sessions')
    // ?poll=1: each page asks the server every second, so a revocation shows at once.
    const first = await openDevice(browser, server.url)
    await openAs(first.page, server, account, '/?poll=1#/security')
    const second = await openDevice(browser, server.url, { phone: true })
    await second.page.goto('/?poll=1')
    await signInThroughPage(second.page, account.email)
    await expect.poll(() => second.page.locator('header.bar').isVisible()).toBe(true)

    const { page } = first
    await page.reload()
    await expect.poll(() => page.getByRole('heading', { name: 'Security', level: 1 }).isVisible()).toBe(true)
    await expect.poll(() => page.getByText('Verified in this browser').isVisible()).toBe(true)
    const devices = page.getByRole('region', { name: 'Your devices' })
    await expect
      .poll(() => devices.getByRole('listitem').allTextContents())
      .toEqual([expect.stringContaining(BROWSER_DEVICE), expect.stringContaining(OTHER_DEVICE)])
    expect(await devices.getByRole('listitem').first().textContent()).toContain('This device')
    const fingerprint = IdentityKey.fromSeeds(account.keys.identitySeeds).fingerprint.match(/.{4}/g)!.join(' ')
    expect(await devices.locator('code').textContent()).toBe(fingerprint)
    // This browser (its device named from this browser's keys: the page signs in without a device
    // id), the registering Node session, and the second browser: both browsers Chrome on Linux,
    // told apart by the device and the sign-in time.
    const sessions = page.getByRole('region', { name: 'Where you are signed in' })
    await expect.poll(() => sessions.getByRole('listitem').count()).toBe(3)
    const current = sessions.getByRole('listitem').filter({ hasText: 'This device' })
    expect(await current.getByRole('button').count()).toBe(0)
    expect(await current.locator('.title').textContent()).toMatch(new RegExp(`^${BROWSER_DEVICE} \\(Chrome on Linux\\), signed in .+This device$`))
    const titles = await sessions.locator('.title').allTextContents()
    expect(new Set(titles).size).toBe(3)
    expect(titles.filter((title) => /^Chrome on Linux, signed in /.test(title))).toHaveLength(1)
    await checkScreen(first, 'security')

    await otherBrowserSession(page).getByRole('button', { name: 'Sign out this session' }).click()
    await expect.poll(() => page.getByRole('dialog', { name: 'Sign out this session?' }).isVisible()).toBe(true)
    await checkScreen(first, 'security-revoke')
    await page.keyboard.press('Escape')
    await expect.poll(() => page.getByRole('dialog').isVisible()).toBe(false)
    expect(await sessions.getByRole('listitem').count()).toBe(3)
    await otherBrowserSession(page).getByRole('button', { name: 'Sign out this session' }).click()
    await page.getByRole('button', { name: 'Sign it out' }).click()
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'is signed out' }).isVisible()).toBe(true)
    await expect.poll(() => sessions.getByRole('listitem').count()).toBe(2)

    // The second browser notices by itself (its next look at the server).
    await expect.poll(() => signInHeading(second.page).isVisible()).toBe(true)
    expect(await second.page.getByRole('status').textContent()).toContain('this session was ended')

    await signInThroughPage(second.page, account.email)
    await expect.poll(() => second.page.locator('header.bar').isVisible()).toBe(true)
    await page.getByRole('button', { name: 'Sign out every device' }).click()
    await page.getByRole('button', { name: 'Sign out everywhere' }).click()
    await expect.poll(() => signInHeading(page).isVisible()).toBe(true)
    expect(await page.getByRole('status').textContent()).toContain('Every session of your account was signed out, this one too')
    await expect.poll(() => signInHeading(second.page).isVisible()).toBe(true)
    expect((await problemOf(account.client.listSessions())).status).toBe(401)

    expect(first.problems).toEqual([])
    expect(second.problems).toEqual([])
    await first.context.close()
    await second.context.close()
  }, 90_000)

  it('sets up TOTP from the QR screen, signs in with a code, and turns it off', async () => {
    const { server, browser } = running
    const account = await webAccount(server, 'web-totp-setup')
    const device = await openDevice(browser, server.url, { phone: true })
    const { page } = device
    await openAs(page, server, account, '/#/security')
    await page.getByRole('button', { name: 'Set up an authenticator app' }).click()
    const qr = page.getByRole('img', { name: 'QR code to scan with your authenticator app' })
    await expect.poll(() => qr.isVisible()).toBe(true)
    expect((await qr.locator('path').getAttribute('d'))!.length).toBeGreaterThan(1000)
    await qr.scrollIntoViewIfNeeded()
    await checkScreen(device, 'security-totp')

    const secret = (await page.locator('code.secret').textContent())!.replace(/\s/g, '')
    const totp = new TOTP({ secret: Secret.fromBase32(secret) })
    const app: Authenticator = { secret: totp.secret, codeAt: (ms) => totp.generate({ timestamp: ms }) }
    await page.getByLabel('Code from the app', { exact: true }).fill(app.codeAt(server.clock.now()))
    await page.getByRole('button', { name: 'Turn on' }).click()
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Your authenticator app is set up' }).isVisible()).toBe(true)

    await signOut(page)
    await signInThroughPage(page, account.email)
    await expect.poll(() => page.getByRole('heading', { name: 'Enter your code' }).isVisible()).toBe(true)
    server.clock.advance(THIRTY_SECONDS) // the confirming code is spent
    await page.getByLabel('Code').fill(app.codeAt(server.clock.now()))
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect.poll(() => page.getByRole('heading', { name: 'Security', level: 1 }).isVisible()).toBe(true)

    await page.getByLabel('Current code from the app').fill(wrongCode(app, server.clock.now()))
    await page.getByRole('button', { name: 'Turn off' }).click()
    await expect.poll(() => page.getByRole('alert').filter({ hasText: 'That code is not right' }).isVisible()).toBe(true)
    server.clock.advance(THIRTY_SECONDS)
    await page.getByLabel('Current code from the app').fill(app.codeAt(server.clock.now()))
    await page.getByRole('button', { name: 'Turn off' }).click()
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'turned off' }).isVisible()).toBe(true)
    expect((await server.client().login(account.email, PASSWORD)).kind).toBe('session')
    expect(device.problems).toEqual([])
    await device.context.close()
  }, 60_000)

  it('shows ten recovery codes once TOTP is on, signs in with one after signing out, counts what is left, and makes new ones behind the password', async () => {
    const { server, browser } = running
    const account = await webAccount(server, 'web-recovery-codes')
    const device = await openDevice(browser, server.url)
    const { page } = device
    await openAs(page, server, account, '/#/security')
    await expect.poll(() => page.getByText('Off: signing in needs only your password.').isVisible()).toBe(true)
    expect(await page.getByRole('button', { name: 'Turn off' }).count()).toBe(0)
    await page.getByRole('button', { name: 'Set up an authenticator app' }).click()
    const secret = (await page.locator('code.secret').textContent())!.replace(/\s/g, '')
    const totp = new TOTP({ secret: Secret.fromBase32(secret) })
    await page.getByLabel('Code from the app', { exact: true }).fill(totp.generate({ timestamp: server.clock.now() }))
    await page.getByRole('button', { name: 'Turn on' }).click()

    const shownCodes = page.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem')
    await expect.poll(() => shownCodes.count()).toBe(10)
    const codes = await shownCodes.allTextContents()
    for (const code of codes) expect(code).toMatch(/^[0-9a-hjkmnp-tv-z]{5}-[0-9a-hjkmnp-tv-z]{5}$/)
    expect(await page.getByRole('heading', { name: 'Save your recovery codes' }).isVisible()).toBe(true)
    expect(await page.getByText('They are not shown again.', { exact: false }).isVisible()).toBe(true)
    await expect.poll(() => page.getByText('10 recovery codes are left.').isVisible()).toBe(true)
    await checkScreen(device, 'security-recovery-codes')
    await page.getByRole('button', { name: 'I have saved them' }).click()
    expect(await shownCodes.count()).toBe(0)
    expect(await page.getByRole('button', { name: 'Set up an authenticator app' }).count()).toBe(0)

    // The phone is lost: signed out, one of the codes signs in instead.
    await signOut(page)
    await signInThroughPage(page, account.email)
    await expect.poll(() => page.getByRole('heading', { name: 'Enter your code' }).isVisible()).toBe(true)
    await page.getByRole('button', { name: 'Lost your phone? Use a recovery code' }).click()
    await page.getByLabel('Recovery code').fill(` ${codes[0]!.toUpperCase()} `)
    await checkScreen(device, 'sign-in-recovery-code')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect.poll(() => page.getByRole('heading', { name: 'Security', level: 1 }).isVisible()).toBe(true)
    await expect.poll(() => page.getByText('9 recovery codes are left.').isVisible()).toBe(true)
    const events = page.getByRole('region', { name: 'Recent security events' })
    await expect
      .poll(() => events.getByRole('listitem').allTextContents())
      .toEqual([expect.stringContaining('A recovery code was used in place of a code from the authenticator app')])

    // New codes: the sign-in is made older than 10 minutes, so the password is asked for first.
    server.clock.advance(11 * 60_000)
    await page.getByLabel('Code from the app, or a recovery code', { exact: true }).fill(codes[1]!)
    await page.getByRole('button', { name: 'Make new recovery codes' }).click()
    const dialog = page.getByRole('dialog', { name: 'Confirm your password' })
    await expect.poll(() => dialog.isVisible()).toBe(true)
    await dialog.getByLabel('Password').fill(PASSWORD)
    await dialog.getByRole('button', { name: 'Confirm' }).click()
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'New recovery codes are made' }).isVisible()).toBe(true)
    await expect.poll(() => shownCodes.count()).toBe(10)
    const renewed = await shownCodes.allTextContents()
    expect(renewed.filter((code) => codes.includes(code))).toEqual([])
    await expect.poll(() => page.getByText('10 recovery codes are left.').isVisible()).toBe(true)
    // An old code no longer signs in; a new one does.
    const login = await server.client().login(account.email, PASSWORD)
    if (login.kind !== 'second_factor') throw new Error('expected a second-factor challenge')
    expect((await problemOf(server.client().verifyLogin(login.challenge.mfa_token, codes[2]!))).code).toBe('error.auth.invalid_code')
    const again = await server.client().login(account.email, PASSWORD)
    if (again.kind !== 'second_factor') throw new Error('expected a second-factor challenge')
    expect((await server.client().verifyLogin(again.challenge.mfa_token, renewed[0]!)).token_type).toBe('Bearer')
    expect(device.problems).toEqual([])
    await device.context.close()
  }, 60_000)

  it('shows security events, changes the password (a wrong current one refused), and forgets the browser', async () => {
    const { server, browser } = running
    const account = await webAccount(server, 'web-password')
    // Ten wrong passwords lock sign-in: a security event. The lock is waited out on the server's clock.
    for (let i = 0; i < 10; i++) await problemOf(server.client().login(account.email, 'not the password'))
    server.clock.advance(16 * 60_000)
    const device = await openDevice(browser, server.url)
    const { page } = device
    await openAs(page, server, account, '/#/security')
    const events = page.getByRole('region', { name: 'Recent security events' })
    await expect
      .poll(() => events.getByRole('listitem').allTextContents())
      .toEqual([expect.stringContaining('Signing in was locked after too many wrong passwords')])

    const newPassword = `new password ${randomUUID().slice(0, 8)}`
    await page.getByLabel('Current password').fill('this is not it at all')
    await page.getByLabel('New password', { exact: true }).fill(newPassword)
    await page.getByLabel('New password again').fill(newPassword)
    await page.getByRole('button', { name: 'Change password' }).click()
    await expect.poll(() => page.getByRole('alert').filter({ hasText: 'The current password is not right, so nothing changed' }).isVisible()).toBe(true)
    await page.getByRole('region', { name: 'Password' }).scrollIntoViewIfNeeded()
    await checkScreen(device, 'security-password')
    await page.getByLabel('Current password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Change password' }).click()
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Your password is changed' }).isVisible()).toBe(true)
    expect((await problemOf(server.client().login(account.email, PASSWORD))).code).toBe('error.auth.invalid_credentials')
    expect((await server.client().login(account.email, newPassword)).kind).toBe('session')
    await page.reload()
    await expect.poll(() => page.getByRole('heading', { name: 'Security', level: 1 }).isVisible()).toBe(true)

    await page.getByRole('button', { name: 'Forget this browser' }).click()
    await page.getByRole('button', { name: 'Forget it' }).click()
    await expect.poll(() => signInHeading(page).isVisible()).toBe(true)
    expect(await page.getByRole('status').textContent()).toContain('forgotten the account and its keys')
    await expect.poll(() => storedNames(page)).toEqual([])
    expect(device.problems).toEqual([])
    await device.context.close()
  }, 60_000)

  it('deletes the account: a wrong password and a missing code are refused, then the account is gone and the browser forgets it', async () => {
    const { server, browser } = running
    const account = await webAccount(server, 'web-delete')
    const device = await openDevice(browser, server.url)
    const { page } = device
    await openAs(page, server, account, '/#/security')
    // Turned on from another session after the browser signed in (a sign-in would then need the page).
    const authenticator = authenticatorFor(await account.client.startTotpEnrollment())
    await account.client.confirmTotpEnrollment(authenticator.codeAt(server.clock.now()))
    server.clock.advance(THIRTY_SECONDS)
    const section = page.getByRole('region', { name: 'Delete your account' })
    const forGood = page.getByRole('button', { name: 'Delete for good' })
    const attempt = async (password: string, code: string) => {
      await section.getByLabel('Your password').fill(password)
      await section.getByLabel('Code from your authenticator app').fill(code)
      await section.getByRole('button', { name: 'Delete account' }).click()
    }
    // The server checks the password before "Delete for good?" is asked: a wrong one is said at once, and nothing asked.
    await attempt('this is not it at all', '')
    await expect.poll(() => section.getByRole('alert').textContent()).toContain('The password is not right, so nothing was deleted')
    expect(await forGood.count()).toBe(0)
    // So is a code missing on an account with a second factor.
    await attempt(PASSWORD, '')
    await expect.poll(() => section.getByRole('alert').textContent()).toContain('Your account has a second factor')
    expect(await forGood.count()).toBe(0)
    await section.scrollIntoViewIfNeeded()
    await checkScreen(device, 'security-delete')
    expect((await admin().account(account.userId)).state).toBe('active')

    await attempt(PASSWORD, authenticator.codeAt(server.clock.now()))
    await expect.poll(() => forGood.isVisible()).toBe(true)
    expect((await admin().account(account.userId)).state).toBe('active')
    await forGood.click()
    await expect.poll(() => signInHeading(page).isVisible()).toBe(true)
    expect(await page.getByRole('status').textContent()).toContain('Your account is deleted')
    await expect.poll(() => storedNames(page)).toEqual([])
    expect((await admin().account(account.userId)).state).toBe('deleted')
    expect((await problemOf(server.client().login(account.email, PASSWORD))).code).toBe('error.auth.invalid_credentials')
    expect(device.problems).toEqual([])
    await device.context.close()
  }, 60_000)
})

describe('the moderation record', () => {
  it('shows an operator action in words, and a suspended account has the banner on every screen', async () => {
    const { server, browser } = running
    const account = await webAccount(server, 'web-record')
    const album = await openAlbum(account.library, 'Moderated')
    const photo = new TextEncoder().encode('a photo the operator takes down')
    const { assetId } = await backupFile(
      { ...account.library, albumId: album.albumId },
      { name: 'flagged.jpg', size: photo.length, type: 'image/jpeg', modified: null, open: () => [photo] },
      {
        describe: async () => ({
          captured: null,
          width: 1,
          height: 1,
          derivatives: [{ kind: 'thumbnail', type: 'image/png', bytes: Buffer.from(PNG_1PX, 'base64') }],
        }),
      },
    )
    const operator = admin()

    const device = await openDevice(browser, server.url, { phone: true })
    const { page } = device
    await openAs(page, server, account, '/?poll=1#/record')
    await expect.poll(() => page.getByText('Nothing: the operator has taken no action').isVisible()).toBe(true)
    expect(await page.getByText('Active.').isVisible()).toBe(true)
    await checkScreen(device, 'record')

    await operator.takeDown(assetId, 'A copyright claim')
    await operator.suspend(account.userId, 'Reports of spam')
    const banner = page.getByRole('status').filter({ hasText: 'Your account is suspended' })
    await expect.poll(() => banner.isVisible()).toBe(true)
    const events = page.getByRole('region', { name: 'What the operator did' }).getByRole('listitem')
    // Taken down, the photo is found in its album, but none of its files is handed out, its name and thumbnail neither.
    await expect
      .poll(() => events.allTextContents())
      .toEqual([
        expect.stringMatching(/The operator suspended your account\..*Reason: Reports of spam/),
        expect.stringMatching(
          new RegExp(
            `The operator took down this photo: it can no longer be downloaded or shown\\.A photo in the album “Moderated”\\. Its name and thumbnail cannot be shown.*\\(asset ${assetId}\\).*Reason: A copyright claim`,
          ),
        ),
      ])
    await checkScreen(device, 'record-suspended')

    // At phone width, Security is in the account menu (decision 0057).
    await page.getByRole('button', { name: 'Account', exact: true }).click()
    await page.getByRole('link', { name: 'Security' }).click()
    await expect.poll(() => page.getByRole('heading', { name: 'Security', level: 1 }).isVisible()).toBe(true)
    expect(await banner.isVisible()).toBe(true)
    await banner.getByRole('link', { name: 'See your moderation record' }).click()
    await expect.poll(() => page.getByRole('heading', { name: 'Moderation record' }).isVisible()).toBe(true)

    await operator.reinstate(account.userId)
    await operator.restore(assetId, 'The claim was withdrawn')
    await page.getByRole('button', { name: 'Check again' }).click()
    await expect.poll(() => banner.isVisible()).toBe(false)
    // Polled: the banner may have gone with an answer read between the two actions (the page checks on its own too).
    await expect.poll(() => events.first().textContent()).toContain('The operator restored this photo')
    // Restored, it opens here: every event of it shows its name and thumbnail, decrypted in the page.
    const named = events.filter({ hasText: 'flagged.jpg in the album “Moderated”' })
    await expect.poll(() => named.count()).toBe(2)
    // Polled: each img is drawn once its object URL is made (an effect), and decoded after.
    await expect
      .poll(() => named.locator('img').evaluateAll((images) => images.map((image) => (image as unknown as { naturalWidth: number }).naturalWidth)))
      .toEqual([1, 1])
    expect(await events.allTextContents()).toContainEqual(expect.stringContaining('The operator reinstated your account'))
    await checkScreen(device, 'record-photo')
    expect(device.problems).toEqual([])
    await device.context.close()
  }, 120_000)

  it('refuses an upload of a suspended account in a plain sentence, and turns off Add photos with the reason', async () => {
    const { server, browser } = running
    const account = await webAccount(server, 'web-suspended-upload')
    const album = await openAlbum(account.library, 'Held back')
    const device = await openDevice(browser, server.url)
    const { page } = device
    await openAs(page, server, account, `/#/albums/${encodeURIComponent(album.albumId)}`)
    const add = page.getByRole('button', { name: 'Add photos' })
    await expect.poll(() => page.getByRole('heading', { name: 'Add photos' }).isVisible()).toBe(true)
    expect(await add.isEnabled()).toBe(true)

    // Suspended after the page read the record: the upload is what finds it out.
    await admin().suspend(account.userId, 'Reports of spam')
    await picker(page).setInputFiles({ name: 'beach.png', mimeType: 'image/png', buffer: Buffer.from(PNG_1PX, 'base64') })
    const failed = page.locator('.uploads li[data-state=failed] .error')
    await expect.poll(() => failed.isVisible(), { timeout: 15_000 }).toBe(true)
    const sentence = await failed.textContent()
    expect(sentence).toContain('Your account is suspended, so nothing can be added')
    expect(sentence).not.toMatch(/403|error\./)
    await expect.poll(() => add.isDisabled()).toBe(true)
    const reason = page.locator('#adding-paused')
    expect(await add.getAttribute('aria-describedby')).toBe('adding-paused')
    expect(await reason.textContent()).toContain('You cannot add photos while your account is suspended')
    expect(await reason.getByRole('link', { name: 'Your moderation record' }).getAttribute('href')).toBe('#/record')
    expect(await page.getByRole('button', { name: 'Try the failed files again' }).isDisabled()).toBe(true)
    await checkScreen(device, 'album-suspended')
    await device.context.close()
  }, 60_000)

  it('names a photo taken down by the name and thumbnail this browser kept when it showed it, until a sign-out drops them', async () => {
    const { server, browser } = running
    const account = await webAccount(server, 'web-record-kept')
    const album = await openAlbum(account.library, 'Harbour')
    const folder = await mkdtemp(path.join(tmpdir(), 'coffer-record-kept-'))
    const file = path.join(folder, 'harbour-at-dusk.jpg')
    await writePhoto(file, { format: 'jpeg', width: 1200, height: 800, seed: 5301 })
    const bytes = new Uint8Array(await readFile(file))
    const { assetId } = await backupFile(
      { ...account.library, albumId: album.albumId, protocolVersion: album.protocolVersion },
      { name: 'harbour-at-dusk.jpg', size: bytes.length, type: 'image/jpeg', modified: null, open: () => [bytes] },
      { describe: () => describeMedia(bytes, 'image/jpeg') },
    )

    // Shown in the gallery: the page keeps its name and thumbnail in the photo index, sealed, a moment later.
    const device = await openDevice(browser, server.url)
    const { page } = device
    await openAs(page, server, account, `/#/albums/${encodeURIComponent(album.albumId)}`)
    await expect.poll(() => decryptedThumbnails(page)).toEqual(['harbour-at-dusk.jpg'])
    await expect.poll(() => photoIndexRecords(page)).toBe(2) // the directory and the photo's record

    // Taken down, none of its files is handed out; the record, read after a reload (from IndexedDB,
    // not the page's memory), names it from what this browser kept.
    await admin().takeDown(assetId, 'A copyright claim')
    await page.goto('/#/record')
    await page.reload()
    const event = page.getByRole('region', { name: 'What the operator did' }).getByRole('listitem')
    await expect.poll(() => event.textContent()).toMatch(/The operator took down this photo/)
    await expect
      .poll(() => event.textContent())
      .toMatch(
        new RegExp(
          `harbour-at-dusk\\.jpg in the album “Harbour” \\(asset ${assetId}\\)Taken down: its files are withheld; shown from what this browser kept\\..*Reason: A copyright claim`,
        ),
      )
    const thumbnail = event.locator('img.record-thumbnail')
    await expect
      .poll(() => thumbnail.evaluate((img) => ({ blob: (img as unknown as Img).src.startsWith('blob:'), width: (img as unknown as Img).naturalWidth })))
      .toEqual({ blob: true, width: 512 })
    await checkScreen(device, 'record-kept', { phone: false })
    await page.setViewportSize({ width: 390, height: 800 })
    await event.scrollIntoViewIfNeeded()
    await checkScreen(device, 'record-kept-phone')

    // Signing out drops the index; signed in again, the photo is known by its album only.
    await signOut(page)
    await expect.poll(() => signInHeading(page).isVisible()).toBe(true)
    expect(await photoIndexRecords(page)).toBe(0)
    await signInThroughPage(page, account.email)
    await expect.poll(() => page.getByRole('heading', { name: 'Moderation record' }).isVisible()).toBe(true)
    await expect
      .poll(() => event.textContent())
      .toMatch(new RegExp(`A photo in the album “Harbour”\\. Its name and thumbnail cannot be shown.*\\(asset ${assetId}\\)`))
    expect(await event.textContent()).not.toContain('harbour-at-dusk')
    expect(await event.locator('img').count()).toBe(0)
    expect(device.problems).toEqual([])
    await device.context.close()
    await rm(folder, { recursive: true })
  }, 60_000)
})
