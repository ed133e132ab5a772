// What the custody-receipt chain must be, checked from outside over everything a test wrote.
import { expect } from 'vitest'
import { sha256Hex, type AttestationKeys } from '../../src/sdk/client.ts'
import { verifyReceipts, type ReceiptView } from '../../src/sdk/receipts.ts'

const receiptHash = (receipt: ReceiptView) => sha256Hex(Buffer.from(receipt.receipt_cbor, 'base64'))

/**
 * The receipts form one line: receipt_seq 1..`count` each exactly once (no gap, no fork), each
 * naming the hash of the one before, `received_at` never going backwards, and the SDK's own check
 * (signatures, JSON = signed body, links) passing over the whole line. Answers the line.
 */
export async function expectOneReceiptLine(receipts: readonly ReceiptView[], count: number, keys: AttestationKeys): Promise<ReceiptView[]> {
  const line = [...receipts].sort((a, b) => a.receipt_seq - b.receipt_seq)
  expect(line.map((r) => r.receipt_seq)).toEqual(Array.from({ length: count }, (_, i) => i + 1))
  for (const [i, receipt] of line.entries()) {
    if (i === 0) expect(receipt.prior_receipt_hash).toBeUndefined()
    else expect(receipt.prior_receipt_hash, `receipt ${receipt.receipt_seq}`).toBe(receiptHash(line[i - 1]!))
  }
  const times = line.map((r) => Date.parse(r.received_at))
  expect(times).toEqual([...times].sort((a, b) => a - b))
  expect(await verifyReceipts(line, keys)).toEqual({ valid: true, problems: [] })
  return line
}
