// Custody receipts (API.md section 7): one per blob of a bundle, issued inside the lifecycle
// write's transaction, chained across the whole server (or along one of RECEIPT_CHAINS chains,
// the one this process holds a lease on: decision 0072). Each receipt is signed over the hash of
// the previous signed one, so signatures are sequential; nothing else is (decision 0023). The
// process's chain sequencer has each write's receipts signed ahead of its transaction, over its
// guess of the head, by the receipt signer's thread (decision 0035); the transaction appends them
// only if the database's head is still that guess, and otherwise signs them again under the chain
// lock. The guess is never trusted: a wrong one costs signatures, never a fork, and nothing
// signed but unstored is referenced by a stored receipt. An instance whose chain another holds
// hands its writes' bundles to the holder through the database (decision 0073).
import { randomUUID } from 'node:crypto'
import type { Static } from 'typebox'
import type { AssetReceipt } from '../../contract/custody.ts'
import { timestamp } from '../../contract/common.ts'
import { MAX_RECEIPT_CHAINS } from '../../config.ts'
import type { Deps } from '../../deps.ts'
import { AppError } from '../../errors.ts'
import type { CustodyStore, Receipt, ReceiptRequest } from '../../storage/port/custody.ts'
import type { Caller } from '../context.ts'
import { issueUnderLock } from './receipt-append.ts'
import type { ChainPlace, CustodyBundle, SignedBundle } from './receipt-bundle.ts'
import { appendOrphanedReceipts, receiptHandoff } from './receipt-handoff.ts'
import { receiptSigner, type ReceiptSigner } from './receipt-signer.ts'

export type { CustodyBundle } from './receipt-bundle.ts'

/** How long a chain's lease lasts; the holder renews it at its first slot after half of it. */
export const CHAIN_LEASE_MS = 30_000
/** How long a non-holder appends directly after its holder left a request untaken (the holder idle), unless it meets the holder's appends. */
const DIRECT_MS = CHAIN_LEASE_MS / 2

/**
 * The chain this process appends to (decision 0072): with one chain, that one; with several,
 * the one it holds a lease on, so that instances do not contend for one head. The lease only
 * spreads the work: every append is conditional on the head, so a lease lost or shared costs
 * signatures, never a fork. Until the first claim answers, and while every chain is held by
 * others, a chain picked by this holder's id.
 *
 * Claims run beside the writes, never in one: a claim's row lock taken in a write's transaction
 * would wait for an earlier write's append to the same row, which waits for the later write's
 * transaction to end (a deadlock PostgreSQL cannot see: half of it is a promise), and a claim
 * awaited on the pool could wait for a connection held by the writes that wait on this slot.
 */
function chainLease() {
  const holder = randomUUID()
  let held: number | null = null
  /** The last claim answered that every chain is held by another instance (nothing is known before the first). */
  let heldElsewhere = false
  /** Until when this instance appends directly though it holds no lease (its holder left a request untaken). */
  let directUntil = 0
  /** When to claim (or renew) again. */
  let claimAt = 0
  let claiming: Promise<void> | null = null
  const claim = async (deps: Deps) => {
    const now = deps.clock.now()
    try {
      // Once more when another instance claimed the chosen chain between its read and its update.
      held =
        (await deps.storage.claimReceiptChain(holder, now, now + CHAIN_LEASE_MS)) ?? (await deps.storage.claimReceiptChain(holder, now, now + CHAIN_LEASE_MS))
      heldElsewhere = held === null
    } catch (error) {
      deps.log.warn({ err: error }, 'could not claim a receipt chain lease: appending to the chain held so far')
    }
  }
  const place = (deps: Deps): ChainPlace => {
    const chains = deps.config.receiptChains
    const now = deps.clock.now()
    if (now >= claimAt && claiming === null) {
      claimAt = now + CHAIN_LEASE_MS / 2
      claiming = claim(deps).finally(() => (claiming = null))
    }
    return { chain: held ?? 1 + (Number.parseInt(holder.slice(0, 8), 16) % chains), chains }
  }
  return {
    /** Claims a chain before the first write (a server that starts to listen), so that it does not start on a borrowed one. */
    async start(deps: Deps): Promise<void> {
      claimAt = deps.clock.now() + CHAIN_LEASE_MS / 2
      await claim(deps)
    },
    /** The chain to append to, and whether this instance holds its lease. */
    current(deps: Deps): ChainPlace & { readonly holding: boolean } {
      const here = place(deps)
      return { ...here, holding: held === here.chain }
    },
    /** The chain whose holder this write's receipts go to, or null when this instance appends them itself. */
    handingOff(deps: Deps): ChainPlace | null {
      const here = place(deps)
      return heldElsewhere && deps.clock.now() >= directUntil ? here : null
    },
    /** The held chain was appended to by another: claim again at the next slot (and hand off again, if this instance holds none). */
    contended(): void {
      claimAt = 0
      directUntil = 0
    },
    /** The holder left a request of this instance untaken: it is idle, and this instance appends directly for a while. */
    holderIdle(deps: Deps): void {
      directUntil = deps.clock.now() + DIRECT_MS
    },
    async release(store: CustodyStore): Promise<void> {
      await claiming
      if (held === null) return
      held = null
      claimAt = 0
      await store.releaseReceiptChains(holder)
    },
  }
}

