// Maintenance: the sweep of expired rows.
// Part of the storage port (../port.ts); storage/kysely/maintenance.ts implements it.

export interface MaintenanceStore {
  /** Deletes every expired row; idempotent, so every instance may run it at once. Counts by table. */
  sweepExpired(limits: SweepLimits): Promise<Record<string, number>>
}

export interface SweepLimits {
  readonly now: number
  /** Replay-ledger steps below this one can no longer be presented. */
  readonly oldestUsableTotpStep: number
  /** Wrong-password counts untouched for this long have restarted (unless a lock is still in force). */
  readonly passwordFailureTtlMs: number
  /** Security events older than this are dropped. */
  readonly securityEventTtlMs: number
}
