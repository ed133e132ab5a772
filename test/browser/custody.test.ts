// The custody screens in Chromium against a real server: an album uploaded through the photo
// library shows every photo and the album verified (storage and receipts checked in the page),
// a deep check on request, and a blob changed on the server's disk shows "not verified" with
// the reason after a deep check. Names are decrypted in the page. Each screen passes axe.
import { open } from 'node:fs/promises'
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { openAlbum } from '../../src/client/albums.ts'
import { backupFile } from '../../src/client/upload.ts'
import { checkScreen, openDevice, serverAndBrowser } from '../support/browser.ts'
import { openAs, webAccount } from '../support/web-account.ts'
import { folderOf } from '../support/blobs.ts'

const running = serverAndBrowser()

/** Changes one byte of a stored blob on the server's disk, as a failing disk would. */
async function damage(hash: string): Promise<void> {
  const handle = await open(folderOf(running.server).pathOf(hash), 'r+')
  try {
    const byte = Buffer.alloc(1)
    await handle.read(byte, 0, 1, 100)
    byte[0] = byte[0]! ^ 0xff
    await handle.write(byte, 0, 1, 100)
  } finally {
    await handle.close()
  }
}

const summary = (page: Page) => page.getByRole('region', { name: 'Album' }).getByRole('status')
const verdict = (page: Page) => page.getByRole('region', { name: 'Verdict' }).getByRole('status')
const photoEntry = (page: Page, name: string) => page.getByRole('listitem').filter({ has: page.getByRole('link', { name }) })

describe('custody in the browser', () => {
  it('verifies an album and each photo, deep on request, and shows a damaged photo as not verified with the reason', async () => {
    const { server, browser } = running
    const account = await webAccount(server, 'web-custody')
    const album = await openAlbum(account.library, 'Summer 2026')
    const names = ['beach.jpg', 'dunes.jpg', 'sunset.jpg']
    const stored = new Map<string, { assetId: string; ciphertextHash: string }>()
    for (const [i, name] of names.entries()) {
      const bytes = new Uint8Array(2000 + i * 700).fill(i + 1)
      const result = await backupFile(
        { ...account.library, albumId: album.albumId },
        { name, size: bytes.length, type: 'image/jpeg', modified: null, open: () => [bytes] },
      )
      stored.set(name, { assetId: result.assetId, ciphertextHash: result.ciphertextHash! })
    }

    const device = await openDevice(browser, server.url)
    const { page } = device
    await openAs(page, server, account, `/#/custody/${album.albumId}`)
    await expect.poll(() => page.getByRole('heading', { name: 'Custody of Summer 2026' }).isVisible()).toBe(true)
    await expect.poll(() => summary(page).textContent()).toMatch(/✓ Verified All 3 photos \(checked/)
    for (const name of names) expect(await photoEntry(page, name).getByText('✓ Verified').isVisible()).toBe(true)
    await photoEntry(page, 'dunes.jpg').getByText('Details').click()
    expect(await photoEntry(page, 'dunes.jpg').textContent()).toContain(`Photo ${stored.get('dunes.jpg')!.assetId} · 3 parts · 3 receipts checked`)
    await checkScreen(device, 'custody-album')

    await page.getByRole('button', { name: 'Deep check (the server re-reads every photo)' }).click()
    await expect.poll(() => summary(page).textContent()).toMatch(/✓ Verified All 3 photos, deep check \(checked/)

    await damage(stored.get('dunes.jpg')!.ciphertextHash)
    await page.getByRole('link', { name: 'dunes.jpg' }).click()
    await expect.poll(() => page.getByRole('heading', { name: 'Custody of dunes.jpg' }).isVisible()).toBe(true)
    // The structural check cannot see changed bytes: the photo is still stored, indexed, retrievable.
    await expect.poll(() => verdict(page).textContent()).toMatch(/✓ Verified Check, .*: 3 parts, 3 receipts\./)
    await page.getByText('Details: what was checked').click()
    await expect.poll(() => page.getByText(/^Receipt \d+: the photo$/).isVisible()).toBe(true)
    expect(await page.getByText(stored.get('dunes.jpg')!.ciphertextHash).isVisible()).toBe(true)
    await checkScreen(device, 'custody-photo')

    await page.getByRole('button', { name: 'Deep check', exact: true }).click()
    await expect.poll(() => verdict(page).textContent()).toMatch(/✗ Not verified Deep check/)
    await page.getByText('Details: what was checked').click()
    const problems = page.locator('.problems')
    expect(await problems.textContent()).toContain("is corrupt on the server's disk")
    expect(await problems.textContent()).toContain('downloaded, it fails')
    await checkScreen(device, 'custody-photo-not-verified')

    await page.getByRole('link', { name: "The whole album's custody" }).click()
    await expect.poll(() => summary(page).textContent()).toMatch(/✓ Verified All 3 photos/)
    await page.getByRole('button', { name: 'Deep check (the server re-reads every photo)' }).click()
    await expect.poll(() => summary(page).textContent()).toMatch(/✗ Not verified 1 of 3 photos not verified, deep check/)
    expect(await photoEntry(page, 'dunes.jpg').getByText('✗ Not verified').isVisible()).toBe(true)
    expect(await photoEntry(page, 'beach.jpg').getByText('✓ Verified').isVisible()).toBe(true)
    expect(device.problems).toEqual([])
    await device.context.close()
  }, 60_000)
})
