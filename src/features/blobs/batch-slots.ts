// How many batch downloads are sent at once (decision 0045). Each holds up to
// BLOB_BATCH_MAX_BYTES in memory until its answer is sent, so an account gets at most
// BATCH_DOWNLOADS_PER_ACCOUNT at a time on all instances together (slots in the database, 429),
// and a process at most BATCH_DOWNLOADS_PER_PROCESS for all accounts (a counter here, 503).
import { randomUUID } from 'node:crypto'
import type { Deps } from '../../deps.ts'
import { AppError } from '../../errors.ts'

/** A batch is sent in well under a second: the client may ask again at once. */
export const BATCH_BUSY_RETRY_AFTER_S = 1

/**
 * How long a slot stays held when its batch never frees it (its process was killed): longer
 * than sending one batch takes even over a slow link (8 MiB at 1 Mbit/s is about a minute).
 */
export const BATCH_SLOT_LEASE_MS = 120_000

/** The batches this process is sending: a second cap, beside the database's per account. */
export class ProcessBatchSlots {
  readonly max: number
  #held = 0

  constructor(max: number) {
    this.max = max
  }

  tryTake(): boolean {
    if (this.#held >= this.max) return false
    this.#held++
    return true
  }

  release(): void {
    this.#held--
  }
}

/**
 * Takes a slot of this process and, for an account's batch, one of the account's, or throws 503
 * `error.batch.server_busy` / 429 `error.batch.too_many` with Retry-After. The function
 * returned frees what it took (once, however often it is called).
 */
export async function takeBatchSlot(deps: Deps, processSlots: ProcessBatchSlots, account: string | null): Promise<() => Promise<void>> {
  const retryAfterS = BATCH_BUSY_RETRY_AFTER_S
  if (!processSlots.tryTake()) {
    throw new AppError('error.batch.server_busy', `This server is sending ${processSlots.max} batch downloads already; try again after Retry-After seconds`, {
      retryAfterS,
    })
  }
  const holder = randomUUID()
  const limit = { slots: deps.config.batchDownloads.perAccount, leaseMs: BATCH_SLOT_LEASE_MS }
  const slot =
    account === null
      ? null
      : await deps.storage.takeBatchDownloadSlot(account, holder, deps.clock.now(), limit).catch((error: unknown) => {
          processSlots.release()
          throw error
        })
  if (slot === undefined) {
    processSlots.release()
    throw new AppError('error.batch.too_many', `This account has ${limit.slots} batch downloads in flight already; try again after Retry-After seconds`, {
      retryAfterS,
    })
  }
  let released = false
  return async () => {
    if (released) return
    released = true
    processSlots.release()
    if (account !== null && slot !== null) await deps.storage.releaseBatchDownloadSlot(account, slot, holder)
  }
}
