// Client-side checking of custody receipts: each signature under the key the receipt names
// (from the attestation-keys document), the JSON reading equal to the signed CBOR body, and
// the chain links between receipts that follow each other on a chain (with several chains,
// receipt_seq says which: decision 0072).
import { decode } from 'cborg'
import type { Static } from 'typebox'
import type { AssetReceipt, AttestationKeysDocument } from '../contract/custody.ts'
import { encodeCanonical } from '../codec/cbor.ts'
import { priorReceiptSeq, receiptSigningBytes } from '../contract/signing.ts'
import { equalBytes, fromBase64, sha256Hex } from './bytes.ts'
import { hybridVerify, type HybridVerifier } from './hybrid.ts'

export type ReceiptView = Static<typeof AssetReceipt>
export type KeysDocument = Static<typeof AttestationKeysDocument>

export interface ReceiptCheck {
  readonly valid: boolean
  /** One line per failed check, naming the receipt_seq. */
  readonly problems: readonly string[]
}

const BODY_FIELDS = [
  'receipt_seq',
  'server_id',
  'server_key_id',
  'prior_receipt_hash',
  'upload_id',
  'blob_role',
  'ciphertext_hash',
  'size',
  'envelope_hash',
  'received_at',
] as const

function decodeReceipt(receiptCbor: Uint8Array): { body: Uint8Array; sig: Uint8Array; fields: Record<string, unknown> } | null {
  try {
    const outer = decode(receiptCbor) as { body?: unknown; sig?: unknown }
    if (!(outer.body instanceof Uint8Array) || !(outer.sig instanceof Uint8Array)) return null
    const fields = decode(outer.body) as Record<string, unknown>
    // Canonical form only: the same content has exactly one encoding.
    if (!equalBytes(encodeCanonical({ body: outer.body, sig: outer.sig }), receiptCbor)) return null
    if (!equalBytes(encodeCanonical(fields), outer.body)) return null
    return { body: outer.body, sig: outer.sig, fields }
  } catch {
    return null
  }
}

/** Base64 from the server; anything else reads as no bytes (and then fails its checks). */
function decodeBase64(text: string): Uint8Array {
  try {
    return fromBase64(text)
  } catch {
    return new Uint8Array()
  }
}

/**
 * Checks an asset's receipts (as served by GET /v1/assets/{asset_id}/receipts) against the
 * server's attestation-keys document. `assetId`, when given, must be the one every body names.
 */
export async function verifyReceipts(
  receipts: readonly ReceiptView[],
  keys: KeysDocument,
  assetId?: string,
  verify: HybridVerifier = hybridVerify,
): Promise<ReceiptCheck> {
  const problems: string[] = []
  const publicKeys = new Map(keys.keys.map((key) => [key.key_id, decodeBase64(key.public_key)]))
  const chains = keys.receipt_chains ?? 1
  /** The hash of each receipt checked so far, by number: a later one on its chain must link to it. */
  const hashes = new Map<number, string>()
  let previousSeq: number | null = null
  for (const receipt of receipts) {
    const at = `receipt ${receipt.receipt_seq}`
    const bytes = decodeBase64(receipt.receipt_cbor)
    const decoded = decodeReceipt(bytes)
    if (decoded === null) {
      problems.push(`${at}: receipt_cbor is not the canonical CBOR map {body, sig}`)
    } else {
      const publicKey = publicKeys.get(receipt.server_key_id)
      if (publicKey === undefined) problems.push(`${at}: key ${receipt.server_key_id} is not in the attestation-keys document`)
      else if (!(await verify(publicKey, receiptSigningBytes(decoded.body), decoded.sig))) problems.push(`${at}: the signature does not verify`)
      for (const field of BODY_FIELDS) {
        const signed = decoded.fields[field] ?? null
        const read = (receipt as Record<string, unknown>)[field] ?? null
        if (signed !== read) problems.push(`${at}: ${field} reads ${JSON.stringify(read)}, the signed body says ${JSON.stringify(signed)}`)
      }
      if (assetId !== undefined && decoded.fields.asset_id !== assetId) problems.push(`${at}: the signed body names asset ${String(decoded.fields.asset_id)}`)
      if (decoded.fields.server_id !== keys.server_id) problems.push(`${at}: issued by ${String(decoded.fields.server_id)}, the keys are ${keys.server_id}'s`)
    }
    // Each chain starts with nothing before it (receipt 1 on a one-chain server); every later
    // receipt names its predecessor on its chain, which is checked when it is among these.
    const prior = priorReceiptSeq(receipt.receipt_seq, chains)
    const first = chains === 1 ? 'the first receipt' : 'the first receipt of its chain'
    if ((prior === null) !== (receipt.prior_receipt_hash === undefined)) {
      problems.push(`${at}: ${prior === null ? `${first} names a predecessor` : `only ${first} may lack prior_receipt_hash`}`)
    }
    if (previousSeq !== null && receipt.receipt_seq <= previousSeq) problems.push(`${at}: not after receipt ${previousSeq}`)
    const priorHash = prior === null ? undefined : hashes.get(prior)
    if (priorHash !== undefined && receipt.prior_receipt_hash !== priorHash) problems.push(`${at}: prior_receipt_hash does not link to receipt ${prior}`)
    hashes.set(receipt.receipt_seq, sha256Hex(bytes))
    previousSeq = receipt.receipt_seq
  }
  return { valid: problems.length === 0, problems }
}
