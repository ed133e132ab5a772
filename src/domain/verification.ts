// Storage-verification verdicts (SPEC.md "Storage verification and receipts", API.md section
// 7): structural facts in, one verdict per declared blob out, and durability for the asset.

export type DeepResult = 'intact' | 'corrupt' | 'rate_limited'

export interface BlobFacts {
  /** The role of the hash in the asset's live bundle; null when the asset does not hold it. */
  readonly role: string | null
  /** The caller stores the bytes (owner row and file). */
  readonly stored: boolean
  /** A live asset of the caller references it. */
  readonly indexed: boolean
  /** The asset is taken down (its blobs are withheld). */
  readonly withheld: boolean
  /** Absent when no deep scan ran. */
  readonly deep?: DeepResult
}

export interface BlobVerdict {
  readonly role: string
  readonly stored: boolean
  readonly indexed: boolean
  readonly retrievable: boolean
  readonly deep?: DeepResult
}

export function blobVerdict(facts: BlobFacts): BlobVerdict {
  return {
    role: facts.role ?? 'unknown',
    stored: facts.stored,
    indexed: facts.indexed,
    retrievable: facts.stored && !facts.withheld,
    ...(facts.deep === undefined ? {} : { deep: facts.deep }),
  }
}

/** A blob of an asset that is not a live asset of the caller: nothing can be said. */
export const UNKNOWN_BLOB: BlobVerdict = { role: 'unknown', stored: false, indexed: false, retrievable: false }

/**
 * Durable only when the server can say so for every declared blob: stored, indexed,
 * retrievable, not found corrupt. An empty declaration says nothing, so it is not durable.
 */
export function isDurable(verdicts: readonly BlobVerdict[]): boolean {
  return verdicts.length > 0 && verdicts.every((v) => v.stored && v.indexed && v.retrievable && v.deep !== 'corrupt')
}
