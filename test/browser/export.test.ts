// "Download my data" on the security screen, in Chromium against a real server: the account's
// export is streamed (through the app's service worker, the save picker taken away) into one
// file under the name the server suggests, the whole document the API gives; past the server's budget the screen says how long to wait. The screen passes axe and
// breaks no CSP rule.
import { randomUUID } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import type { AccountExportDocument } from '../../src/sdk/client.ts'
import { checkScreen, openDevice, serverAndBrowser, withoutSavePicker } from '../support/browser.ts'
import { openAs, webAccount } from '../support/web-account.ts'

// One export an hour: the second click meets the budget.
const running = serverAndBrowser({ EXPORTS_PER_WINDOW: '1' })

describe('the security screen’s Download my data', () => {
  it('saves the account’s export as coffer-export-<user_id>.json, then says when the next may start', async () => {
    const { server, browser } = running
    const account = await webAccount(server, 'web-export')
    const albumId = randomUUID()
    await account.client.provisionAlbum(albumId)
    const device = await openDevice(browser, server.url)
    const { page } = device
    await withoutSavePicker(device.context)
    await openAs(page, server, account, '/#/security')
    const button = page.getByRole('button', { name: 'Download my data' })
    await expect.poll(() => button.isVisible()).toBe(true)

    const [download] = await Promise.all([page.waitForEvent('download'), button.click()])
    expect(download.suggestedFilename()).toBe(`coffer-export-${account.userId}.json`)
    const document = JSON.parse(await readFile((await download.path())!, 'utf8')) as AccountExportDocument
    expect(document.format).toBe('coffer-export/v1')
    expect(document.profile).toEqual(await account.client.getProfile())
    expect(document.albums).toEqual([expect.objectContaining({ album_id: albumId, feed: [], receipts: {} })])
    // The browser's own session made it.
    expect(document.sessions.find((session) => session.current)?.user_agent).toBe(await page.evaluate(() => navigator.userAgent))
    const saved = page.getByRole('status').filter({ hasText: 'to your downloads' })
    await expect.poll(() => saved.textContent()).toMatch(new RegExp(`^Saved coffer-export-${account.userId}\\.json \\(.+\\) to your downloads\\.$`))
    await checkScreen(device, 'security-export')

    await button.click()
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Your data can be downloaded a few times an hour. Try again in 60 minutes.')
    await device.context.close()
  })
})
