// Custody: attestation keys, the receipt chain and what storage verification reads.
// Part of the storage port (../port.ts); storage/kysely/custody.ts implements it.
import type { AssetBlobRef, BlobRole } from './lifecycle.ts'

export interface CustodyStore {
  /** Every attestation key, active and retired, oldest first. */
  listAttestationKeys(): Promise<AttestationKey[]>
  findAttestationKey(keyId: string): Promise<AttestationKey | undefined>
  /** Writes chain `chain`'s head row first, so its lock is held for the rest of the transaction, and reads it. */
  lockReceiptChain(chain: number): Promise<ChainHead>
  /** Makes a new key the active one of every chain, retiring the active one at `now` (call under lockReceiptChain(1)). */
  activateAttestationKey(key: { readonly keyId: string; readonly publicKey: Buffer; readonly privateBox: Buffer }, now: number): Promise<void>
  /** Reads chain `chain`'s head, without locking it. */
  receiptChainHead(chain: number): Promise<ChainTip>
  /** Appends receipts (in order, continuing the head) and moves chain `chain`'s head to the last, whose hash is given (under lockReceiptChain). */
  appendReceipts(chain: number, receipts: readonly Receipt[], lastReceiptHash: string): Promise<void>
  /**
   * appendReceipts without lockReceiptChain: moves the chain's head only if it is still `after`
   * (and `after`'s key still the active one), which locks it for the rest of the transaction,
   * then appends. False, writing nothing, when the head or the active key has changed.
   */
  appendReceiptsAfter(chain: number, after: ChainHead, receipts: readonly Receipt[], lastReceiptHash: string): Promise<boolean>
  /** How many chains the server keeps, and whether any receipt has been issued on them. */
  receiptChainLayout(): Promise<{ readonly chains: number; readonly issued: boolean }>
  /** The issuer (server_id) the newest receipt of any chain names; null before the first receipt. */
  newestReceiptIssuer(): Promise<string | null>
  /** Makes the chains 1..count, each with the first chain's active key (call under lockReceiptChain(1), before the first receipt). */
  setReceiptChains(count: number): Promise<void>
  /**
   * Takes or renews a chain's lease for `holder` until `until`: the chain it holds, else one
   * whose lease ended before `now`, the lowest first. Null when every chain is held by others.
   */
  claimReceiptChain(holder: string, now: number, until: number): Promise<number | null>
  /** Ends the leases `holder` holds. */
  releaseReceiptChains(holder: string): Promise<void>
  /** Records a bundle's receipts for its chain's holder to append (decision 0073), in the write's transaction. */
  requestReceipts(request: ReceiptRequest): Promise<void>
  /** Waiting receipt requests, oldest first, at most `limit`: of chain `chain` (null: every chain), requested before `before` (null: whenever). */
  pendingReceiptRequests(chain: number | null, before: number | null, limit: number): Promise<ReceiptRequest[]>
  /**
   * Deletes these requests and answers the ids of those that were still there: the caller's
   * transaction now appends their receipts (one delete decides who appends a request).
   */
  takeReceiptRequests(requestIds: readonly string[]): Promise<string[]>
  /** Whether the request still waits for its receipts. */
  receiptRequestPending(requestId: string): Promise<boolean>
  /**
   * A page of the receipts ever issued for the asset, replaced bundles included, in receipt_seq
   * order: those numbered after `after`, at most `limit` of them (one index range).
   */
  listReceipts(assetId: string, after: number, limit: number): Promise<Receipt[]>
  /**
   * A page of the receipts of an album's assets numbered at most `throughSeq`, in (asset_id,
   * receipt_seq) order, after `after` (null: from the start), at most `limit` of them: each
   * query a bounded index range, however many assets the album holds.
   */
  albumReceipts(albumId: string, throughSeq: number, after: ReceiptCursor | null, limit: number): Promise<Receipt[]>
  /**
   * Takes `bytes` from the account's deep-scan budget when they fit in what is left of the
   * current window (a window that has ended starts again at `now`); false, writing nothing, otherwise.
   */
  reserveDeepScan(userId: string, bytes: number, now: number, budget: number, windowMs: number): Promise<boolean>
  /** The live (not deleted) assets of the owner among `assetIds`, with their live bundles. */
  assetCustody(ownerId: string, assetIds: readonly string[]): Promise<Map<string, AssetCustody>>
  /**
   * The uploader of each of these assets (not deleted) that `userId` may verify: its own, and
   * those of albums it owns or is an active member of (decision 0067). Others are left out.
   */
  verifiableAssetOwners(userId: string, assetIds: readonly string[]): Promise<Map<string, string>>
  /** Which of these hashes a live asset of the owner references. */
  liveReferencedHashes(ownerId: string, hashes: readonly string[]): Promise<Set<string>>
}

/** The blobs of one lifecycle write, each of which gets a receipt. */
export interface CustodyBundle {
  readonly assetId: string
  readonly uploadId: string
  /** In receipt order: original, derivatives, metadata, provenance. */
  readonly blobs: readonly AssetBlobRef[]
  /** SHA-256 of the signed manifest; carried by the provenance receipt. */
  readonly envelopeHash: string
}

/** A bundle whose receipts an instance handed to the holder of chain `chain` (decision 0073). */
export interface ReceiptRequest {
  readonly requestId: string
  readonly chain: number
  readonly bundle: CustodyBundle
  readonly requestedAt: number
}

/** What an instance hears of other instances' receipt requests (decision 0073). */
export interface ReceiptNotices {
  /** A request for chain `chain` was committed: the request itself, or null when its bundle was too long to tell (read it). */
  requested(chain: number, request: ReceiptRequest | null): void
  /** A transaction that appended request `requestId`'s receipts committed. */
  taken(requestId: string): void
  /** Whether notices are heard now (false: the connection was lost; poll meanwhile). */
  listening(live: boolean): void
}

export interface ReceiptWatch {
  close(): Promise<void>
}

export interface AttestationKey {
  /** Hex SHA-256 of the public key. */
  readonly keyId: string
  readonly publicKey: Buffer
  /** The private seeds, sealed. */
  readonly privateBox: Buffer
  readonly status: 'active' | 'retired'
  readonly notBefore: number
  readonly notAfter: number | null
}

export interface ChainHead {
  readonly lastSeq: number
  readonly lastReceiptHash: string | null
  readonly activeKeyId: string | null
}

/** The chain head with the time of its last receipt (null before the first). */
export interface ChainTip extends ChainHead {
  readonly lastReceivedAt: number | null
}

export interface Receipt {
  readonly receiptSeq: number
  readonly serverId: string
  readonly assetId: string
  readonly uploadId: string
  readonly blobRole: BlobRole
  readonly ciphertextHash: string
  readonly size: number
  readonly envelopeHash: string | null
  readonly receivedAt: number
  readonly serverKeyId: string
  readonly priorReceiptHash: string | null
  readonly receiptCbor: Buffer
}

/** Where a page of albumReceipts ended: its last receipt's asset and number. */
export interface ReceiptCursor {
  readonly assetId: string
  readonly receiptSeq: number
}

/** What storage verification knows about one asset of the caller. */
export interface AssetCustody {
  readonly takenDown: boolean
  /** Role of each hash in the asset's live bundle. */
  readonly roles: ReadonlyMap<string, BlobRole>
}
