// Account deletion: the tombstone, then the purge of what the account held.
// Part of the storage port (../port.ts); storage/kysely/account-deletion.ts implements it.

export interface AccountDeletionStore {
  /**
   * Deletes the account as a person sees it, in the caller's transaction: the row becomes a
   * tombstone (email, password, name and identity key scrubbed, so the email is free again),
   * every session, challenge, code, second factor, cohort, directory, escrow, relay channel,
   * security event and trash row of the account goes, its open upload sessions close, and the account joins
   * the purge queue. False (nothing changed) when it was deleted already; the account row is
   * written first, so two deletions at once change it once.
   */
  markAccountDeleted(userId: string, now: number): Promise<boolean>
  /** Deleted accounts whose rows are not all gone yet, by user id after `after`. */
  pendingAccountPurges(after: string, limit: number): Promise<string[]>
  /**
   * Removes up to `limit` assets of a deleted account that nothing keeps (no legal hold, no
   * retention floor ahead of `now`), their blob references with them; returns how many went.
   */
  purgeAssets(ownerId: string, now: number, limit: number): Promise<number>
  /**
   * After the assets: removes the account's upload sessions and the albums left without an
   * asset. Once nothing of the account remains but its tombstone and record (no asset, no blob
   * row), also its usage row and its queue entry; true then.
   */
  finishAccountPurge(ownerId: string, now: number): Promise<boolean>
}
