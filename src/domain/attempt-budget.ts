// Windowed attempt budgets (refused redemptions per client address, wrong second-factor codes
// per account): from the `maxFailures`-th counted attempt, attempts are refused unseen until the
// window ends.

/** Whole seconds until attempts are looked at again, or null when they are now. */
export function budgetBlockedForS(
  budget: { readonly windowEndsAt: number; readonly failures: number } | undefined,
  now: number,
  maxFailures: number,
): number | null {
  if (budget === undefined || budget.failures < maxFailures || budget.windowEndsAt <= now) return null
  return Math.ceil((budget.windowEndsAt - now) / 1000)
}
