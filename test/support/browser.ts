// Debian's Chromium (/usr/bin/chromium, installed by .ci/run) driven by playwright-core: the
// web app as a person uses it, against a real server. Each "device" is its own browser context
// (its own IndexedDB, like another browser). Every page is watched for what must never happen:
// a Content-Security-Policy violation, an uncaught error, a failed request the app did not
// expect. Screenshots go to docs/web/screens/ when UPDATE_SCREENSHOTS=1 (the committed ones
// that docs/web.md shows), else to a temporary folder.
import AxeBuilder from '@axe-core/playwright'
import { mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { afterAll, beforeAll, expect } from 'vitest'
import { ROOT } from './process.ts'
import { startServer, type TestServer } from './server.ts'

export const CHROMIUM = '/usr/bin/chromium'

/** The probe's flags: no sandbox as root, and nothing that calls out to Google's hosts. */
export const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
]

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS })
}

/** One server (started with `env`) and one Chromium for a whole test file: ready in its tests, closed after them. */
export function serverAndBrowser(env: Record<string, string> = {}): { readonly server: TestServer; readonly browser: Browser } {
  const shared: { server?: TestServer; browser?: Browser } = {}
  beforeAll(async () => {
    shared.server = await startServer(env)
    shared.browser = await launchChromium()
  }, 60_000)
  afterAll(async () => {
    await shared.browser?.close()
    await shared.server?.close()
  })
  return {
    get server() {
      return shared.server!
    },
    get browser() {
      return shared.browser!
    },
  }
}

const SCREENS = process.env.UPDATE_SCREENSHOTS === '1' ? path.join(ROOT, 'docs/web/screens') : path.join(tmpdir(), 'coffer-web-screens')
mkdirSync(SCREENS, { recursive: true })

/** A page whose console and errors are kept: `problems` lists what went wrong on it. */
export interface WatchedPage {
  readonly page: Page
  readonly context: BrowserContext
  /** CSP violations and uncaught errors seen so far. */
  readonly problems: string[]
}

/**
 * A new context (a separate browser profile) and a page in it, at phone width when asked (or at
 * the `viewport` given), in a time zone of its own when given one (IANA).
 */
export async function openDevice(
  browser: Browser,
  baseUrl: string,
  options: { phone?: boolean; timezoneId?: string; viewport?: { readonly width: number; readonly height: number } } = {},
): Promise<WatchedPage> {
  const context = await browser.newContext({
    baseURL: baseUrl,
    viewport: options.viewport ?? (options.phone === true ? { width: 390, height: 800 } : { width: 1280, height: 860 }),
    acceptDownloads: true,
    reducedMotion: 'reduce',
    ...(options.timezoneId === undefined ? {} : { timezoneId: options.timezoneId }),
  })
  // Fail a step with its locator well before the test's own timeout.
  context.setDefaultTimeout(10_000)
  const page = await context.newPage()
  const problems: string[] = []
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content.Security.Policy|Refused to/i.test(message.text())) problems.push(`CSP: ${message.text()}`)
  })
  page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`))
  return { page, context, problems }
}

/**
 * Checks the screen with axe-core (WCAG 2.1 A and AA rules): no serious or critical violation.
 * Then writes its screenshot as `<name>.png`.
 */
export async function checkScreen(watched: WatchedPage, name: string): Promise<void> {
  const results = await new AxeBuilder({ page: watched.page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze()
  const serious = results.violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
  expect(
    serious.map((violation) => `${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).join(', ')})`),
    `axe on ${name}`,
  ).toEqual([])
  await watched.page.screenshot({ path: path.join(SCREENS, `${name}.png`), fullPage: false })
  expect(watched.problems, `page problems on ${name}`).toEqual([])
}

/** Signs out through the frame: its Sign out button, in the account menu at phone width (decision 0057). */
export async function signOut(page: Page): Promise<void> {
  const account = page.getByRole('button', { name: 'Account', exact: true })
  if (await account.isVisible()) await account.click()
  await page.getByRole('button', { name: 'Sign out', exact: true }).click()
}

/**
 * Saves in this context go to the browser's downloads through the service worker (lib/save.ts):
 * Chromium's save picker cannot be answered from a test, so it is taken away, as in browsers
 * that have none. Before the first page loads.
 */
export async function withoutSavePicker(context: BrowserContext): Promise<void> {
  await context.addInitScript(() => Object.defineProperty(globalThis, 'showSaveFilePicker', { value: undefined }))
}
