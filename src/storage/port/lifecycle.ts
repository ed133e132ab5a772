// Lifecycle: assets, their bundles and the feed of applied manifests.
// Part of the storage port (../port.ts); storage/kysely/lifecycle.ts implements it.
import type { LinkScope } from './links.ts'

export interface LifecycleStore {
  findAppliedOp(albumId: string, manifestHash: string): Promise<AppliedOp | undefined>
  findAsset(assetId: string): Promise<Asset | undefined>
  /**
   * Indexes a create or a replace: the new asset (a create), or the asset moved to its new head
   * with its live bundle marked replaced (a replace); then the new bundle's references and the
   * feed entry. False when a create finds an asset with its id (in any album): the unique insert
   * decides two creates of one id racing in different albums, which hold different locks; the
   * caller must then roll the transaction back (what else the call wrote is not meant to stay).
   * On PostgreSQL one statement.
   */
  indexWrite(write: IndexedWrite, now: number): Promise<boolean>
  /**
   * Ends the asset at a `delete` manifest: its chain head moves to it and it is no longer live
   * (with supersedeBundle in the same transaction, its references become garbage unless a legal
   * hold keeps them).
   */
  endAsset(assetId: string, chainHead: string, now: number): Promise<void>
  /** Marks the asset's live bundle as replaced. */
  supersedeBundle(assetId: string, now: number): Promise<void>
  insertAppliedOp(op: AppliedOp): Promise<void>
  /** Feed entries after `afterSeq`, in order; through a selection link (`linkId`), only those of its photos. */
  feed(albumId: string, afterSeq: number, limit: number, linkId?: string): Promise<AppliedOp[]>
  /**
   * Of these hashes, the blobs a live asset references in an album `readerId` may read (its own,
   * and those shared with it as an active member: decision 0067), by hash (the others are
   * absent); `withheld` when every such asset is taken down. One query however many.
   */
  findLiveBlobs(readerId: string, hashes: readonly string[]): Promise<Map<string, LiveBlob>>
  /**
   * The same through a link (decision 0068): blobs of the live assets of the link's album, of its
   * selection only when it is one, its originals only when it allows downloads.
   */
  findLinkBlobs(link: LinkScope, hashes: readonly string[]): Promise<Map<string, LiveBlob>>
  /**
   * The bytes the database holds for these blob hashes: a signed manifest (`album_ops`) whose
   * hash a blob row names (of `ownerId` only, when given). A provenance blob's
   * bytes are stored there alone, never as a file (decision 0038); absent hashes are not held.
   */
  heldManifests(hashes: readonly string[], ownerId?: string): Promise<Map<string, Buffer>>
  /**
   * Hashes whose bytes are still needed: a blob row of any owner names them, or an open upload
   * session of any account declares them (its PUT may be publishing the file right now, or a
   * lifecycle write on it storing its metadata). A file may go only when neither holds.
   */
  blobHashesStillNeeded(hashes: readonly string[], now: number): Promise<Set<string>>
}

export type BlobRole = 'original' | 'derivative' | 'metadata' | 'provenance'

export interface Asset {
  readonly assetId: string
  readonly albumId: string
  readonly ownerId: string
  readonly chainHead: string
  readonly originalHash: string
  readonly retentionUntil: number | null
  /** Set once a `delete` manifest ended the asset: it is no longer live, its chain ends at that manifest. */
  readonly deletedAt: number | null
}

/** What a create or a replace indexes (LifecycleStore.indexWrite). */
export interface IndexedWrite {
  /** The asset's new head: a new asset (`created`), or an existing one's (`advanced`). */
  readonly asset:
    | { readonly created: Omit<Asset, 'deletedAt'> }
    | { readonly advanced: Pick<Asset, 'assetId' | 'chainHead' | 'originalHash' | 'retentionUntil'> }
  readonly bundle: { readonly ownerId: string; readonly syncSeq: number; readonly uploadId: string; readonly refs: readonly AssetBlobRef[] }
  readonly op: AppliedOp
}

export interface AssetBlobRef {
  readonly hash: string
  readonly role: BlobRole
  readonly size: number
}

export interface AppliedOp {
  readonly albumId: string
  readonly syncSeq: number
  readonly manifestHash: string
  readonly assetId: string
  readonly action: 'create' | 'replace' | 'delete'
  readonly manifestCbor: Buffer
  readonly metadataBlobHash: string | null
  /** The upload session whose bundle the write applied; null for a delete (it uses none). */
  readonly uploadId: string | null
  readonly appliedAt: number
}

/** A blob a live asset of its owner references (what a download may serve). */
export interface LiveBlob {
  readonly size: number
  /** Every live asset of the owner that references it is taken down. */
  readonly withheld: boolean
  /** A live asset references it as its provenance: its bytes may be held in the database (heldManifests). */
  readonly provenance: boolean
}
