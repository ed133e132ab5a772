// Custody receipts (API.md section 7): one per blob of a bundle, issued inside the lifecycle
// write's transaction, chained across the whole server. The chain lock is taken last in that
// transaction and held for exactly this: read the head, sign each receipt over the previous
// one's hash, append.
import { createHash } from 'node:crypto'
import type { Static } from 'typebox'
import type { AssetReceipt } from '../../contract/custody.ts'
import { timestamp } from '../../contract/common.ts'
import { encodeReceiptBody, encodeSignedReceipt, receiptSigningBytes } from '../../contract/signing.ts'
import { hybridSign } from '../../crypto/hybrid.ts'
import type { Deps } from '../../deps.ts'
import { AppError } from '../../errors.ts'
import type { AssetBlobRef, Receipt, Store } from '../../storage/port.ts'
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

export async function issueReceipts(tx: Store, deps: Deps, bundle: CustodyBundle): Promise<void> {
  const head = await tx.lockReceiptChain()
  // The clock at the finalization commit (SPEC.md), read under the chain lock: it never goes
  // backwards along the chain, whatever order racing writes began in.
  const receivedAt = deps.clock.now()
  if (head.activeKeyId === null) throw new Error('no active attestation key: the server did not finish starting up')
  const key = await deps.attestation.signingKey(tx, head.activeKeyId)
  const ordered = [...bundle.blobs].sort((a, b) => ROLE_ORDER[a.role] - ROLE_ORDER[b.role])
  const receipts: Receipt[] = []
  let prior = head.lastReceiptHash
  let seq = head.lastSeq
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
  if (prior !== null) await tx.appendReceipts(receipts, prior)
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
