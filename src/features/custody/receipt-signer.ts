// The receipt signer: a worker thread that signs the sequencer's slots (receipts.ts), one after
// another, each over the tip the previous one left (decision 0035). The chain's signatures are
// the one sequential thing in a lifecycle write; on the server's event loop each of them waited
// for whatever ran there (a commit, a JSON body, another request), and on the libuv pool behind
// file writes and their fsyncs. On a thread of its own the chain moves at the speed of the
// signatures alone. One worker per process, shared by every sequencer in it (a chain each: the
// tests run many servers in one process); started at the first slot, it never keeps the process alive.
import { Worker } from 'node:worker_threads'
import type { HybridPrivateKey } from '../../crypto/hybrid.ts'
import type { ChainTip } from '../../storage/port/custody.ts'
import type { SigningKey } from './attestation.ts'
import type { ChainPlace, CustodyBundle, SignedBundle } from './receipt-bundle.ts'

/** A slot to sign, as the worker receives it. */
export interface SignRequest {
  readonly id: number
  /** The sequencer and chain whose tip this continues. */
  readonly chain: number
  /** Where on the server's chains the receipts go (numbers them). */
  readonly place: ChainPlace
  /** The head to continue; null: the tip this chain's previous request left in the worker. */
  readonly after: ChainTip | null
  /** A key the worker does not hold yet (it keeps each by its id). */
  readonly key: { readonly keyId: string; readonly privateKey: HybridPrivateKey } | null
  readonly serverId: string
  /** Signed in order: the slot's write's, then those handed to this chain's holder. */
  readonly bundles: readonly CustodyBundle[]
  readonly now: number
}

/** `no-tip`: the worker holds no tip for the chain (it was restarted, or a signature failed): ask again with the head. */
export type SignReply =
  | { readonly id: number; readonly kind: 'signed'; readonly signed: SignedBundle }
  | { readonly id: number; readonly kind: 'no-tip' }
  | { readonly id: number; readonly kind: 'failed'; readonly message: string }

export interface SlotToSign {
  /** The sequencer and chain whose tip this continues. */
  readonly chain: number
  readonly place: ChainPlace
  readonly after: ChainTip | null
  /** The key of the chain's head (the one `after` names, or the previous request's). */
  readonly key: SigningKey
  readonly serverId: string
  /** Signed in order: the slot's write's, then those handed to this chain's holder. */
  readonly bundles: readonly CustodyBundle[]
  readonly now: number
}

export interface ReceiptSigner {
  /** The slot's receipts, or 'no-tip' when `after` was null and the worker had no tip to continue. */
  sign(slot: SlotToSign): Promise<SignedBundle | 'no-tip'>
  /**
   * Ends the thread as a crash would: the slots it was signing fail, its tips and keys are gone,
   * and the next slot starts another thread (tests use it for that fault).
   */
  stop(): Promise<void>
}

interface Waiting {
  readonly resolve: (reply: SignReply) => void
  readonly reject: (error: Error) => void
}

/** A receipt_cbor came back as a Uint8Array (structured clone): a Buffer over the same bytes, as storage expects. */
function withBuffers(signed: SignedBundle): SignedBundle {
  return {
    ...signed,
    receipts: signed.receipts.map((receipt) => ({
      ...receipt,
      receiptCbor: Buffer.from(receipt.receiptCbor.buffer, receipt.receiptCbor.byteOffset, receipt.receiptCbor.byteLength),
    })),
  }
}

function workerSigner(): ReceiptSigner {
  let worker: Worker | null = null
  /** The keys sent to the current worker. */
  let sent = new Set<string>()
  const waiting = new Map<number, Waiting>()
  let nextId = 0

  const stopped = (error: Error): void => {
    worker = null
    sent = new Set()
    for (const wait of waiting.values()) wait.reject(error)
    waiting.clear()
  }

  function started(): Worker {
    if (worker !== null) return worker
    const thread = new Worker(new URL('./receipt-signer.worker.ts', import.meta.url), { name: 'receipt-signer' })
    thread.on('message', (reply: SignReply) => {
      const wait = waiting.get(reply.id)
      waiting.delete(reply.id)
      wait?.resolve(reply)
    })
    thread.on('error', (error) => {
      if (worker === thread) stopped(error)
    })
    thread.on('exit', (code) => {
      if (worker === thread) stopped(new Error(`the receipt signer's thread exited (code ${code})`))
    })
    // After the listeners: a 'message' listener added to an unreferenced worker references it again.
    thread.unref()
    worker = thread
    return thread
  }

  return {
    async sign(slot) {
      const thread = started()
      const id = nextId++
      const key = sent.has(slot.key.keyId) ? null : { keyId: slot.key.keyId, privateKey: slot.key.privateKey }
      sent.add(slot.key.keyId)
      const reply = await new Promise<SignReply>((resolve, reject) => {
        waiting.set(id, { resolve, reject })
        thread.postMessage({
          id,
          chain: slot.chain,
          place: slot.place,
          after: slot.after,
          key,
          serverId: slot.serverId,
          bundles: slot.bundles,
          now: slot.now,
        } satisfies SignRequest)
      })
      if (reply.kind === 'failed') throw new Error(`signing custody receipts failed: ${reply.message}`)
      return reply.kind === 'no-tip' ? 'no-tip' : withBuffers(reply.signed)
    },

    async stop() {
      const thread = worker
      if (thread === null) return
      stopped(new Error("the receipt signer's thread was stopped"))
      await thread.terminate()
    },
  }
}

let shared: ReceiptSigner | null = null

/** The process's receipt signer. */
export function receiptSigner(): ReceiptSigner {
  shared ??= workerSigner()
  return shared
}
