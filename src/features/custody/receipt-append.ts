// Appending receipts under the chain's lock: the fallback of a slot whose guess of the head was
// wrong (receipts.ts), and how a request nobody else took is appended by its writer or by
// maintenance (receipt-handoff.ts). The lock is held while signing: slow, always correct.
import { hybridSign } from '../../crypto/hybrid.ts'
import type { Deps } from '../../deps.ts'
import type { ChainTip, CustodyStore, ReceiptRequest } from '../../storage/port/custody.ts'
import { signBundles, type ChainPlace, type CustodyBundle, type SignedBundle } from './receipt-bundle.ts'

/** Signs over `after` on chain `place`, on this thread's pool, with the key it names. */
async function signHere(deps: Deps, store: CustodyStore, bundles: readonly CustodyBundle[], after: ChainTip, place: ChainPlace): Promise<SignedBundle> {
  if (after.activeKeyId === null) throw new Error('no active attestation key: the server did not finish starting up')
  const key = await deps.attestation.signingKey(store, after.activeKeyId)
  return signBundles((message) => hybridSign(key.privateKey, message), deps.config.publicOrigin, bundles, after, place, deps.clock.now())
}

/** Locks the chain's head, signs the bundles over it, appends (the lock is held while signing). */
export async function issueUnderLock(tx: CustodyStore, deps: Deps, bundles: readonly CustodyBundle[], place: ChainPlace): Promise<void> {
  await tx.lockReceiptChain(place.chain)
  const signed = await signHere(deps, tx, bundles, await tx.receiptChainHead(place.chain), place)
  if (signed.tip.lastReceiptHash !== null) await tx.appendReceipts(place.chain, signed.receipts, signed.tip.lastReceiptHash)
}

/**
 * Takes a receipt request and appends its receipts under the lock, in one transaction; false
 * when it was no longer waiting (another transaction took it and appended them).
 */
export async function appendRequestHere(deps: Deps, request: Pick<ReceiptRequest, 'requestId' | 'bundle' | 'chain'>): Promise<boolean> {
  return deps.storage.transaction(async (tx) => {
    if ((await tx.takeReceiptRequests([request.requestId])).length === 0) return false
    await issueUnderLock(tx, deps, [request.bundle], { chain: request.chain, chains: deps.config.receiptChains })
    return true
  })
}
