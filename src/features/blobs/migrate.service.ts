// coffer blobs migrate: copies every blob of one store into another (the folder into a bucket).
// The target's put re-hashes each blob on the way, so a damaged file is found and not copied.
// Blobs are immutable and named by their content, which makes the copy resumable and safe
// beside running servers: a blob the target already holds with the source's size is skipped
// unread, what servers write meanwhile is copied by the next run, and a blob the collector
// removes from the source after it was copied stays in the target as a file no row names
// (harmless; `coffer fsck --reclaim-unowned` queues it once servers run on the target).
import type { Readable } from 'node:stream'
import type { BlobStore } from '../../blob-store/port.ts'
import { inPool } from '../backup/files.ts'

/** Copies in flight at once: a bucket's put waits on round trips, and holds at most ~24 MiB (s3.ts). */
const COPY_WIDTH = 8

export interface MigrationCounts {
  /** Blobs in the source when the copy began. */
  readonly total: number
  /** Blobs dealt with so far (each counted once below). */
  readonly done: number
  readonly copied: number
  readonly copiedBytes: number
  /** In the target already, with the source's size: skipped unread. */
  readonly alreadyThere: number
  /** Their bytes do not match their name, or cannot be read: not copied. */
  readonly damaged: number
  /** Removed from the source after the listing (collected as garbage): nothing to copy. */
  readonly removedMeanwhile: number
}

export interface MigrationOptions {
  /** A blob that was not copied because the source's copy is damaged; `why` is a phrase. */
  readonly damaged: (hash: string, why: string) => void
  readonly progress?: (counts: MigrationCounts) => void
}

type Outcome =
  | { readonly kind: 'copied'; readonly bytes: number }
  | { readonly kind: 'already there' }
  | { readonly kind: 'removed' }
  | { readonly kind: 'damaged'; readonly why: string }

/** One blob: a failure to read the source is the blob's damage; a failure of the target stops the run. */
async function migrateBlob(source: BlobStore, target: BlobStore, hash: string): Promise<Outcome> {
  const size = await source.size(hash)
  if (size === null) return { kind: 'removed' }
  if ((await target.size(hash)) === size) return { kind: 'already there' }
  let bytes: Readable
  try {
    bytes = await source.open(hash)
  } catch (error) {
    if ((await source.size(hash)) === null) return { kind: 'removed' }
    return { kind: 'damaged', why: `it cannot be read: ${(error as Error).message}` }
  }
  const readFailure: { error?: Error } = {}
  async function* reading(): AsyncGenerator<Uint8Array> {
    try {
      for await (const chunk of bytes) yield chunk as Uint8Array
    } catch (error) {
      readFailure.error = error as Error
      throw error
    }
  }
  try {
    const outcome = await target.put(hash, size, reading())
    return outcome.kind === 'stored' ? { kind: 'copied', bytes: size } : { kind: 'damaged', why: `its bytes do not match its name (${outcome.detail})` }
  } catch (error) {
    if (readFailure.error === undefined) throw error
    return { kind: 'damaged', why: `it cannot be read: ${readFailure.error.message}` }
  }
}

export async function migrateBlobs(source: BlobStore, target: BlobStore, options: MigrationOptions): Promise<MigrationCounts> {
  // What an interrupted earlier run on this host left staged in the target.
  await target.cleanLeftovers()
  let total = 0
  for await (const _ of source.list()) total++
  const counts = { total, done: 0, copied: 0, copiedBytes: 0, alreadyThere: 0, damaged: 0, removedMeanwhile: 0 }
  await inPool(source.list(), COPY_WIDTH, async (hash) => {
    const outcome = await migrateBlob(source, target, hash)
    switch (outcome.kind) {
      case 'copied':
        counts.copied++
        counts.copiedBytes += outcome.bytes
        break
      case 'already there':
        counts.alreadyThere++
        break
      case 'removed':
        counts.removedMeanwhile++
        break
      case 'damaged':
        counts.damaged++
        options.damaged(hash, outcome.why)
    }
    counts.done++
    options.progress?.({ ...counts })
  })
  return counts
}
