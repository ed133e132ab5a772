// The periodic sweep of expired rows (codes, channels, challenges, sessions past their refresh
// lifetime, replay-ledger steps that can no longer be presented), so tables stay bounded.
// Plain conditional deletes: every instance may run it at the same time. Garbage collection
// of blobs runs in the same periodic pass, and the removal of what failed blob writes left
// behind (a staging object a bucket that went away kept), and the parts of uploads whose session
// ended. And the deletes the trash held whose time has come (decision 0059), and the receipts
// handed to a chain's holder by an instance killed while it waited (decision 0073).
import type { Deps } from '../../deps.ts'
import { purgeDeletedAccounts } from '../account/deletion.service.ts'
import { anotherIssuer } from '../custody/attestation.ts'
import { appendOrphanedReceipts } from '../custody/receipt-handoff.ts'
import { purgeDueTrash } from '../lifecycle/trash.service.ts'
import { collectGarbage } from './gc.service.ts'
import { dropEndedParts } from './parts.service.ts'

/** TOTP accepts one step either side of now; anything older than two steps back is dead. */
const TOTP_STEP_MS = 30_000

export async function sweepExpired(deps: Deps): Promise<Record<string, number>> {
  const now = deps.clock.now()
  return deps.storage.sweepExpired({
    now,
    oldestUsableTotpStep: Math.floor(now / TOTP_STEP_MS) - 2,
    // A count restarts once its last wrong password is as old as a lock lasts.
    passwordFailureTtlMs: deps.config.lockout.durationS * 1000,
    securityEventTtlMs: deps.config.securityEventRetentionS * 1000,
  })
}

/**
 * One maintenance pass: expired rows, then the purges of deleted accounts still queued (cut off,
 * or waiting on a hold or a retention floor), then the trash's due deletes, then garbage blobs
 * (which all may have released),
 * then the parts of ended uploads (`partUploads`: how many uploads' parts went), then the
 * leftovers of failed blob writes, then the receipts of orphaned receipt requests (only under the
 * PUBLIC_ORIGIN the newest receipt names).
 */
export async function maintain(deps: Deps): Promise<{
  deleted: Record<string, number>
  purgedAccounts: number
  trash: { purged: number; kept: number }
  garbage: { rows: number; files: number }
  partUploads: number
  leftovers: number
  orphanedReceiptRequests: number
}> {
  const deleted = await sweepExpired(deps)
  const purgedAccounts = await purgeDeletedAccounts(deps)
  const trash = await purgeDueTrash(deps)
  const garbage = await collectGarbage(deps)
  const partUploads = await dropEndedParts(deps)
  const leftovers = await deps.blobs.cleanLeftovers()
  // Receipts it appends name its PUBLIC_ORIGIN: under another than the newest receipt's (a
  // command run without the servers' environment), clients would refuse them, so they wait.
  const orphanedReceiptRequests = (await anotherIssuer(deps)) === null ? await appendOrphanedReceipts(deps) : 0
  return { deleted, purgedAccounts, trash, garbage, partUploads, leftovers, orphanedReceiptRequests }
}

/**
 * Runs maintenance every `sweepIntervalS` on this instance; returns the function that stops it,
 * which resolves once the passes under way have ended (the storage must stay open until then:
 * a pass cut off by its closing would fail half done).
 */
export function startSweeping(deps: Deps, log: { info(o: object, m: string): void; error(o: object, m: string): void }): () => Promise<void> {
  const running = new Set<Promise<void>>()
  const timer = setInterval(() => {
    const pass = maintain(deps).then(
      (done) => {
        if (
          Object.values(done.deleted).some((n) => n > 0) ||
          done.purgedAccounts > 0 ||
          done.trash.purged > 0 ||
          done.garbage.rows > 0 ||
          done.partUploads > 0 ||
          done.leftovers > 0 ||
          done.orphanedReceiptRequests > 0
        )
          log.info(done, 'maintenance removed expired rows and garbage')
      },
      (error: unknown) => log.error({ err: error }, 'maintenance failed'),
    )
    running.add(pass)
    void pass.finally(() => running.delete(pass))
  }, deps.config.sweepIntervalS * 1000)
  timer.unref()
  return async () => {
    clearInterval(timer)
    await Promise.all(running)
  }
}
