// The parts of blobs uploaded in pieces (decision 0034) whose upload session ended: the sweep
// removed the session (its part rows went with it) or it was closed or expired, and no request
// may add to it any more. Found from the store's side (the uploads that have parts there), so
// that files whose rows never followed, or whose rows went with their session, are found too.
// Plain removals: every instance may run it at the same time.
import type { Deps } from '../../deps.ts'

/**
 * How long after its session ended an upload's parts are left alone: a part whose PUT began
 * while the session was open may still be landing.
 */
export const ENDED_PARTS_GRACE_MS = 10 * 60 * 1000

/** Removes the parts (files, then rows) of every upload whose session ended before the grace; answers how many uploads. */
export async function dropEndedParts(deps: Deps): Promise<number> {
  const endedBy = deps.clock.now() - ENDED_PARTS_GRACE_MS
  let dropped = 0
  for await (const uploadId of deps.blobs.partUploads()) {
    const session = await deps.storage.findUploadSession(uploadId)
    const endedAt = session === undefined ? Number.NEGATIVE_INFINITY : Math.min(session.closedAt ?? Number.POSITIVE_INFINITY, session.expiresAt)
    if (endedAt > endedBy) continue
    await deps.blobs.removeParts(uploadId)
    await deps.storage.deleteUploadParts(uploadId)
    dropped++
  }
  return dropped
}
