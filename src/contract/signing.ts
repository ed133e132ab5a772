// The exact bytes that clients sign, shared by the server (to verify) and the SDK (to sign),
// and the hybrid key and signature layout (API.md section 4). Runs in browsers too: no Buffer.
import { encodeCanonical } from '../codec/cbor.ts'

export const ED25519_PUBLIC_KEY_BYTES = 32
export const ML_DSA_65_PUBLIC_KEY_BYTES = 1952
/** Ed25519 public key | ML-DSA-65 public key. */
export const HYBRID_PUBLIC_KEY_BYTES = ED25519_PUBLIC_KEY_BYTES + ML_DSA_65_PUBLIC_KEY_BYTES
export const ED25519_SIGNATURE_BYTES = 64
export const ML_DSA_65_SIGNATURE_BYTES = 3309
/** Ed25519 signature | ML-DSA-65 signature (FIPS 204, empty context), both over the same message. */
export const HYBRID_SIGNATURE_BYTES = ED25519_SIGNATURE_BYTES + ML_DSA_65_SIGNATURE_BYTES
/** A hybrid private key: the Ed25519 seed (32) | the ML-DSA-65 seed (32). */
export const HYBRID_SEED_BYTES = 64
export const HYBRID_ALGORITHM = 'ed25519+ml-dsa-65'

/** UTF-8 of `context`, one zero byte, then `body`: the domain-separated bytes a signature covers. */
export function contextSigningBytes(context: string, body: Uint8Array): Uint8Array {
  const prefix = new TextEncoder().encode(context)
  const out = new Uint8Array(prefix.length + 1 + body.length)
  out.set(prefix, 0)
  out.set(body, prefix.length + 1)
  return out
}

export const REVOKE_ALL_CONTEXT = 'coffer/revoke-all/v1'

/** Canonical CBOR (RFC 8949 4.2.1) of {"context": "coffer/revoke-all/v1", "user_id", "challenge"}. */
export function revokeAllSigningBytes(userId: string, challenge: string): Uint8Array {
  return encodeCanonical({ context: REVOKE_ALL_CONTEXT, user_id: userId, challenge })
}

export const CUSTODY_RECEIPT_CONTEXT = 'coffer/custody-receipt/v1'

/** What an attestation key signs: UTF-8 of the context, one zero byte, the receipt body. */
export function receiptSigningBytes(body: Uint8Array): Uint8Array {
  return contextSigningBytes(CUSTODY_RECEIPT_CONTEXT, body)
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

// Receipt chains (decision 0072): a server keeps `chains` chains (1 unless RECEIPT_CHAINS says
// more; the attestation-keys document's `receipt_chains`). Chain c's n-th receipt is numbered
// (n - 1) * chains + c, so receipt_seq names its chain and its place on it: strictly increasing
// along each chain, never shared between chains, and with one chain exactly 1, 2, 3...

/** The chain (1..chains) a receipt_seq is on. */
export function chainOfReceipt(seq: number, chains: number): number {
  return ((seq - 1) % chains) + 1
}

/** The number of the receipt before `seq` on its chain; null for a chain's first receipt, which names no predecessor. */
export function priorReceiptSeq(seq: number, chains: number): number | null {
  return seq > chains ? seq - chains : null
}

/** The number of the receipt after `lastSeq` on chain `chain` (lastSeq 0: the chain has none yet). */
export function nextReceiptSeq(lastSeq: number, chain: number, chains: number): number {
  return lastSeq === 0 ? chain : lastSeq + chains
}
