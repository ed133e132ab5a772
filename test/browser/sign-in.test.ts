// Register, sign out, sign in, and sign in with a TOTP code, in Chromium against a real server;
// a reload keeps the session; each screen passes axe and breaks no CSP rule.
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PASSWORD, uniqueEmail, withSecondFactor, wrongCode } from '../support/actors.ts'
import { checkScreen, launchChromium, openDevice, signOut } from '../support/browser.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
let browser: Browser

beforeAll(async () => {
  server = await startServer()
  browser = await launchChromium()
}, 60_000)
afterAll(async () => {
  await browser?.close()
  await server?.close()
})

/** The account the header says is signed in (Sign out's title at this width), or null. */
const signedInAs = async (page: Page): Promise<string | null> => {
  const signOut = page.getByRole('button', { name: 'Sign out' })
  return (await signOut.isVisible()) ? ((await signOut.getAttribute('title'))?.replace('Signed in as ', '') ?? null) : null
}

describe('signing in', () => {
  it('registers, keeps the session over a reload, signs out and signs in again', async () => {
    const device = await openDevice(browser, server.url)
    const { page } = device
    const email = uniqueEmail('web')
    await page.goto('/')
    await expect.poll(() => page.getByRole('heading', { name: 'Sign in to Coffer Photos' }).isVisible()).toBe(true)
    await checkScreen(device, 'sign-in')

    await page.getByRole('button', { name: 'Create an account' }).click()
    await page.getByLabel('Email').fill(email)
    await page.getByLabel('Password').fill('short')
    await page.getByRole('button', { name: 'Create account' }).click()
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('at least 12 characters')
    await checkScreen(device, 'register')
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Create account' }).click()
    await expect.poll(() => signedInAs(page)).toBe(email)

    await page.reload()
    await expect.poll(() => signedInAs(page)).toBe(email)

    await signOut(page)
    await expect.poll(() => page.getByRole('heading', { name: 'Sign in to Coffer Photos' }).isVisible()).toBe(true)

    await page.getByLabel('Email').fill(email)
    await page.getByLabel('Password').fill('not the password at all')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('do not match an account')
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect.poll(() => signedInAs(page)).toBe(email)
    expect(device.problems).toEqual([])
    await device.context.close()
  })

  it('asks for the TOTP code when the account has one, refuses a wrong one, and signs in with the right one', async () => {
    const member = await withSecondFactor(server, 'web-totp')
    server.clock.advance(30_000) // the code that confirmed enrollment is spent
    const device = await openDevice(browser, server.url, { phone: true })
    const { page } = device
    await page.goto('/')
    await page.getByLabel('Email').fill(member.email)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect.poll(() => page.getByRole('heading', { name: 'Enter your code' }).isVisible()).toBe(true)
    await checkScreen(device, 'sign-in-code')
    await page.getByLabel('Code').fill(wrongCode(member.authenticator, server.clock.now()))
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('That code is not right')
    await page.getByLabel('Code').fill(member.authenticator.codeAt(server.clock.now()))
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect.poll(() => page.getByText(member.email).first().isVisible()).toBe(true)
    expect(device.problems).toEqual([])
    await device.context.close()
  })
})
