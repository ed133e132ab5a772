// Custody receipts (API.md section 7): one per blob of a bundle, issued inside the lifecycle
// write's transaction, chained across the whole server. Each receipt is signed over the hash of
// the previous signed one, so signatures are sequential; nothing else is (decision 0023). The
// process's chain sequencer signs each write's receipts ahead of its transaction, over its guess
// of the head; the transaction appends them only if the database's head is still that guess, and
// otherwise signs them again under the chain lock. The guess is never trusted: a wrong one costs
// signatures, never a fork, and nothing signed but unstored is referenced by a stored receipt.
import { createHash } from 'node:crypto'
import type { Static } from 'typebox'
import type { AssetReceipt } from '../../contract/custody.ts'
import { timestamp } from '../../contract/common.ts'
import { encodeReceiptBody, encodeSignedReceipt, receiptSigningBytes } from '../../contract/signing.ts'
import { hybridSign } from '../../crypto/hybrid.ts'
import type { Deps } from '../../deps.ts'
import { AppError } from '../../errors.ts'
import type { AssetBlobRef, ChainHead, ChainTip, Receipt, Store } from '../../storage/port.ts'
import type { Caller } from '../context.ts'

export interface CustodyBundle {
  readonly assetId: string
  readonly uploadId: string
  /** In receipt order: original, derivatives, metadata, provenance. */
  readonly blobs: readonly AssetBlobRef[]
  /** SHA-256 of the signed manifest; carried by the provenance receipt. */
  readonly envelopeHash: string
}

const ROLE_ORDER = { original: 0, derivative: 1, metadata: 2, provenance: 3 } as const

interface SignedBundle {
  /** The head the receipts continue. */
  readonly after: ChainHead
  readonly receipts: Receipt[]
  /** The head once they are appended. */
  readonly tip: ChainTip
}

/**
 * Signs a bundle's receipts one after another, continuing `after`. received_at is the clock
 * now, or the last receipt's time if the clock is behind it: it never goes backwards along the chain.
 */
async function signBundle(deps: Deps, store: Store, bundle: CustodyBundle, after: ChainTip): Promise<SignedBundle> {
  if (after.activeKeyId === null) throw new Error('no active attestation key: the server did not finish starting up')
  const key = await deps.attestation.signingKey(store, after.activeKeyId)
  const receivedAt = Math.max(deps.clock.now(), after.lastReceivedAt ?? 0)
  const ordered = [...bundle.blobs].sort((a, b) => ROLE_ORDER[a.role] - ROLE_ORDER[b.role])
  const receipts: Receipt[] = []
  let prior = after.lastReceiptHash
  let seq = after.lastSeq
  for (const blob of ordered) {
    seq += 1
    const envelopeHash = blob.role === 'provenance' ? bundle.envelopeHash : null
    const body = encodeReceiptBody({
      receipt_seq: seq,
      server_id: deps.config.publicOrigin,
      server_key_id: key.keyId,
      prior_receipt_hash: prior,
      upload_id: bundle.uploadId,
      asset_id: bundle.assetId,
      blob_role: blob.role,
      ciphertext_hash: blob.hash,
      size: blob.size,
      envelope_hash: envelopeHash,
      received_at: timestamp(receivedAt),
    })
    const receiptCbor = Buffer.from(encodeSignedReceipt(body, await hybridSign(key.privateKey, receiptSigningBytes(body))))
    receipts.push({
      receiptSeq: seq,
      serverId: deps.config.publicOrigin,
      assetId: bundle.assetId,
      uploadId: bundle.uploadId,
      blobRole: blob.role,
      ciphertextHash: blob.hash,
      size: blob.size,
      envelopeHash,
      receivedAt,
      serverKeyId: key.keyId,
      priorReceiptHash: prior,
      receiptCbor,
    })
    prior = createHash('sha256').update(receiptCbor).digest('hex')
  }
  return { after, receipts, tip: { lastSeq: seq, lastReceiptHash: prior, activeKeyId: after.activeKeyId, lastReceivedAt: receivedAt } }
}

/** Today's path and the fallback: lock the head, sign over it, append (the lock is held while signing). */
async function issueUnderLock(tx: Store, deps: Deps, bundle: CustodyBundle): Promise<void> {
  await tx.lockReceiptChain()
  const signed = await signBundle(deps, tx, bundle, await tx.receiptChainHead())
  if (signed.tip.lastReceiptHash !== null) await tx.appendReceipts(signed.receipts, signed.tip.lastReceiptHash)
}

/** A write's places on the chain, taken from the sequencer. */
export interface ChainSlot {
  /** Settles once the slot's receipts are signed and every earlier slot's transaction has ended. */
  ready(): Promise<void>
  /** In the write's transaction, after ready(): appends the receipts, or signs them again under the lock. */
  append(tx: Store): Promise<void>
  /** The write's transaction has ended, committed or not; call it exactly once, whatever happened. */
  end(committed: boolean): void
}

/** Hands out chain slots in order and signs them one after another (one per process). */
export interface ReceiptSequencer {
  /**
   * `store` reads the head and the key when the slot cannot continue a guess: the write's own
   * transaction when it reserves inside it (another connection of the pool could be one that the
   * transactions waiting on this slot hold), else the storage.
   */
  reserve(deps: Deps, store: Store, bundle: CustodyBundle): ChainSlot
}

export function createReceiptSequencer(): ReceiptSequencer {
  /** The head after the last slot handed out, as signed; null: read it from the database. */
  let tip: Promise<ChainTip | null> = Promise.resolve(null)
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
      // After a failure the head is read once the slots signed over the failed guess have all ended.
      const signed = tip.then(async (guess) => signBundle(deps, store, bundle, guess ?? (await earlierEnded, await store.receiptChainHead())))
      tip = signed.then((done) => done.tip, () => null)
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
            tip = Promise.resolve(null)
          }
          markEnded()
        },
      }
    },
  }
}

/** Every receipt of an asset of the caller (another account's asset answers as unknown). */
export async function assetReceipts(deps: Deps, caller: Caller, assetId: string): Promise<Receipt[]> {
  const asset = await deps.storage.findAsset(assetId)
  if (asset === undefined || asset.ownerId !== caller.userId) throw new AppError('error.not_found', 'No asset of this account has that id')
  return deps.storage.listReceipts(assetId)
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
