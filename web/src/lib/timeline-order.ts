// The Photos screen's order (lib/timeline.ts; decision 0055): newest first by date taken, each
// photo on its day. Pure, so Node (the tests) orders with the same code.
import { dayOf, dayOfWallClock } from './format.ts'

/** A photo as the timeline orders it. */
export interface Placed {
  readonly assetId: string
  /** Its day (lib/format.ts dayOf). */
  readonly day: number
  /** Its date taken, ms since the epoch. */
  readonly at: number
}

/** The day a date taken falls on: its wall clock (taken.ts `local`: the photo's own offset, a floating time as it reads, or the viewer's zone for the file's and the upload's times); `at` in the browser's zone without one. */
export function dayOfTaken(at: number, local: number | null): number {
  return local === null ? dayOf(at) : dayOfWallClock(local)
}

/**
 * Newest first: by day, then by time within it, then by asset id (a stable order for ties). By
 * day first, so that a day is never split when photos of one moment carry different zones.
 */
export function byDateTaken(a: Placed, b: Placed): number {
  return b.day - a.day || b.at - a.at || (a.assetId < b.assetId ? -1 : a.assetId > b.assetId ? 1 : 0)
}
