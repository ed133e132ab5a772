// Latency percentiles, shared by the load generator (loop.ts) and the children that loop by
// themselves (child-side.ts timedLoops).

/** The `p` quantile (0..1) of ascending `sorted`, nearest rank below; 0 when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0)
}
