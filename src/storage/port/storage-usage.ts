// Storage usage: what an account takes of its quota, and the lock upload opens queue on.
// Part of the storage port (../port.ts); storage/kysely/storage-usage.ts implements it.

export interface StorageUsageStore {
  /**
   * Writes the account's storage row first (creating it), so that its lock is held for the rest
   * of the transaction: upload opens of one account queue on it, on every instance. Take it after
   * the album lock (lifecycle writes hold the album, then this row).
   */
  lockStorageUsage(ownerId: string): Promise<void>
  /** The account's usage, read in one statement. */
  storageUsage(ownerId: string, now: number): Promise<StorageUsage>
  /** What the operator sees of it: its stored bytes and its live (not deleted) assets, read in one statement. */
  accountHoldings(ownerId: string): Promise<AccountHoldings>
  /**
   * The account's usage with the open session `uploadId` in it, and the bytes that session adds
   * to it (what it declares that is neither stored nor declared at least as large by another
   * open session of the account), read in one statement.
   */
  storageUsageWithUpload(ownerId: string, uploadId: string, now: number): Promise<{ readonly usage: StorageUsage; readonly addedBytes: number }>
}

/** What an account takes of the storage quota. */
export interface StorageUsage {
  /** Size of the distinct blobs the account stores, whatever their role. */
  readonly storedBytes: number
  /**
   * Bytes its open upload sessions declare that it does not store yet: each hash once, at the
   * largest size declared for it.
   */
  readonly pendingBytes: number
  /** Its upload sessions that are neither closed nor expired. */
  readonly openUploads: number
}

export interface AccountHoldings {
  /** As StorageUsage.storedBytes. */
  readonly storedBytes: number
  readonly liveAssets: number
}
