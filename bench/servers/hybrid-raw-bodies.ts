// Custody receipt bodies shaped as the server issues them, for the raw signing ceilings
// (hybrid-raw.ts and its chain threads).
import { randomBytes, randomUUID } from 'node:crypto'
import { timestamp } from '../../src/contract/common.ts'
import { encodeReceiptBody } from '../../src/contract/signing.ts'

/** The body of a custody receipt like those the server issues (API.md section 7). */
export function receiptBody(seq: number, priorReceiptHash: string): Uint8Array {
  return encodeReceiptBody({
    receipt_seq: seq,
    server_id: 'http://127.0.0.1:8080',
    server_key_id: randomBytes(32).toString('hex'),
    prior_receipt_hash: priorReceiptHash,
    upload_id: randomUUID(),
    asset_id: randomUUID(),
    blob_role: 'derivative',
    ciphertext_hash: randomBytes(32).toString('hex'),
    size: 2048,
    envelope_hash: null,
    received_at: timestamp(Date.now()),
  })
}
