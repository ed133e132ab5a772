// Custody receipts (API.md section 7): one per blob of a bundle, issued inside the lifecycle
// write's transaction, chained across the whole server. Each receipt is signed over the hash of
// the previous signed one, so signatures are sequential; nothing else is (decision 0023). The
// process's chain sequencer has each write's receipts signed ahead of its transaction, over its
// guess of the head, by the receipt signer's thread (decision 0035); the transaction appends them
// only if the database's head is still that guess, and otherwise signs them again under the chain
// lock. The guess is never trusted: a wrong one costs signatures, never a fork, and nothing
// signed but unstored is referenced by a stored receipt.
import type { Static } from 'typebox'
import type { AssetReceipt } from '../../contract/custody.ts'
import { timestamp } from '../../contract/common.ts'
import { hybridSign } from '../../crypto/hybrid.ts'
import type { Deps } from '../../deps.ts'
import { AppError } from '../../errors.ts'
import type { ChainTip, CustodyStore, Receipt } from '../../storage/port/custody.ts'
import type { Caller } from '../context.ts'
import { signBundle, type CustodyBundle, type SignedBundle } from './receipt-bundle.ts'
import { receiptSigner, type ReceiptSigner } from './receipt-signer.ts'

export type { CustodyBundle } from './receipt-bundle.ts'

/** Signs over `after` on this thread's pool, with the key it names. */
async function signHere(deps: Deps, store: CustodyStore, bundle: CustodyBundle, after: ChainTip): Promise<SignedBundle> {
  if (after.activeKeyId === null) throw new Error('no active attestation key: the server did not finish starting up')
  const key = await deps.attestation.signingKey(store, after.activeKeyId)
  return signBundle((message) => hybridSign(key.privateKey, message), deps.config.publicOrigin, bundle, after, deps.clock.now())
}

/** The fallback: lock the head, sign over it, append (the lock is held while signing). */
async function issueUnderLock(tx: CustodyStore, deps: Deps, bundle: CustodyBundle): Promise<void> {
  await tx.lockReceiptChain()
  const signed = await signHere(deps, tx, bundle, await tx.receiptChainHead())
  if (signed.tip.lastReceiptHash !== null) await tx.appendReceipts(signed.receipts, signed.tip.lastReceiptHash)
}

/** A write's places on the chain, taken from the sequencer. */
export interface ChainSlot {
  /** Settles once the slot's receipts are signed and every earlier slot's transaction has ended. */
  ready(): Promise<void>
  /** In the write's transaction, after ready(): appends the receipts, or signs them again under the lock. */
  append(tx: CustodyStore): Promise<void>
  /** The write's transaction has ended, committed or not; call it exactly once, whatever happened. */
  end(committed: boolean): void
}

/** Hands out chain slots in order and has them signed one after another (one per process). */
export interface ReceiptSequencer {
  /**
   * `store` reads the head and the key when the slot cannot continue a guess: the write's own
   * transaction when it reserves inside it (another connection of the pool could be one that the
   * transactions waiting on this slot hold), else the storage.
   */
  reserve(deps: Deps, store: CustodyStore, bundle: CustodyBundle): ChainSlot
}

/** Tells each sequencer of the process its own chain in the shared signer. */
let chains = 0

export function createReceiptSequencer(signer: ReceiptSigner = receiptSigner()): ReceiptSequencer {
  const chain = chains++
  /** Settles once the slots handed out so far have been handed to the signer, in slot order. */
  let handedOver: Promise<void> = Promise.resolve()
  /** Whether the signer's tip for this chain is the current run's guess (false: the next slot starts a run from the database). */
  let guessing = false
  /** The key of the current run's head. */
  let runKeyId: string | null = null
  /** Settles when every slot handed out so far has ended. */
  let allEnded: Promise<void> = Promise.resolve()
  /** Slots signed over one run of guesses; a failure in a run starts a new one from the database. */
  let run = 0
  return {
    reserve(deps, store, bundle) {
      const slotRun = run
      const earlierEnded = allEnded
      let markEnded = () => {}
      allEnded = Promise.all([earlierEnded, new Promise<void>((resolve) => (markEnded = resolve))]).then(() => undefined)
      const continues = guessing
      guessing = true
      /** The head as the database has it once every earlier slot has ended, and its key. */
      const fromDatabase = async () => {
        await earlierEnded
        const head = await store.receiptChainHead()
        if (head.activeKeyId === null) throw new Error('no active attestation key: the server did not finish starting up')
        return { after: head, key: await deps.attestation.signingKey(store, head.activeKeyId) }
      }
      // Handed to the signer in slot order, without waiting for the earlier slots' signatures:
      // the signer's thread continues each from the tip the one before left.
      let signing: Promise<SignedBundle | 'no-tip'> | undefined
      const handed = handedOver.then(async () => {
        const start = continues && runKeyId !== null ? { after: null, key: await deps.attestation.signingKey(store, runKeyId) } : await fromDatabase()
        runKeyId = start.key.keyId
        signing = signer.sign({ chain, ...start, serverId: deps.config.publicOrigin, bundle, now: deps.clock.now() })
      })
      handedOver = handed.catch(() => {})
      const signed = handed.then(async () => {
        const answer = await signing!
        if (answer !== 'no-tip') return answer
        const start = await fromDatabase()
        const again = await signer.sign({ chain, ...start, serverId: deps.config.publicOrigin, bundle, now: deps.clock.now() })
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
          const { after, receipts, tip: last } = await signed
          appended = last.lastReceiptHash !== null && (await tx.appendReceiptsAfter(after, receipts, last.lastReceiptHash))
          if (!appended) await issueUnderLock(tx, deps, bundle)
        },
        end(committed) {
          if (ended) return
          ended = true
          // The head is no longer this slot's tip: every later guess of this run is wrong.
          if (!(committed && appended) && slotRun === run) {
            run += 1
            guessing = false
          }
          markEnded()
        },
      }
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
