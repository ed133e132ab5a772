// Debian's Chromium (/usr/bin/chromium, installed by .ci/run) driven by playwright-core: the
// web app as a person uses it, against a real server. Each "device" is its own browser context
// (its own IndexedDB, like another browser). Every page is watched for what must never happen:
// a Content-Security-Policy violation, an uncaught error, a failed request the app did not
// expect. Screenshots go to docs/web/screens/ when UPDATE_SCREENSHOTS=1 (the committed ones
// that docs/web.md shows), else to a temporary folder.
import axe from 'axe-core'
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

/** The two sizes every screen is looked at (decision 0057): a phone's, and a desktop's. */
export const PHONE = { width: 390, height: 844 } as const
export const DESKTOP = { width: 1280, height: 900 } as const

/**
 * Checks the screen with axe-core (WCAG 2.1 A and AA rules): no serious or critical violation,
 * nothing wider than the screen (a page that scrolls sideways on a phone is broken) and no toast
 * over the phone's bottom bar. Then writes its screenshot. Every screen at both sizes: the page
 * is checked at its own size, then at the other (PHONE or DESKTOP) and given its size back, the
 * shots named `<name>.png` (desktop) and `<name>-phone.png`. A test that visits both sizes itself
 * passes `phone: false`, or a name ending in `-phone`: one check, at the page's size, as named.
 */
export async function checkScreen(watched: WatchedPage, name: string, options: { readonly phone?: boolean } = {}): Promise<void> {
  const size = watched.page.viewportSize()
  if (options.phone === false || name.endsWith('-phone') || size === null) return checkShown(watched, name)
  const phoneNow = size.width <= PHONE.width
  await checkShown(watched, phoneNow ? `${name}-phone` : name)
  await watched.page.setViewportSize(phoneNow ? DESKTOP : PHONE)
  try {
    await settled(watched.page)
    await checkShown(watched, phoneNow ? name : `${name}-phone`)
  } finally {
    await watched.page.setViewportSize(size)
    await settled(watched.page)
  }
}

async function checkShown(watched: WatchedPage, name: string): Promise<void> {
  const violations = await axeViolations(watched.page)
  const serious = violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
  expect(
    serious.map((violation) => `${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).join(', ')})`),
    `axe on ${name}`,
  ).toEqual([])
  expect(await watched.page.evaluate('document.documentElement.scrollWidth - innerWidth'), `${name} is wider than the screen`).toBeLessThanOrEqual(0)
  // A toast must not hide the phone's bottom bar (both fixed to the screen's foot).
  expect(
    await watched.page.evaluate(`(() => {
      const toast = document.querySelector('.toast-area')?.getBoundingClientRect()
      const bar = document.querySelector('.bottom-bar')?.getBoundingClientRect()
      return toast && bar && toast.height > 0 && bar.height > 0 ? toast.bottom - bar.top : 0
    })()`),
    `a toast covers the bottom bar on ${name}`,
  ).toBeLessThanOrEqual(0)
  await watched.page.screenshot({ path: path.join(SCREENS, `${name}.png`), fullPage: false })
  expect(watched.problems, `page problems on ${name}`).toEqual([])
}

const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']

/**
 * axe.run in the page itself, as @axe-core/playwright's legacy mode runs it (the default runs axe
 * in every frame, then opens a blank page to put the frames' results together: a page and a second
 * axe per check, and the app has no frames). axe's 550 kB source is put into a document once, not
 * twice a check as AxeBuilder does; only the violations are gathered in full (the passes and the
 * rest are never read): together about a quarter of a second a check.
 */
async function axeViolations(page: Page): Promise<axe.Result[]> {
  if (!(await page.evaluate('typeof globalThis.axe?.run === "function"')))
    await page.evaluate(`${axe.source};axe.configure({ allowedOrigins: ['<same_origin>'], branding: { application: 'playwright' } })`)
  const options: axe.RunOptions = { runOnly: { type: 'tag', values: AXE_TAGS }, resultTypes: ['violations'] }
  return page.evaluate(
    (options) =>
      (globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: axe.Result[] }> } }).axe
        .run((globalThis as unknown as { document: unknown }).document, options)
        .then((results) => results.violations),
    options,
  )
}

/** A resized page has drawn its new layout, and the images on screen have loaded (up to 5 s: a screenshot of placeholders is still a screenshot). */
async function settled(page: Page): Promise<void> {
  await page.evaluate('new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))')
  await page
    .waitForFunction(
      () => {
        const images = [
          ...(globalThis as unknown as { document: { images: Iterable<{ complete: boolean; getBoundingClientRect(): { bottom: number; top: number } }> } })
            .document.images,
        ]
        return images.filter((image) => image.getBoundingClientRect().bottom > 0).every((image) => image.complete)
      },
      undefined,
      { timeout: 5000 },
    )
    .catch(() => {})
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
