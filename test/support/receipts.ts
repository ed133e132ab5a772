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
  expect(keys.receipt_chains).toBeUndefined()
  return (await expectReceiptChains(receipts, count, keys))[0]!
}

/**
 * The receipts form the server's chains (keys.receipt_chains, else one; decision 0072), `count`
 * receipts in all: chain c holds c, c + chains, c + 2 * chains... each exactly once (no gap, no
 * fork), its first naming no predecessor and every other the hash of the one before it on the
 * chain, `received_at` never going backwards along it; and the SDK's own check passing over all
 * of them. Answers each chain's line, chain 1 first.
 */
export async function expectReceiptChains(receipts: readonly ReceiptView[], count: number, keys: AttestationKeys): Promise<ReceiptView[][]> {
  const chains = keys.receipt_chains ?? 1
  const all = [...receipts].sort((a, b) => a.receipt_seq - b.receipt_seq)
  expect(all).toHaveLength(count)
  const lines = Array.from({ length: chains }, (_, i) => all.filter((r) => (r.receipt_seq - 1) % chains === i))
  for (const [i, line] of lines.entries()) {
    expect(
      line.map((r) => r.receipt_seq),
      `chain ${i + 1}`,
    ).toEqual(line.map((_, n) => n * chains + i + 1))
    for (const [n, receipt] of line.entries()) {
      if (n === 0) expect(receipt.prior_receipt_hash).toBeUndefined()
      else expect(receipt.prior_receipt_hash, `receipt ${receipt.receipt_seq}`).toBe(receiptHash(line[n - 1]!))
    }
    const times = line.map((r) => Date.parse(r.received_at))
    expect(times).toEqual([...times].sort((a, b) => a - b))
  }
  expect(await verifyReceipts(all, keys)).toEqual({ valid: true, problems: [] })
  return lines
}
