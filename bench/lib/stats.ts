// Latency percentiles, shared by the load generator (loop.ts) and the children that loop by
// themselves (child-side.ts timedLoops); the median and least-squares slope of the soak's
// memory trend.

/** The `p` quantile (0..1) of ascending `sorted`, nearest rank below; 0 when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0)
}

/** The median of `values` (any order); 0 when empty. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  if (sorted.length === 0) return 0
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2
}

/** The least-squares slope of y over x (y units per x unit); 0 with fewer than two distinct x. */
export function slope(points: ReadonlyArray<{ readonly x: number; readonly y: number }>): number {
  const n = points.length
  if (n < 2) return 0
  const meanX = points.reduce((sum, p) => sum + p.x, 0) / n
  const meanY = points.reduce((sum, p) => sum + p.y, 0) / n
  let covariance = 0
  let variance = 0
  for (const p of points) {
    covariance += (p.x - meanX) * (p.y - meanY)
    variance += (p.x - meanX) ** 2
  }
  return variance === 0 ? 0 : covariance / variance
}
