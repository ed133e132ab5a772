// Bundles' custody receipts signed one after another over a chain head (API.md section 7):
// what the receipt signer's worker thread does for the sequencer's slots, and what the fallback
// does under the chain lock. Plain code with no access to the database or the process's state,
// so that it runs on either thread.
import { createHash } from 'node:crypto'
import { timestamp } from '../../contract/common.ts'
import { encodeReceiptBody, encodeSignedReceipt, nextReceiptSeq, receiptSigningBytes } from '../../contract/signing.ts'
import type { ChainTip, CustodyBundle, Receipt } from '../../storage/port/custody.ts'

export type { CustodyBundle } from '../../storage/port/custody.ts'

export interface SignedBundle {
  /** The head the receipts continue. */
  readonly after: ChainTip
  readonly receipts: Receipt[]
  /** The head once they are appended. */
  readonly tip: ChainTip
}

/** Which chain receipts go on, of how many (decision 0072): it numbers them. */
export interface ChainPlace {
  readonly chain: number
  readonly chains: number
}

const ROLE_ORDER = { original: 0, derivative: 1, metadata: 2, provenance: 3 } as const

/**
 * Signs the bundles' receipts one after another, in order, continuing `after` on the chain `place`
 * names, with the key `after` names (`sign` makes its hybrid signature). received_at is `now`, or
 * the last receipt's time if `now` is behind it: it never goes backwards along the chain.
 */
export async function signBundles(
  sign: (message: Uint8Array) => Buffer | Promise<Buffer>,
  serverId: string,
  bundles: readonly CustodyBundle[],
  after: ChainTip,
  place: ChainPlace,
  now: number,
): Promise<SignedBundle> {
  const keyId = after.activeKeyId
  if (keyId === null) throw new Error('no active attestation key: the server did not finish starting up')
  const receivedAt = Math.max(now, after.lastReceivedAt ?? 0)
  const receipts: Receipt[] = []
  let prior = after.lastReceiptHash
  let seq = after.lastSeq
  for (const bundle of bundles) {
    for (const blob of [...bundle.blobs].sort((a, b) => ROLE_ORDER[a.role] - ROLE_ORDER[b.role])) {
      seq = nextReceiptSeq(seq, place.chain, place.chains)
      const envelopeHash = blob.role === 'provenance' ? bundle.envelopeHash : null
      const body = encodeReceiptBody({
        receipt_seq: seq,
        server_id: serverId,
        server_key_id: keyId,
        prior_receipt_hash: prior,
        upload_id: bundle.uploadId,
        asset_id: bundle.assetId,
        blob_role: blob.role,
        ciphertext_hash: blob.hash,
        size: blob.size,
        envelope_hash: envelopeHash,
        received_at: timestamp(receivedAt),
      })
      const receiptCbor = Buffer.from(encodeSignedReceipt(body, await sign(receiptSigningBytes(body))))
      receipts.push({
        receiptSeq: seq,
        serverId,
        assetId: bundle.assetId,
        uploadId: bundle.uploadId,
        blobRole: blob.role,
        ciphertextHash: blob.hash,
        size: blob.size,
        envelopeHash,
        receivedAt,
        serverKeyId: keyId,
        priorReceiptHash: prior,
        receiptCbor,
      })
      prior = createHash('sha256').update(receiptCbor).digest('hex')
    }
  }
  return { after, receipts, tip: { lastSeq: seq, lastReceiptHash: prior, activeKeyId: keyId, lastReceivedAt: receivedAt } }
}
