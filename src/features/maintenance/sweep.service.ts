// The periodic sweep of expired rows (codes, channels, challenges, sessions past their refresh
// lifetime, replay-ledger steps that can no longer be presented), so tables stay bounded.
// Plain conditional deletes: every instance may run it at the same time.
import type { Deps } from '../../deps.ts'

/** TOTP accepts one step either side of now; anything older than two steps back is dead. */
const TOTP_STEP_MS = 30_000

export async function sweepExpired(deps: Deps): Promise<Record<string, number>> {
  const now = deps.clock.now()
  return deps.storage.sweepExpired({
    now,
    oldestUsableTotpStep: Math.floor(now / TOTP_STEP_MS) - 2,
    redeemWindowMs: deps.config.enrollment.redeemWindowS * 1000,
  })
}

/** Runs the sweep every `sweepIntervalS` on this instance; returns the function that stops it. */
export function startSweeping(deps: Deps, log: { info(o: object, m: string): void; error(o: object, m: string): void }): () => void {
  const timer = setInterval(() => {
    sweepExpired(deps).then(
      (counts) => {
        if (Object.values(counts).some((n) => n > 0)) log.info({ deleted: counts }, 'swept expired rows')
      },
      (error: unknown) => log.error({ err: error }, 'sweep failed'),
    )
  }, deps.config.sweepIntervalS * 1000)
  timer.unref()
  return () => clearInterval(timer)
}
