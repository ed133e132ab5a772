// The chain rule of a lifecycle write (API.md section 6, check 7): a create starts a new
// chain, a replace continues the asset's chain from its head and its current original.

export interface ChainFacts {
  readonly albumId: string
  readonly chainHead: string
  readonly originalHash: string
}

export interface ChainClaim {
  readonly action: 'create' | 'replace'
  readonly albumId: string
  readonly priorProvenanceHash: string | null
  readonly originalBlobHash: string | null
}

export type ChainVerdict =
  | { readonly kind: 'continues' }
  /** 422: a replace must name the original it replaces. */
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
  const continues = claim.priorProvenanceHash === asset.chainHead && claim.originalBlobHash === asset.originalHash
  return continues ? { kind: 'continues' } : { kind: 'stale', chainHead: head }
}
