// Receipts handed to the holder of a chain (decision 0073). An instance whose chain another
// instance holds records each write's bundle as a receipt request in the write's transaction;
// the holder carries the requests in its own slots (or, with none coming, in a slot of their
// own) and deletes each in the transaction that appends its receipts. The writer answers once its
// request is gone, or takes it back and appends it itself when the holder leaves it too long.
// On PostgreSQL both sides hear each other through notices (receipt-notices.ts), which every
// server listens for from its start; without them (SQLite, a lost connection) they poll.
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Deps } from '../../deps.ts'
import type { CustodyBundle, ReceiptRequest, ReceiptWatch } from '../../storage/port/custody.ts'
import { appendRequestHere } from './receipt-append.ts'
import type { ChainPlace } from './receipt-bundle.ts'
import type { ChainSlot } from './receipts.ts'

/**
 * How old a receipt request is when maintenance appends it. Any transaction may take any request
 * (one delete decides), so the age only keeps maintenance from racing a writer that still waits
 * (RECEIPT_HANDOFF_WAIT_MS, 250 ms by default) for a request its writer's kill left.
 */
export const ORPHANED_REQUEST_MS = 10_000

/**
 * Appends the receipts of requests made before `before` that nobody took (the instance that
 * made one was killed while it waited); how many. A maintenance pass appends those older than
 * ORPHANED_REQUEST_MS; a server's start, those older than RECEIPT_HANDOFF_WAIT_MS (the kill it
 * replaces may have left some a moment ago).
 */
export async function appendOrphanedReceipts(deps: Deps, before = deps.clock.now() - ORPHANED_REQUEST_MS): Promise<number> {
  let appended = 0
  for (;;) {
    const orphans = await deps.storage.pendingReceiptRequests(null, before, 100)
    for (const request of orphans) if (await appendRequestHere(deps, request)) appended++
    if (orphans.length < 100) return appended
  }
}

/** Without notices the holder looks for requests at its slots at most this often (ms), backing off to LOOK_MAX_MS while it finds none. */
const LOOK_MIN_MS = 2
const LOOK_MAX_MS = 64
/** Hearing notices, it looks at its slots only this often: in case one was missed while the connection was down. */
const LOOK_HEARING_MS = 1_000
/** Requests one slot carries besides its own write's bundle (each adds its receipts' signatures to the slot). */
const REQUESTS_PER_SLOT = 4
/** A waiting writer's polls without notices: the first pause, doubling up to the longest. */
const POLL_FIRST_MS = 2
const POLL_MAX_MS = 32
/** Hearing notices, a waiting writer polls only this often: in case its notice was missed. */
const POLL_HEARING_MS = 50

export interface ReceiptHandoff {
  /** Starts listening for notices (PostgreSQL), once; a server does at its start, so that as the holder it hears requests while idle. */
  listen(deps: Deps): void
  /** The holder: reads its chain's requests when it is time (`now`: at once, a notice said one came). */
  look(deps: Deps, chain: number, now?: boolean): void
  /** Whether requests of `chain` were read and wait for a slot. */
  waiting(chain: number): boolean
  /** The requests a slot on `chain` carries (at most REQUESTS_PER_SLOT), from now until it ends. */
  carry(chain: number): ReceiptRequest[]
  /** The slot ended: what it carried and did not append is found again by a later look. */
  drop(requests: readonly ReceiptRequest[]): void
  /**
   * A write's slot on an instance that does not hold its chain: its transaction records the
   * bundle for the holder, and once it has committed the write waits for the holder to append
   * the receipts, taking the request back and appending it under the lock itself
   * (`appendedHere` then) when the holder leaves it past RECEIPT_HANDOFF_WAIT_MS (idle, or gone).
   */
  handOff(deps: Deps, bundle: CustodyBundle, place: ChainPlace, appendedHere: () => void): ChainSlot
  /** Stops listening for notices. */
  close(): Promise<void>
}

/**
 * `holds`: whether this process holds chain `chain` (it takes the requests a notice tells of only
 * then); `found`: requests of `chain` that no slot carries yet were read or told of.
 */
