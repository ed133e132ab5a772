// The device screens in Chromium against a real server: a browser set up as the account's first
// device (kept as pending, resumed after a reload with the same identity key, the recovery phrase
// shown and checked, the freshness gate answered in the password dialog), a second browser added
// with a pairing code from the first (the same 6-digit code on both) that then shows the photos
// the first uploads, a No on the code storing
// nothing on either side, and a third browser recovered with the phrase read from the first's
// page after a wrong phrase changed nothing. The server's directory and escrow are checked from
// Node. Each screen passes axe.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { openRecoveryEscrow } from '../../src/client/account.ts'
import { generateRecoveryKey, recoveryPhrase } from '../../src/client/format/recovery.ts'
import { nativeArgon2id } from '../../src/client/node/crypto.ts'
import type { CofferClient } from '../../src/sdk/client.ts'
import { readDirectory, type DeviceDirectory } from '../../src/sdk/directory.ts'
import { IdentityKey } from '../../src/sdk/identity.ts'
import { PASSWORD, uniqueEmail } from '../support/actors.ts'
import { checkScreen, openDevice, serverAndBrowser, type WatchedPage } from '../support/browser.ts'
import { decryptedThumbnails, picker } from '../support/gallery.ts'
import { writePhoto } from '../support/photos.ts'
import { storedIdentitySeeds, storedKeyBytes, storedNames } from '../support/web-account.ts'

const running = serverAndBrowser()

/** argon2id (64 MiB, 3 passes) in the page's worker, on two shared cores: well above the file's usual 10 s. */
const SLOW = { timeout: 60_000 }

const choiceHeading = (page: Page) => page.getByRole('heading', { name: 'Make this browser one of your devices' })
/** What a browser with device keys shows: the gallery's album list. */
/** The first screen of a device of the account: Photos. */
const deviceHeading = (page: Page) => page.getByRole('heading', { name: 'Photos', exact: true })

/** What the whole file shares: one account, set up by the first browser, joined by the others. */
const account = { email: uniqueEmail('web-devices'), userId: '', identity: null as IdentityKey | null, phrase: '', first: null as WatchedPage | null }

async function signInThroughPage(page: Page): Promise<void> {
  await page.goto('/')
  await page.getByLabel('Email').fill(account.email)
  await page.getByLabel('Password').fill(PASSWORD)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await expect.poll(() => choiceHeading(page).isVisible()).toBe(true)
}

/** The account's directory as the server holds it, read under the account's identity key. */
async function directory(client: CofferClient): Promise<DeviceDirectory> {
  const fetched = await client.fetchDirectory(account.userId)
  return readDirectory(fetched!.bytes, account.identity!.publicKey)
}

async function nodeClient(): Promise<CofferClient> {
  const client = running.server.client()
  await client.login(account.email, PASSWORD)
  return client
}

/** The 24 words as the page shows them. */
const shownPhrase = async (page: Page): Promise<string[]> => page.getByRole('list', { name: 'Recovery phrase' }).locator('.word').allTextContents()

