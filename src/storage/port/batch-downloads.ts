// The batch downloads each account has in flight (decision 0045), counted in the database so
// that every instance keeps to one cap. Part of the storage port (../port.ts);
// storage/kysely/batch-downloads.ts implements it.

export interface BatchDownloadSlotStore {
  /**
   * Takes one of the account's `slots` slots for `holder` until `now + leaseMs`: a free one or
   * one whose lease has ended. Each try is one conditional upsert on (account, slot), so racing
   * batches on any number of instances never hold more than `slots`. The slot taken, or
   * undefined when every one is held.
   */
  takeBatchDownloadSlot(userId: string, holder: string, now: number, limit: { readonly slots: number; readonly leaseMs: number }): Promise<number | undefined>
  /** Frees the slot if `holder` still holds it (after its lease, another batch may). */
  releaseBatchDownloadSlot(userId: string, slot: number, holder: string): Promise<void>
}