/** A write's places on the chain, taken from the sequencer. */
export interface ChainSlot {
  /** Settles once the slot's receipts are signed and every earlier slot's transaction has ended. */
  ready(): Promise<void>
  /** In the write's transaction, after ready(): appends the receipts, or signs them again under the lock. */
  append(tx: CustodyStore): Promise<void>
  /** The write's transaction has ended, committed or not; call it exactly once, whatever happened. */
  end(committed: boolean): void
  /**
   * After end(true), before the write answers: settles once its receipts are on the chain (a
   * write handed to the chain's holder waits for it, decision 0073). Never fails: a write that
   * could not see them appended leaves them requested, and answers.
   */
  onChain(): Promise<void>
}

/** Hands out chain slots in order and has them signed one after another (one per process). */
export interface ReceiptSequencer {
  /**
   * `store` reads the head and the key when the slot cannot continue a guess: the write's own
   * transaction when it reserves inside it (another connection of the pool could be one that the
   * transactions waiting on this slot hold), else the storage.
   */
  reserve(deps: Deps, store: CustodyStore, bundle: CustodyBundle): ChainSlot
  /**
   * Before the first write (when the server starts to listen): takes a chain's lease, listens
   * for other instances' receipt requests, and appends those a killed instance left.
   */
  start(deps: Deps): Promise<void>
  /** Stops listening, and gives up this process's chain leases (at close), so that an instance started next takes them at once. */
  release(store: CustodyStore): Promise<void>
}

/** Tells each sequencer of the process its own chains in the shared signer (the tests run many servers in one process). */
let sequencers = 0

/** How long (ms) requests the holder read wait for one of its own slots to carry them before a slot of their own does. */
const CARRY_WAIT_MS = 10

