// Client-side checking of custody receipts: each signature under the key the receipt names
// (from the attestation-keys document), the JSON reading equal to the signed CBOR body, and
// the chain links between consecutive receipts.
import { decode } from 'cborg'
import type { Static } from 'typebox'
import type { AssetReceipt, AttestationKeysDocument } from '../contract/custody.ts'
import { encodeCanonical } from '../codec/cbor.ts'
import { receiptSigningBytes } from '../contract/signing.ts'
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
  let previous: { seq: number; hash: string } | null = null
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
    // The chain starts at 1 with nothing before it; every later receipt names its predecessor.
    if ((receipt.receipt_seq === 1) !== (receipt.prior_receipt_hash === undefined)) {
      problems.push(`${at}: ${receipt.receipt_seq === 1 ? 'the first receipt names a predecessor' : 'only the first receipt may lack prior_receipt_hash'}`)
    }
    if (previous !== null) {
      if (receipt.receipt_seq <= previous.seq) problems.push(`${at}: not after receipt ${previous.seq}`)
      if (receipt.receipt_seq === previous.seq + 1 && receipt.prior_receipt_hash !== previous.hash)
        problems.push(`${at}: prior_receipt_hash does not link to receipt ${previous.seq}`)
    }
    previous = { seq: receipt.receipt_seq, hash: sha256Hex(bytes) }
  }
  return { valid: problems.length === 0, problems }
}
