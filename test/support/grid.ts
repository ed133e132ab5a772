// What the grid's browser tests (test/browser/grid*.test.ts) read of the page: long tasks, the
// tiles on screen, the tallest element, the JS heap.
import type { Page } from 'playwright-core'

/** What these tests read of the page (this file has no DOM types). */
export interface PageGlobals {
  longTasks: number[]
  innerHeight: number
  scrollY: number
  document: {
    querySelectorAll(
      selector: string,
    ): Iterable<{ getAttribute(name: string): string | null; getBoundingClientRect(): { top: number; bottom: number; height: number } }>
    documentElement: { scrollHeight: number }
  }
  performance: { memory?: { usedJSHeapSize: number } }
  PerformanceObserver: new (callback: (list: { getEntries(): { duration: number }[] }) => void) => { observe(options: unknown): void }
}

/** Records every long task of the page from its start (`longTasks`, their durations in ms). */
export const recordLongTasks = (page: Page) =>
  page.addInitScript(() => {
    const page = globalThis as unknown as PageGlobals
    page.longTasks = []
    new page.PerformanceObserver((list) => page.longTasks.push(...list.getEntries().map((entry) => entry.duration))).observe({
      type: 'longtask',
      buffered: true,
    })
  })

export const clearLongTasks = (page: Page) =>
  page.evaluate(() => {
    ;(globalThis as unknown as PageGlobals).longTasks = []
  })
export const longestTask = (page: Page) => page.evaluate(() => Math.max(0, ...(globalThis as unknown as PageGlobals).longTasks))

/** The tiles whose top is on screen, by their data-asset, in page order. */
export const onScreen = (page: Page): Promise<string[]> =>
  page.evaluate(() => {
    const page = globalThis as unknown as PageGlobals
    return [...page.document.querySelectorAll('a[data-asset]')]
      .filter((tile) => tile.getBoundingClientRect().top >= 0 && tile.getBoundingClientRect().top < page.innerHeight)
      .map((tile) => tile.getAttribute('data-asset')!)
  })

/** The tallest element of the page and the page's own height. */
export const tallest = (page: Page) =>
  page.evaluate(() => {
    const page = globalThis as unknown as PageGlobals
    return Math.max(
      page.document.documentElement.scrollHeight,
      ...[...page.document.querySelectorAll('*')].map((element) => element.getBoundingClientRect().height),
    )
  })

export const heap = (page: Page) => page.evaluate(() => (globalThis as unknown as PageGlobals).performance.memory?.usedJSHeapSize ?? 0)
export const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MiB`
