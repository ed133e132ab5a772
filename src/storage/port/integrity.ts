// Integrity: the read-only checks of coffer fsck and coffer backup.
// Part of the storage port (../port.ts); storage/kysely/integrity.ts implements it.
import type { ChainHead, Receipt } from './custody.ts'

/** Read-only checks of the operator's tools (coffer fsck, coffer backup). */
export interface IntegrityStore {
  /** Hashes that owner rows name, after `after` in hash order, with the smallest and largest size the rows give. */
  namedBlobsAfter(after: string, limit: number): Promise<Array<{ readonly hash: string; readonly minSize: number; readonly maxSize: number }>>
  /** Which of these hashes an owner row (of any account) names. */
  blobRowsNaming(hashes: readonly string[]): Promise<Set<string>>
  /** Which of these hashes are queued for reclaiming. */
  queuedAmong(hashes: readonly string[]): Promise<Set<string>>
  /** Up to `limit` receipts after `afterSeq`, in receipt_seq order. */
  receiptsAfter(afterSeq: number, limit: number): Promise<Receipt[]>
  /** Every chain's head (chain 1 first), read in one statement without taking their locks. */
  readReceiptChains(): Promise<ChainHead[]>
  consistencyFindings(): Promise<ConsistencyFinding[]>
}

/** Rows that disagree with one another (coffer fsck), one per kind of rule. */
export type ConsistencyFinding =
  /** The asset's chain head is not the hash of the last manifest applied for it (null: none). */
  | { readonly kind: 'asset_head'; readonly assetId: string; readonly chainHead: string; readonly lastManifestHash: string | null }
  /** A live asset's original is not the original of its live bundle (null: no live original). */
  | { readonly kind: 'asset_original'; readonly assetId: string; readonly originalHash: string; readonly liveOriginal: string | null }
  /** A feed entry whose upload session is still open. */
  | { readonly kind: 'op_session_open'; readonly albumId: string; readonly syncSeq: number; readonly uploadId: string }
  /** A bundle references an uploaded blob its session did not declare. */
  | { readonly kind: 'reference_undeclared'; readonly assetId: string; readonly uploadId: string; readonly hash: string }
  /** A bundle references a blob whose owner row is missing (null) or of another size. */
  | { readonly kind: 'reference_size'; readonly assetId: string; readonly hash: string; readonly referenceSize: number; readonly blobSize: number | null }
  /** A blob of a bundle has no receipt naming it. */
  | { readonly kind: 'reference_unreceipted'; readonly assetId: string; readonly uploadId: string; readonly hash: string; readonly role: string }
  /** The account's recorded stored bytes (null: no row) differ from the sizes of its blob rows. */
  | { readonly kind: 'stored_bytes'; readonly userId: string; readonly recorded: number | null; readonly actual: number }
