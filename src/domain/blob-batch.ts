// Which blobs of a batch download are answered with their bytes (docs/decisions/0029-blob-batches.md):
// each hash as the single download would answer it, and of those it would serve, only as many
// as the byte budget holds, in request order. Sizes come from the database, so the budget is
// decided before any file is read.
import type { ErrorCode } from '../contract/errors.ts'

/** What the database says of a requested hash: absent when no live asset of the caller references it. */
export interface BatchBlobFacts {
  readonly size: number
  /** Every live asset of the caller that references it is taken down. */
  readonly withheld: boolean
}

export type BatchDecision =
  | { readonly hash: string; readonly status: 200; readonly size: number }
  | { readonly hash: string; readonly status: 404 | 413 | 451; readonly code: ErrorCode }

/**
 * One decision per hash, in request order: 404 `error.not_found` for a blob the caller may not
 * read (unknown, another account's, not referenced by a live asset: alike), 451
 * `error.moderation.taken_down` for a withheld one, and 200 while its size fits in what is left
 * of `budgetBytes`, else 413 `error.request.too_large` (a later, smaller blob may still fit).
 */
export function decideBatch(hashes: readonly string[], facts: ReadonlyMap<string, BatchBlobFacts>, budgetBytes: number): BatchDecision[] {
  let left = budgetBytes
  return hashes.map((hash): BatchDecision => {
    const blob = facts.get(hash)
    if (blob === undefined) return { hash, status: 404, code: 'error.not_found' }
    if (blob.withheld) return { hash, status: 451, code: 'error.moderation.taken_down' }
    if (blob.size > left) return { hash, status: 413, code: 'error.request.too_large' }
    left -= blob.size
    return { hash, status: 200, size: blob.size }
  })
}