export function createReceiptSequencer(signer: ReceiptSigner = receiptSigner()): ReceiptSequencer {
  const signerChains = sequencers++ * (MAX_RECEIPT_CHAINS + 1)
  const lease = chainLease()
  /** Settles once the slots handed out so far have been handed to the signer, in slot order. */
  let handedOver: Promise<void> = Promise.resolve()
  /** The chain whose signer tip is the current run's guess (null: the next slot starts a run from the database). */
  let guessing: number | null = null
  /** The key of the current run's head. */
  let runKeyId: string | null = null
  /** Settles when every slot handed out so far has ended. */
  let allEnded: Promise<void> = Promise.resolve()
  /** Runs of guesses, each started from the database; a failure in a run ends it. */
  let run = 0
  /** A slot of the holder's that carries only requests is under way. */
  let draining = false

  /**
   * A slot of this process's own on its chain: its write's bundle (none for a slot that only
   * carries requests), then the requests handed to the chain when this process holds it.
   */
  function slot(deps: Deps, store: CustodyStore, own: CustodyBundle | null): ChainSlot {
    const earlierEnded = allEnded
    let markEnded = () => {}
    allEnded = Promise.all([earlierEnded, new Promise<void>((resolve) => (markEnded = resolve))]).then(() => undefined)
    /** The chain's head as the database has it once every earlier slot has ended, and its key. */
    const fromDatabase = async (place: ChainPlace) => {
      await earlierEnded
      const head = await store.receiptChainHead(place.chain)
      if (head.activeKeyId === null) throw new Error('no active attestation key: the server did not finish starting up')
      return { after: head, key: await deps.attestation.signingKey(store, head.activeKeyId) }
    }
    let slotRun: number | null = null
    let place: ChainPlace | undefined
    /** Requests handed to this chain that the slot appends after its own write's receipts. */
    let carried: ReceiptRequest[] = []
    let bundles: readonly CustodyBundle[] = []
    // Handed to the signer in slot order, without waiting for the earlier slots' signatures:
    // the signer's thread continues each from the tip the one before left.
    let signing: Promise<SignedBundle | 'no-tip'> | undefined
    const handed = handedOver.then(async () => {
      const { holding, ...here } = lease.current(deps)
      place = here
      if (holding) {
        handoff.look(deps, here.chain)
        carried = handoff.carry(here.chain)
      }
      bundles = [...(own === null ? [] : [own]), ...carried.map((request) => request.bundle)]
      // A slot of requests that an earlier slot carried first: nothing to sign, no guess made.
      if (bundles.length === 0) return
      const continues = guessing === here.chain && runKeyId !== null
      if (!continues) run += 1
      slotRun = run
      guessing = here.chain
      const start = continues ? { after: null, key: await deps.attestation.signingKey(store, runKeyId!) } : await fromDatabase(here)
      runKeyId = start.key.keyId
      signing = signer.sign({ chain: signerChains + here.chain, place: here, ...start, serverId: deps.config.publicOrigin, bundles, now: deps.clock.now() })
    })
    handedOver = handed.catch(() => {})
    const signed = handed.then(async () => {
      if (signing === undefined) return null
      const answer = await signing
      if (answer !== 'no-tip') return answer
      const start = await fromDatabase(place!)
      const again = await signer.sign({
        chain: signerChains + place!.chain,
        place: place!,
        ...start,
        serverId: deps.config.publicOrigin,
        bundles,
        now: deps.clock.now(),
      })
      if (again === 'no-tip') throw new Error('the receipt signer held no tip after being given the head')
      return again
    })
    const ready = Promise.all([signed, earlierEnded])
    ready.catch(() => {}) // the write that awaits it sees the failure
    let appended = false
    let ended = false
    return {
      ready: async () => void (await ready),
      async append(tx) {
        const answer = await signed
        if (answer === null) return
        const { after, receipts, tip: last } = answer
        if (carried.length > 0) {
          // Taken first, so that the chain's row is locked only once they are this slot's.
          const taken = await tx.takeReceiptRequests(carried.map((request) => request.requestId))
          if (taken.length < carried.length) {
            // Their writers took some back: what was signed is not what this slot appends.
            const still = carried.filter((request) => taken.includes(request.requestId)).map((request) => request.bundle)
            const left = [...(own === null ? [] : [own]), ...still]
            if (left.length > 0) await issueUnderLock(tx, deps, left, place!)
            return
          }
        }
        appended = last.lastReceiptHash !== null && (await tx.appendReceiptsAfter(place!.chain, after, receipts, last.lastReceiptHash))
        if (!appended) {
          lease.contended()
          await issueUnderLock(tx, deps, bundles, place!)
        }
      },
      end(committed) {
        if (ended) return
        ended = true
        handoff.drop(carried)
        // The head is no longer this slot's tip: every later guess of this run is wrong.
        if (!(committed && appended) && slotRun === run) guessing = null
        markEnded()
      },
      onChain: async () => {},
    }
  }

  /** Appends the requests read for the held chain in a transaction of their own (no write of this process came to carry them). */
  async function drain(deps: Deps): Promise<void> {
    draining = true
    let carrying: ChainSlot | undefined
    // As a lifecycle write takes its slot: before the transaction on SQLite (one write
    // connection), inside it on PostgreSQL (see lifecycle.service.ts).
    const take = async (store: CustodyStore) => {
      carrying ??= slot(deps, store, null)
      await carrying.ready()
      return carrying
    }
    try {
      if (deps.storage.engine === 'sqlite') await take(deps.storage)
      await deps.storage.transaction(async (tx) => (await take(tx)).append(tx))
      carrying?.end(true)
    } catch (error) {
      carrying?.end(false)
      deps.log.warn({ err: error }, 'could not append the receipt requests handed to this instance: a later slot takes them')
    } finally {
      draining = false
    }
  }

  /** The process's server has closed: no more slots of requests. */
  let released = false
  const holds = (deps: Deps, chain: number) => {
    if (released) return false
    const here = lease.current(deps)
    return here.holding && here.chain === chain
  }
  const handoff = receiptHandoff({
    holds,
    found(deps, chain) {
      setTimeout(() => {
        if (draining || !handoff.waiting(chain) || !holds(deps, chain)) return
        void drain(deps).then(() => {
          // More came while it ran: the next look (at once) finds them.
          if (handoff.waiting(chain) && holds(deps, chain)) handoff.look(deps, chain, true)
        })
      }, CARRY_WAIT_MS).unref()
    },
  })

  return {
    reserve(deps, store, bundle) {
      const holderOf = lease.handingOff(deps)
      if (holderOf === null) return slot(deps, store, bundle)
      return handoff.handOff(deps, bundle, holderOf, () => {
        // Its append moved the head: the next slot starts from the database, not from a guess it made wrong.
        guessing = null
        lease.holderIdle(deps)
      })
    },
    async start(deps) {
      handoff.listen(deps)
      await lease.start(deps)
      // Requests whose writers' wait is over: a kill left them (a writer still waiting takes its own back).
      await appendOrphanedReceipts(deps, deps.clock.now() - deps.config.receiptHandoffWaitMs).then(
        (adopted) => adopted > 0 && deps.log.info({ requests: adopted }, 'appended the receipts of requests an earlier instance left waiting'),
        // The holder's reads and maintenance take them later.
        (error: unknown) => deps.log.warn({ err: error }, 'could not append the receipt requests an earlier instance left waiting'),
      )
    },
    async release(store) {
      released = true
      await handoff.close()
      await lease.release(store)
    },
  }
}

