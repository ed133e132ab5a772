// Garbage collection of blobs (API.md section 6): bytes that no live asset references, that no
// replaced bundle under a future retention floor keeps, and that no open upload session still
// needs. The database decides in one transaction of conditional deletes; a file goes only when
// no owner row names its hash any more, and not if it was rewritten since the decision. Safe
// to run on several instances at once.
import type { Deps } from '../../deps.ts'

export async function collectGarbage(deps: Deps): Promise<{ rows: number; files: number }> {
  const decidedAt = Date.now()
  const released = await deps.storage.transaction((tx) => tx.collectGarbage(deps.clock.now()))
  const stillNeeded = await deps.storage.blobHashesStillNeeded(released, deps.clock.now())
  const unowned = released.filter((hash) => !stillNeeded.has(hash))
  for (const hash of unowned) await deps.blobs.remove(hash, decidedAt)
  return { rows: released.length, files: unowned.length }
}
