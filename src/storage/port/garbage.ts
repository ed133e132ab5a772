// Garbage: blob rows nothing references, the reclaim queue and holds on file removal.
// Part of the storage port (../port.ts); storage/kysely/garbage.ts implements it.

export interface GarbageStore {
  /**
   * Drops replaced-bundle references that nothing protects any more (retention passed), then
   * the owner rows of blobs that no reference and no open upload session of the owner declares
   * (uploaded or extra), taking their sizes off their owners' stored bytes, and queues their
   * hashes for reclaiming in the same transaction. Returns how many owner rows went.
   */
  collectGarbage(now: number): Promise<number>
  /** Up to `limit` queued hashes after `after`, in hash order. */
  queuedReclaims(after: string, limit: number): Promise<QueuedReclaim[]>
  /** Drops these entries unless a hash was queued again since it was read. */
  dropReclaims(entries: readonly QueuedReclaim[]): Promise<void>
  /** Records a hold on the removal of blob files, in force until `expiresAt` unless released. */
  takeGcHold(hold: GcHold): Promise<void>
  /**
   * Moves a hold's end to `expiresAt` while it is still in force at `now`; false when it was
   * released or had lapsed (files may have been removed since: its holder cannot rely on it).
   */
  renewGcHold(holdId: string, now: number, expiresAt: number): Promise<boolean>
  releaseGcHold(holdId: string): Promise<void>
  /** Queues hashes for reclaiming (files found that no row names: coffer fsck --reclaim-unowned). */
  queueReclaims(hashes: readonly string[]): Promise<void>
  /** Whether any hold is in force at `now`: then no queued file may be removed. */
  gcHeld(now: number): Promise<boolean>
}

/** A queued hash, as read: the generation lets a pass drop only the entry it looked at. */
export interface QueuedReclaim {
  readonly hash: string
  readonly generation: number
}

/** A hold on the removal of blob files (a backup copying them). */
export interface GcHold {
  readonly holdId: string
  readonly reason: string
  readonly createdAt: number
  readonly expiresAt: number
}