/** A page of the receipts of an asset the caller may read, numbered after `after` (any other asset answers as unknown). */
export async function assetReceipts(deps: Deps, caller: Caller, assetId: string, page: { readonly after: number; readonly limit: number }): Promise<Receipt[]> {
  const asset = await deps.storage.findAsset(assetId)
  // An asset of an album the caller may read (its own, or shared with it: decision 0067); any other answers as unknown.
  const access = asset === undefined ? undefined : await deps.storage.albumAccess(asset.albumId, caller.userId)
  if (access === undefined) throw new AppError('error.not_found', 'No asset of an album this account may read has that id')
  return deps.storage.listReceipts(assetId, page.after, page.limit)
}

/** A receipt as the wire shows it (GET /v1/assets/{asset_id}/receipts), which is what the SDK verifies. */
export function receiptView(receipt: Receipt): Static<typeof AssetReceipt> {
  return {
    receipt_seq: receipt.receiptSeq,
    server_id: receipt.serverId,
    server_key_id: receipt.serverKeyId,
    ...(receipt.priorReceiptHash === null ? {} : { prior_receipt_hash: receipt.priorReceiptHash }),
    upload_id: receipt.uploadId,
    blob_role: receipt.blobRole,
    ciphertext_hash: receipt.ciphertextHash,
    size: receipt.size,
    ...(receipt.envelopeHash === null ? {} : { envelope_hash: receipt.envelopeHash }),
    received_at: timestamp(receipt.receivedAt),
    receipt_cbor: receipt.receiptCbor.toString('base64'),
  }
}
