// The exact bytes that clients sign, shared by the server (to verify) and the SDK (to sign).
import { encodeCanonical } from '../codec/cbor.ts'

export const REVOKE_ALL_CONTEXT = 'coffer/revoke-all/v1'

/** Canonical CBOR (RFC 8949 4.2.1) of {"context": "coffer/revoke-all/v1", "user_id", "challenge"}. */
export function revokeAllSigningBytes(userId: string, challenge: string): Uint8Array {
  return encodeCanonical({ context: REVOKE_ALL_CONTEXT, user_id: userId, challenge })
}

export const CUSTODY_RECEIPT_CONTEXT = 'coffer/custody-receipt/v1'

/** What an attestation key signs: UTF-8 of the context, one zero byte, the receipt body. */
export function receiptSigningBytes(body: Uint8Array): Uint8Array {
  return Buffer.concat([Buffer.from(CUSTODY_RECEIPT_CONTEXT, 'utf8'), Buffer.of(0), body])
}

export interface ReceiptBody {
  readonly receipt_seq: number
  readonly server_id: string
  readonly server_key_id: string
  readonly prior_receipt_hash: string | null
  readonly upload_id: string
  readonly asset_id: string
  readonly blob_role: 'original' | 'derivative' | 'metadata' | 'provenance'
  readonly ciphertext_hash: string
  readonly size: number
  readonly envelope_hash: string | null
  readonly received_at: string
}

/** The receipt body as canonical CBOR (API.md section 7). */
export function encodeReceiptBody(body: ReceiptBody): Uint8Array {
  return encodeCanonical(body)
}

/** `receipt_cbor`: the canonical CBOR map {"body": <body bytes>, "sig": <hybrid signature>}. */
export function encodeSignedReceipt(body: Uint8Array, signature: Uint8Array): Uint8Array {
  return encodeCanonical({ body, sig: signature })
}
