// Brute-force budgets: wrong passwords per sign-in subject, and windowed budgets of refused attempts.
// Part of the storage port (../port.ts); storage/kysely/budgets.ts implements it.

/**
 * Wrong passwords per sign-in subject: the SHA-256 of an email key, whether or not an account
 * has it, so that an unknown email is counted and locked exactly as an account is.
 */
export interface PasswordFailureStore {
  /**
   * Counts a password check before its hash runs, unless the subject is locked: one conditional
   * upsert, so racing checks (on any instance) never get more than `threshold` hashes per lock.
   * The check that reaches the threshold sets the lock at once and restarts the count; a right
   * password clears it again. A count whose last check is `durationMs` old restarts at 1.
   * Undefined when the subject is locked; otherwise the lock this check set, if it set one.
   */
  reservePasswordCheck(subject: string, now: number, rule: LockoutRule): Promise<{ readonly lockedUntil: number | null } | undefined>
  /** The lock in force or ended, if any. */
  findPasswordLock(subject: string): Promise<number | null>
  /** A right password: the count and any lock go. */
  clearPasswordFailures(subject: string): Promise<void>
}

/** Windowed budgets of refused attempts per (scope, subject). */
export interface AttemptBudgetStore {
  /**
   * Counts an attempt before it is looked at, while the subject has fewer than `maxFailures`
   * counted in its window (a window that has ended restarts at `now` for `windowMs`): one
   * conditional upsert, so racing attempts (on any instance) never get more than `maxFailures`
   * looked at. The budget after counting, or undefined when it is spent.
   */
  reserveAttempt(
    scope: BudgetScope,
    subject: string,
    now: number,
    limit: { readonly maxFailures: number; readonly windowMs: number },
  ): Promise<AttemptBudget | undefined>
  /** Uncounts a reserved attempt that succeeded: only refused ones count. */
  releaseAttempt(scope: BudgetScope, subject: string): Promise<void>
  findAttemptBudget(scope: BudgetScope, subject: string): Promise<AttemptBudget | undefined>
}

/** The lockout rule (API.md section 3), with the lock's duration in milliseconds. */
export interface LockoutRule {
  readonly threshold: number
  readonly durationMs: number
}

/** redeem: refused redemptions per client address; second_factor: wrong codes per account; export: account exports per account. */
export type BudgetScope =
  | 'redeem'
  | 'second_factor'
  | 'export'
  | 'account_lookup'
  | 'link_open_link'
  | 'link_open_address'
  | 'link_read_link'
  | 'link_read_address'

export interface AttemptBudget {
  readonly windowEndsAt: number
  /** Attempts counted in the window, reserved ones included. */
  readonly failures: number
}
