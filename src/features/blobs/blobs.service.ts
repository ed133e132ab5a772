// Blob download (API.md section 6): the bytes of a blob a live asset references in an album the
// caller may read (its own, or one shared with it: decision 0067; or the one a link opens:
// decision 0068), one at a time or many in a batch (docs/decisions/0029-blob-batches.md).
import { Readable } from 'node:stream'
import type { ByteRange } from '../../blob-store/port.ts'
import { encodeCanonicalPieces } from '../../codec/cbor.ts'
import type { Deps } from '../../deps.ts'
import { decideBatch } from '../../domain/blob-batch.ts'
import { AppError } from '../../errors.ts'
import type { LiveBlob } from '../../storage/port/lifecycle.ts'
import type { LinkScope } from '../../storage/port/links.ts'
import type { Caller } from '../context.ts'

/** Of these hashes, the live blobs a reader may read: what decides every download. */
export type BlobFinder = (hashes: readonly string[]) => Promise<Map<string, LiveBlob>>

/** An account's: its albums' and those shared with it. */
export const accountBlobs =
  (deps: Deps, caller: Caller): BlobFinder =>
  (hashes) =>
    deps.storage.findLiveBlobs(caller.userId, hashes)

/** A link's: its album's (its selection's), originals only when it allows downloads. */
export const linkBlobs =
  (deps: Deps, link: LinkScope): BlobFinder =>
  (hashes) =>
    deps.storage.findLinkBlobs(link, hashes)

/** Blobs one batch reads from the store at once. */
const BATCH_READS = 8

/**
 * A blob the caller may download: its size, and its bytes (a range of them) on demand.
 * `inStore` is false for a provenance blob, whose bytes the database holds (decision 0038): no
 * object of the bucket has them, so they come through this server in the redirect mode too.
 */
export async function downloadableBlob(
  deps: Deps,
  readable: BlobFinder,
  hash: string,
): Promise<{ size: number; inStore: boolean; open: (range?: ByteRange) => Promise<Readable> }> {
  const blob = (await readable([hash])).get(hash)
  if (blob === undefined) throw new AppError('error.not_found', 'No live asset of an album this credential may read references that blob')
  if (blob.withheld) throw new AppError('error.moderation.taken_down', 'The asset holding this blob was taken down')
  const bytes = (await heldBytes(deps, [hash], new Map([[hash, blob]]))).get(hash)
  if (bytes === undefined) return { size: blob.size, inStore: true, open: (range) => deps.blobs.open(hash, range) }
  return { size: blob.size, inStore: false, open: async (range) => Readable.from([range === undefined ? bytes : bytes.subarray(range.start, range.end + 1)]) }
}

/**
 * Of these live blobs, the bytes the database holds (provenance blobs only: no query for the
 * others), each checked against the size the rows record: another length is a fault (500),
 * never a wrong answer.
 */
async function heldBytes(deps: Deps, hashes: readonly string[], live: ReadonlyMap<string, LiveBlob>): Promise<Map<string, Buffer>> {
  // Every hash here is one findLiveBlobs let the caller read: held by whichever account uploaded it.
  const held = await deps.storage.heldManifests(hashes.filter((hash) => live.get(hash)?.provenance === true))
  for (const [hash, bytes] of held) {
    const size = live.get(hash)?.size
    if (size !== bytes.length) throw new Error(`blob ${hash}: the database holds ${bytes.length} bytes, not the ${size} recorded`)
  }
  return held
}

/**
 * A batch download's answer, as canonical CBOR pieces to send in order: an array in request
 * order of `{hash, status: 200, bytes}` or `{hash, status, code}` (404, 451, or 413 past
 * BLOB_BATCH_MAX_BYTES). The budget is decided from the database's sizes before anything is
 * read, so at most BLOB_BATCH_MAX_BYTES of blob bytes are held; each blob is read whole into
 * its own buffer, BATCH_READS at a time (a provenance blob's from the database, in one query
 * for all), and passed to the answer without another copy.
 */
export async function downloadBlobBatch(deps: Deps, readable: BlobFinder, hashes: readonly string[]): Promise<Uint8Array[]> {
  const live = await readable(hashes)
  const decisions = decideBatch(hashes, live, deps.config.blobBatchMaxBytes)
  const served = decisions.flatMap((decision) => (decision.status === 200 ? [decision] : []))
  const bytes = new Map<string, Uint8Array>(
    await heldBytes(
      deps,
      served.map((decision) => decision.hash),
      live,
    ),
  )
  const fromStore = served.filter((decision) => !bytes.has(decision.hash))
  let next = 0
  let failed = false
  const reader = async (): Promise<void> => {
    // After a failed read the others stop taking blobs: the whole answer is a problem.
    for (let i = next++; i < fromStore.length && !failed; i = next++) {
      const { hash, size } = fromStore[i]!
      try {
        bytes.set(hash, await readWhole(deps, hash, size))
      } catch (error) {
        failed = true
        throw error
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(BATCH_READS, fromStore.length) }, reader))
  return encodeCanonicalPieces(
    decisions.map((decision) =>
      decision.status === 200
        ? { hash: decision.hash, status: 200, bytes: bytes.get(decision.hash) }
        : { hash: decision.hash, status: decision.status, code: decision.code },
    ),
  )
}

/** A blob's bytes in one buffer of the size the database records; bytes of another length are a fault (500), never a wrong answer. */
async function readWhole(deps: Deps, hash: string, size: number): Promise<Uint8Array> {
  const whole = new Uint8Array(size)
  let filled = 0
  for await (const chunk of await deps.blobs.open(hash)) {
    const part = chunk as Uint8Array
    if (filled + part.length > size) throw new Error(`blob ${hash} holds more than the ${size} bytes recorded`)
    whole.set(part, filled)
    filled += part.length
  }
  if (filled !== size) throw new Error(`blob ${hash} holds ${filled} bytes, not the ${size} recorded`)
  return whole
}
