// The chain rule of a lifecycle write (API.md section 6, check 7): a create starts a new
// chain, a replace continues the asset's chain from its head and its current original, and a
// delete ends it there (API.md "Asset deletion"); nothing continues a chain a delete ended.

export interface ChainFacts {
  readonly albumId: string
  readonly chainHead: string
  readonly originalHash: string
  /** Set once a delete ended the asset. */
  readonly deletedAt: number | null
}

export interface ChainClaim {
  readonly action: 'create' | 'replace' | 'delete'
  readonly albumId: string
  readonly priorProvenanceHash: string | null
  readonly originalBlobHash: string | null
  /** The envelope's ciphertext_hash: a delete names the asset's current original with it too. */
  readonly ciphertextHash: string
}

export type ChainVerdict =
  | { readonly kind: 'continues' }
  /** 422: a replace or a delete must name the asset's current original. */
  | { readonly kind: 'original_required' }
  /** 409 StaleRevivalProblem; `chainHead` is absent for an asset this album does not hold. */
  | { readonly kind: 'stale'; readonly chainHead: string | null }

export function checkChain(claim: ChainClaim, asset: ChainFacts | undefined): ChainVerdict {
  // An asset of another album (or account) is not this album's to reveal.
  const head = asset !== undefined && asset.albumId === claim.albumId ? asset.chainHead : null
  if (claim.action === 'create') {
    return asset === undefined && claim.priorProvenanceHash === null ? { kind: 'continues' } : { kind: 'stale', chainHead: head }
  }
  if (claim.originalBlobHash === null) return { kind: 'original_required' }
  if (asset === undefined || head === null) return { kind: 'stale', chainHead: null }
  if (asset.deletedAt !== null) return { kind: 'stale', chainHead: head }
  const namesOriginal = claim.originalBlobHash === asset.originalHash && (claim.action !== 'delete' || claim.ciphertextHash === asset.originalHash)
  return claim.priorProvenanceHash === asset.chainHead && namesOriginal ? { kind: 'continues' } : { kind: 'stale', chainHead: head }
}

/**
 * Asset deletion: the asset's retention floor while it is still ahead of `now` (409
 * error.asset.retained), or null when the asset may go. The floor only rises (a replace keeps
 * the later of the two), so this is the latest one any of its manifests promised.
 */
export function retainedUntil(asset: { readonly retentionUntil: number | null }, now: number): number | null {
  return asset.retentionUntil !== null && asset.retentionUntil > now ? asset.retentionUntil : null
}
