// The pool of gallery workers (workers/gallery.worker.ts): a few, each given the next call when
// it has the fewest running, so that many thumbnails decrypt side by side and the page's thread
// only fetches and draws. One pool for the page, made on first use.
import * as Comlink from 'comlink'
import type { GalleryWorker } from '../workers/gallery.worker.ts'

interface Member {
  readonly remote: Comlink.Remote<GalleryWorker>
  running: number
}

/** Two at least (one decrypts while the other verifies), at most four, and one core left to the page. */
const SIZE = Math.min(4, Math.max(2, (navigator.hardwareConcurrency || 2) - 1))

let members: Member[] | null = null

function pool(): Member[] {
  members ??= Array.from({ length: SIZE }, () => ({
    remote: Comlink.wrap<GalleryWorker>(new Worker(new URL('../workers/gallery.worker.ts', import.meta.url), { type: 'module', name: 'gallery' })),
    running: 0,
  }))
  return members
}

/** Starts the workers ahead of their first call (they take a while to load). */
export function warmPool(): void {
  pool()
}

/** Runs `call` on the least busy worker. */
export async function inWorker<T>(call: (worker: Comlink.Remote<GalleryWorker>) => Promise<T>): Promise<T> {
  const member = pool().reduce((best, next) => (next.running < best.running ? next : best))
  member.running++
  try {
    return await call(member.remote)
  } finally {
    member.running--
  }
}

export { transfer } from 'comlink'