describe('the device screens', () => {
  it('sets up the first device: pending keys resumed after a reload, the password asked, the phrase shown once and checked', async () => {
    const { server, browser } = running
    const first = await openDevice(browser, server.url)
    account.first = first
    const { page } = first
    await page.goto('/')
    await page.getByRole('button', { name: 'Create an account' }).click()
    await page.getByLabel('Email').fill(account.email)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Create account' }).click()
    await expect.poll(() => choiceHeading(page).isVisible()).toBe(true)
    expect(await page.getByRole('link', { name: 'Add this browser with a code from another device' }).count()).toBe(0)
    await checkScreen(first, 'device-choice')

    await page.getByRole('link', { name: 'Set up this browser as your first device' }).click()
    const name = page.getByLabel('Name of this browser')
    await expect.poll(() => name.inputValue()).toMatch(/^Chrom(e|ium) on Linux$/)
    await name.fill('Test Chromium')
    // The sign-in is older than the 10-minute window: binding the identity key asks for the password.
    server.clock.advance(11 * 60_000)
    await page.getByRole('button', { name: 'Set up this browser' }).click()
    const dialog = page.getByRole('dialog', { name: 'Confirm your password' })
    await expect.poll(() => dialog.isVisible()).toBe(true)
    await checkScreen(first, 'device-password')
    await dialog.getByLabel('Password').fill('not the password at all')
    await dialog.getByRole('button', { name: 'Confirm' }).click()
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('That is not your password')
    const pending = await storedIdentitySeeds(page, 'pending-keys')
    expect(pending).not.toBeNull() // kept before anything was published
    expect(await storedIdentitySeeds(page, 'keys')).toBeNull()

    await page.getByRole('button', { name: 'Set up this browser' }).click()
    await dialog.getByLabel('Password').fill(PASSWORD)
    await dialog.getByRole('button', { name: 'Confirm' }).click()
    await expect.poll(() => page.getByRole('heading', { name: 'Your recovery phrase' }).isVisible(), SLOW).toBe(true)
    const firstPhrase = await shownPhrase(page)
    expect(firstPhrase).toHaveLength(24)

    // A reload before the phrase is checked: the same keys continue, with a new phrase.
    await page.reload()
    await expect.poll(() => page.getByRole('heading', { name: 'Finish setting up this browser' }).isVisible()).toBe(true)
    expect(await page.getByText('This browser is listed as “Test Chromium”.').isVisible()).toBe(true)
    await page.getByRole('button', { name: 'Continue setting up' }).click()
    await expect.poll(() => page.getByRole('heading', { name: 'Your recovery phrase' }).isVisible(), SLOW).toBe(true)
    const words = await shownPhrase(page)
    expect(words).toHaveLength(24)
    expect(words).not.toEqual(firstPhrase)
    expect(await storedIdentitySeeds(page, 'pending-keys')).toEqual(pending)
    await checkScreen(first, 'device-phrase')

    await page.getByRole('button', { name: 'I have written it down' }).click()
    await expect.poll(() => page.getByRole('heading', { name: 'Check your recovery phrase' }).isVisible()).toBe(true)
    const asked = await page
      .getByLabel(/^Word \d+$/)
      .evaluateAll((inputs) => inputs.map((input) => Number(input.parentElement!.textContent!.replace('Word ', ''))))
    expect(asked).toHaveLength(3)
    for (const [i, position] of asked.entries())
      await page.getByLabel(`Word ${position}`, { exact: true }).fill(i === 0 ? (words[position] === 'zoo' ? 'abandon' : 'zoo') : words[position - 1]!)
    await page.getByRole('button', { name: 'Check and finish' }).click()
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toBe(`Word ${asked[0]} is not what the phrase says. Look at your written copy again, or go back to the phrase.`)
    await checkScreen(first, 'device-phrase-check')
    expect(await storedIdentitySeeds(page, 'keys')).toBeNull()
    await page.getByLabel(`Word ${asked[0]}`, { exact: true }).fill(words[asked[0]! - 1]!.toUpperCase())
    await page.getByRole('button', { name: 'Check and finish' }).click()
    await expect.poll(() => deviceHeading(page).isVisible()).toBe(true)
    expect(await storedNames(page)).not.toContain('pending-keys')
    expect(await storedIdentitySeeds(page, 'keys')).toEqual(pending)
    // Its next load keeps the identity key's public half with the keys (no key generation at each opening).
    expect(await storedKeyBytes(page, 'keys', 'identityPublicKey')).toBeNull()
    await page.reload()
    await expect.poll(() => deviceHeading(page).isVisible()).toBe(true)
    expect(await storedKeyBytes(page, 'keys', 'identityPublicKey')).toEqual(IdentityKey.fromSeeds(pending!).publicKey)

    const client = await nodeClient()
    account.userId = (await client.getProfile()).user_id
    account.identity = IdentityKey.fromSeeds(pending!)
    account.phrase = words.join(' ')
    const listed = await directory(client)
    expect(listed.version).toBe(1)
    expect(listed.devices.map((device) => device.name)).toEqual(['Test Chromium'])
    const escrow = await client.fetchEscrow()
    const opened = await openRecoveryEscrow(escrow, account.userId, account.phrase, nativeArgon2id)
    expect(opened.identitySeeds).toEqual(pending)
    await expect(openRecoveryEscrow(escrow, account.userId, firstPhrase.join(' '), nativeArgon2id)).rejects.toThrow('does not open')
    expect(first.problems).toEqual([])
  }, 180_000)

  it('adds a second browser with a pairing code from the first: the same 6-digit code on both, then both are devices', async () => {
    const { server, browser } = running
    const first = account.first!
    const second = await openDevice(browser, server.url, { phone: true })
    await signInThroughPage(second.page)
    await checkScreen(second, 'device-choice-set-up')

    await first.page.getByRole('link', { name: 'Add a device' }).click()
    // The first browser's password was last proved more than 10 minutes ago: issuing a code asks for it.
    server.clock.advance(11 * 60_000)
    await first.page.getByRole('button', { name: 'Show a pairing code' }).click()
    const dialog = first.page.getByRole('dialog', { name: 'Confirm your password' })
    await dialog.getByLabel('Password').fill(PASSWORD)
    await dialog.getByRole('button', { name: 'Confirm' }).click()
    const code = first.page.getByTestId('pairing-code')
    await expect.poll(() => code.isVisible()).toBe(true)
    expect(await first.page.getByRole('img', { name: 'The pairing code as a QR code' }).isVisible()).toBe(true)
    await checkScreen(first, 'device-add-qr')

    await second.page.getByRole('link', { name: 'Add this browser with a code from another device' }).click()
    await second.page.getByLabel('Pairing code').fill(` ${await code.textContent()} `)
    await second.page.getByLabel('Name of this browser').fill('Phone browser')
    await second.page.getByRole('button', { name: 'Connect' }).click()
    const sasOf = (page: Page) => page.locator('.sas').textContent()
    await expect.poll(() => sasOf(second.page)).toMatch(/^\d{3} \d{3}$/)
    await expect.poll(() => sasOf(first.page)).toBe(await sasOf(second.page))
    expect(await first.page.getByText('“Phone browser” answered').isVisible()).toBe(true)
    await checkScreen(second, 'device-join-sas')
    await second.page.getByRole('button', { name: 'Yes, the same' }).click()
    await first.page.getByRole('button', { name: 'Yes, the same' }).click()
    await expect.poll(() => deviceHeading(second.page).isVisible()).toBe(true)
    await expect.poll(() => first.page.getByRole('status').filter({ hasText: '“Phone browser” is now a device of your account' }).isVisible()).toBe(true)
    expect(await storedIdentitySeeds(second.page, 'keys')).toEqual(await storedIdentitySeeds(first.page, 'keys'))

    const listed = await directory(await nodeClient())
    expect(listed.version).toBe(2)
    expect(listed.devices.map((device) => device.name)).toEqual(['Test Chromium', 'Phone browser'])

    // What the first browser stores, the second shows: the same keys open the same album.
    const folder = await mkdtemp(path.join(tmpdir(), 'coffer-web-devices-'))
    const names = ['Shared 1.jpg', 'Shared 2.jpg']
    const files = await Promise.all(
      names.map(async (name, i) => {
        const file = path.join(folder, name)
        await writePhoto(file, { format: 'jpeg', width: 320, height: 240, seed: 900 + i })
        return file
      }),
    )
    await first.page.goto('/#/albums')
    await first.page.getByLabel('New album').fill('Shared')
    await first.page.getByRole('button', { name: 'Create album' }).click()
    await expect.poll(() => first.page.getByRole('heading', { name: 'Shared' }).isVisible()).toBe(true)
    await picker(first.page).setInputFiles(files)
    await expect.poll(async () => (await decryptedThumbnails(first.page)).length, SLOW).toBe(2)
    await second.page.goto('/#/albums')
    await second.page.reload()
    await second.page.locator('.album-card', { hasText: 'Shared' }).click()
    await expect.poll(async () => (await decryptedThumbnails(second.page)).sort(), SLOW).toEqual(names)
    await rm(folder, { recursive: true, force: true })
    await first.page.goto('/#/devices/add')
    expect([...first.problems, ...second.problems]).toEqual([])
    await second.context.close()
  }, 90_000)

  it('stores nothing on either side when the new browser says the codes differ, then recovers that browser with the phrase after a wrong one changed nothing', async () => {
    const { server, browser } = running
    const first = account.first!
    const third = await openDevice(browser, server.url)
    await signInThroughPage(third.page)

    await first.page.getByRole('button', { name: 'Show a pairing code' }).click()
    const code = first.page.getByTestId('pairing-code')
    await expect.poll(() => code.isVisible()).toBe(true)
    await third.page.getByRole('link', { name: 'Add this browser with a code from another device' }).click()
    await third.page.getByLabel('Pairing code').fill((await code.textContent())!)
    await third.page.getByRole('button', { name: 'Connect' }).click()
    await expect.poll(() => third.page.getByRole('button', { name: 'No, it is different' }).isVisible()).toBe(true)
    await third.page.getByRole('button', { name: 'No, it is different' }).click()
    await expect.poll(() => third.page.getByRole('alert').textContent()).toContain('You said the codes are not the same, so nothing was added.')
    await first.page.getByRole('button', { name: 'Yes, the same' }).click()
    await expect.poll(() => first.page.getByRole('alert').textContent()).toContain('The other device cancelled (the person there said the codes do not match)')
    expect(await storedNames(third.page)).toEqual(['password-key', 'session', 'storage-key'])
    const client = await nodeClient()
    expect((await directory(client)).version).toBe(2)

    await third.page.getByRole('link', { name: 'Back to the choices' }).click()
    await third.page.getByRole('link', { name: 'Recover with my recovery phrase' }).click()
    const phrase = third.page.getByLabel('Recovery phrase')
    await phrase.fill(account.phrase.replace(/^\S+/, 'notaword'))
    await third.page.getByRole('button', { name: 'Recover' }).click()
    await expect
      .poll(() => third.page.getByRole('alert').textContent())
      .toBe('Word 1, “notaword”, is not one of the recovery words. Check its spelling on your written copy.')
    await checkScreen(third, 'device-recover')
    // Valid words with a valid checksum, but not this account's phrase.
    await phrase.fill(recoveryPhrase(generateRecoveryKey()))
    await third.page.getByRole('button', { name: 'Recover' }).click()
    await expect.poll(() => third.page.getByRole('alert').textContent(), SLOW).toContain('That recovery phrase does not open your account')
    expect(await storedNames(third.page)).toEqual(['password-key', 'session', 'storage-key'])
    expect((await directory(client)).version).toBe(2)

    // As written on paper: capitals, line breaks.
    const words = account.phrase.toUpperCase().split(' ')
    await phrase.fill(`${words.slice(0, 12).join(' ')}\n${words.slice(12).join('  ')}`)
    await third.page.getByLabel('Name of this browser').fill('Recovered browser')
    await third.page.getByRole('button', { name: 'Recover' }).click()
    await expect.poll(() => deviceHeading(third.page).isVisible(), SLOW).toBe(true)
    expect(await storedIdentitySeeds(third.page, 'keys')).toEqual(await storedIdentitySeeds(first.page, 'keys'))
    const listed = await directory(client)
    expect(listed.version).toBe(3)
    expect(listed.devices.map((device) => device.name)).toEqual(['Test Chromium', 'Phone browser', 'Recovered browser'])
    expect([...first.problems, ...third.problems]).toEqual([])
    await third.context.close()
    await first.context.close()
  }, 120_000)
})
