// Garbage collection of blobs (API.md section 6): bytes that no live asset references, that no
// replaced bundle under a future retention floor keeps, and that no open upload session still
// needs. The database decides in one transaction of conditional deletes, which also queues the
// hashes whose rows went; then each queued file goes when no owner row and no open session
// names its hash any more, unless it was rewritten since the decision. A queued hash leaves the
// queue only after that, so a crash in between leaves it for the next pass, and whatever else
// queued a hash (an abandoned or expired upload session) is reclaimed the same way. Safe to run
// on several instances at once. While a hold is in force (a backup copying files, decision
// 0011), rows are still collected and hashes queued, but no file is removed: the queue waits.
import type { Deps } from '../../deps.ts'

/** Queued hashes looked at per round trip. */
const RECLAIM_BATCH = 500

/** `held` when a hold stopped the pass before it removed every queued file it could. */
export async function collectGarbage(deps: Deps): Promise<{ rows: number; files: number; held?: true }> {
  const rows = await deps.storage.transaction((tx) => tx.collectGarbage(deps.clock.now()))
  let files = 0
  // In hash order, each hash once per pass (one queued again meanwhile waits for the next pass).
  for (let after = ''; ; ) {
    const queued = await deps.storage.queuedReclaims(after, RECLAIM_BATCH)
    // Wall clock, as file modification times are: a file rewritten after this is kept.
    const decidedAt = Date.now()
    const stillNeeded = await deps.storage.blobHashesStillNeeded(
      queued.map((entry) => entry.hash),
      deps.clock.now(),
    )
    // Asked after deciding, before removing: a backup whose hold began later snapshots the
    // database later, when no row names what this batch removes (it was unneeded already, and a
    // new row for it would come with a new file, which remove leaves alone). A hold that began
    // earlier stops the pass here, leaving the batch queued.
    if (queued.length > 0 && (await deps.storage.gcHeld(deps.clock.now()))) return { rows, files, held: true }
    for (const { hash } of queued) if (!stillNeeded.has(hash) && (await deps.blobs.remove(hash, decidedAt))) files++
    await deps.storage.dropReclaims(queued)
    if (queued.length < RECLAIM_BATCH) return { rows, files }
    after = queued.at(-1)?.hash ?? after
  }
}