export function receiptHandoff(hooks: { holds(deps: Deps, chain: number): boolean; found(deps: Deps, chain: number): void }): ReceiptHandoff {
  /** Read and not yet carried by a slot. */
  let found: ReceiptRequest[] = []
  /** Carried by a slot that has not ended. */
  const carried = new Set<string>()
  let lookAt = 0
  let every = LOOK_MIN_MS
  let looking = false
  /** A notice came while a look was under way: look again after it. */
  let lookAgain = false

  let watch: ReceiptWatch | null = null
  let watched = false
  let hearing = false
  /** The writers waiting for their requests to be taken, by request id. */
  const waiters = new Map<string, () => void>()
  /** Starts listening for notices, once: at a server's start, or else at the first hand-off or the first requests found. */
  const hear = (deps: Deps) => {
    if (watched) return
    watched = true
    watch = deps.storage.watchReceiptRequests({
      requested(chain, request) {
        if (!hooks.holds(deps, chain)) return
        // Told in full: no read needed (a look's answer replaces what was told, a newer reading).
        if (request === null) return handoff.look(deps, chain, true)
        if (carried.has(request.requestId) || found.some((known) => known.requestId === request.requestId)) return
        found.push(request)
        hooks.found(deps, chain)
      },
      taken: (requestId) => waiters.get(requestId)?.(),
      listening: (live) => (hearing = live),
    })
  }

  const handoff: ReceiptHandoff = {
    listen: hear,
    look(deps, chain, now = false) {
      if (looking) {
        lookAgain ||= now
        return
      }
      if (!now && performance.now() < lookAt) return
      looking = true
      deps.storage
        .pendingReceiptRequests(chain, null, REQUESTS_PER_SLOT * 4)
        .then(
          (requests) => {
            found = requests.filter((request) => !carried.has(request.requestId))
            every = requests.length > 0 ? LOOK_MIN_MS : Math.min(every * 2, LOOK_MAX_MS)
            if (found.length > 0) {
              hear(deps)
              hooks.found(deps, chain)
            }
          },
          (error: unknown) => deps.log.warn({ err: error }, 'could not read the receipt requests handed to this instance'),
        )
        .finally(() => {
          looking = false
          lookAt = performance.now() + (hearing ? LOOK_HEARING_MS : every)
          if (lookAgain) {
            lookAgain = false
            handoff.look(deps, chain, true)
          }
        })
    },
    waiting: (chain) => found.some((request) => request.chain === chain),
    carry(chain) {
      const taken = found.filter((request) => request.chain === chain).slice(0, REQUESTS_PER_SLOT)
      found = found.filter((request) => !taken.includes(request))
      for (const request of taken) carried.add(request.requestId)
      return taken
    },
    drop(requests) {
      for (const request of requests) carried.delete(request.requestId)
    },
    handOff(deps, bundle, place, appendedHere) {
      hear(deps)
      const request = { requestId: randomUUID(), chain: place.chain, bundle }
      let requested = false
      let committed = false
      /** Whether another transaction took the request (and appended its receipts) before the deadline. */
      const takenInTime = async (): Promise<boolean> => {
        let heard = () => {}
        const notice = new Promise<true>((resolve) => (heard = () => resolve(true)))
        waiters.set(request.requestId, heard)
        try {
          const deadline = performance.now() + deps.config.receiptHandoffWaitMs
          for (let pause = POLL_FIRST_MS; performance.now() < deadline; pause = Math.min(pause * 2, POLL_MAX_MS)) {
            const pausing = new AbortController()
            const woken = await Promise.race([
              notice,
              sleep(Math.max(1, Math.min(hearing ? POLL_HEARING_MS : pause, deadline - performance.now())), false, { signal: pausing.signal }).catch(
                () => false,
              ),
            ])
            pausing.abort()
            if (woken || !(await deps.storage.receiptRequestPending(request.requestId))) return true
          }
          return false
        } finally {
          waiters.delete(request.requestId)
        }
      }
      return {
        ready: async () => {},
        async append(tx) {
          await tx.requestReceipts({ ...request, requestedAt: deps.clock.now() })
          requested = true
        },
        end(ok) {
          committed = ok && requested
        },
        async onChain() {
          if (!committed) return
          try {
            if (await takenInTime()) return
            if (await appendRequestHere(deps, request)) {
              appendedHere()
              deps.log.info(
                { assetId: bundle.assetId, chain: place.chain, waitedMs: deps.config.receiptHandoffWaitMs },
                "the receipt chain's holder left this write's receipts untaken: appended them here, and appending directly for a while",
              )
            }
          } catch (error) {
            // The write stands; its receipts stay requested for the holder or the next maintenance pass.
            deps.log.warn({ err: error, assetId: bundle.assetId }, "could not see this write's receipts appended: they stay requested")
          }
        },
      }
    },
    async close() {
      const closing = watch
      watch = null
      watched = false
      hearing = false
      await closing?.close()
    },
  }
  return handoff
}
