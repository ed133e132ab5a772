// Comparing an album with the local originals it was backed up from (docs/client-library.md,
// "Comparing with the originals"; `coffer-photos verify --against`). No other check reads back
// what was stored and holds it against the file it came from: verify's deep check proves the
// stored bytes decrypt and hash to what the manifest says, not that the manifest describes this
// file.
//
// - Pairing: an album file and a local file are paired by the file's stored name, its path
//   relative to the folder backed up. Every asset of a name is paired with the local file of that
//   name (an edited file backed up again is a second asset of the same name).
// - Before any byte is read, a pair whose local size or modification time is not the one the
//   asset's metadata recorded is "changed here since the backup": an edit, not damage. An album
//   file with no local one is "missing"; a local file with no album file is "not in the album".
// - The rest are compared byte for byte, all of them or a random sample: the stored original
//   streamed, each chunk authenticated (restoreFile), against the local file streamed, neither
//   held whole. At the first difference the local file is let go and the stored one read to its
//   end, so that the report says whether the stored copy verified on its own.
import type { Library } from './albums.ts'
import { restoreFile } from './files.ts'
import { inParallel, liveEntriesOf, type AssetReport } from './verify.ts'

/** A local file to compare (node/compare.ts localFiles reads a folder). */
export interface LocalFile {
  /** Relative to the folder, "/" between names: the name backup stores. */
  readonly path: string
  readonly size: number
  /** Modification time, whole ms since the epoch. */
  readonly modified: number
  /** Its bytes, streamed; called once, for a pair that is compared. */
  open(): AsyncIterable<Uint8Array>
}

/** An album file as verifyAlbum reported it (its name, size and mtime from its metadata). */
export type StoredFile = Pick<AssetReport, 'assetId' | 'name' | 'size' | 'modified' | 'record'>

export type ComparisonOutcome =
  /** The local file and the stored original are the same bytes. */
  | 'match'
  /** They differ (offset: the first byte that does). */
  | 'differs'
  /** The stored original, or the local file, could not be read to the end (detail: why). */
  | 'failed'
  /** The local file's size or mtime is not what was backed up: not compared. */
  | 'changed'
  /** The album has the file, the folder does not. */
  | 'missing'
  /** The folder has the file, the album does not (never backed up, or deleted from the album). */
  | 'not_in_album'

export interface ComparedFile {
  readonly path: string
  /** Null for a local file not in the album. */
  readonly assetId: string | null
  readonly outcome: ComparisonOutcome
  /** Bytes: the local file's, or the stored one's when it is missing here. */
  readonly size: number
  /** differs: the first byte, from 0, where the two differ (the shorter one's length when one is a prefix of the other). */
  readonly offset?: number
  /** differs, failed, changed: one sentence on what was found. */
  readonly detail?: string
}

export interface ComparisonSummary {
  /** The album's files (its record, and files whose metadata could not be read, left out). */
  readonly albumFiles: number
  /** The folder's files. */
  readonly localFiles: number
  /** Pairs that could be compared: present here with the size and mtime backed up. */
  readonly comparable: number
  /** Pairs compared byte for byte (comparable, sampled, and read). */
  readonly compared: number
  readonly matched: number
  readonly differs: number
  readonly failed: number
  readonly changed: number
  readonly missing: number
  readonly notInAlbum: number
  /** Plaintext bytes compared. */
  readonly bytes: number
  /** True when the signal stopped the run before every sampled pair was compared. */
  readonly stopped: boolean
}

export interface CompareOptions {
  /** Pairs compared, picked at random among the comparable ones; every one unless given. */
  readonly sample?: number
  /** Pairs compared at once; 4 unless given. */
  readonly concurrency?: number
  /** Stops taking new pairs; those in flight finish. */
  readonly signal?: AbortSignal
  /** Told of every file with something to say: each one compared, changed, missing or not in the album. */
  readonly onFile?: (file: ComparedFile) => void
  /** Told once the pairs to compare are picked: how many, and the bytes of their local files. */
  readonly onPicked?: (files: number, bytes: number) => void
  /** Told, as a pair is compared, how many bytes of the stored original have been read so far. */
  readonly onCompared?: (file: { readonly assetId: string; readonly name: string }, bytes: number) => void
  /** Uniform in [0, 1), for the sample; Math.random unless given. */
  readonly random?: () => number
}

/** Bytes streamed, as a file's are (a synchronous iterable too, for bytes at hand). */
type Bytes = AsyncIterable<Uint8Array> | Iterable<Uint8Array>

/** A local file that could not be read (as opposed to the stored original). */
export class LocalReadError extends Error {}

/** The local bytes; an error in reading them is a LocalReadError. */
async function* localBytes(source: Bytes): AsyncGenerator<Uint8Array> {
  try {
    yield* source
  } catch (error) {
    throw new LocalReadError((error as Error).message, { cause: error })
  }
}

/**
 * Where `length` bytes of `a` from `aAt` and of `b` from `bAt` first differ, counted from there;
 * -1 when they do not. Four bytes at a time when both sides line up on 4 bytes (64 KiB chunks
 * do): byte by byte, V8 compares about 300 MiB/s, which a GB video would feel; by words, 5 GiB/s.
 */
function mismatch(a: Uint8Array, aAt: number, b: Uint8Array, bAt: number, length: number): number {
  let k = 0
  const aStart = a.byteOffset + aAt
  const bStart = b.byteOffset + bAt
  if (aStart % 4 === bStart % 4 && length >= 8) {
    for (; (aStart + k) % 4 !== 0; k++) if (a[aAt + k] !== b[bAt + k]) return k
    const words = (length - k) >>> 2
    const aWords = new Uint32Array(a.buffer, aStart + k, words)
    const bWords = new Uint32Array(b.buffer, bStart + k, words)
    let w = 0
    while (w < words && aWords[w] === bWords[w]) w++
    k += w * 4 // on a differing word, the bytes below find which of its four
  }
  for (; k < length; k++) if (a[aAt + k] !== b[bAt + k]) return k
  return -1
}

/**
 * Reads `stored` to its end and `local` until the first byte that differs; answers that byte's
 * offset (the shorter one's length when one ends first), or null when they are the same bytes,
 * and how many stored bytes were read. An error of `stored` (a chunk that does not authenticate,
 * the hash at the end) is thrown as it is; one of `local` as a LocalReadError.
 */
export async function firstDifference(stored: Bytes, local: Bytes): Promise<{ readonly offset: number | null; readonly bytes: number }> {
  const pull = localBytes(local)
  let pending: Uint8Array = new Uint8Array(0)
  let at = 0 // into pending
  let offset = 0 // stored bytes read before the current chunk
  let difference: number | null = null
  try {
    for await (const chunk of stored) {
      for (let i = 0; difference === null && i < chunk.length; ) {
        if (at === pending.length) {
          const next = await pull.next()
          if (next.done === true) difference = offset + i
          else [pending, at] = [next.value, 0]
          continue
        }
        const run = Math.min(chunk.length - i, pending.length - at)
        const k = mismatch(chunk, i, pending, at, run)
        if (k >= 0) difference = offset + i + k
        i += run
        at += run
      }
      if (difference !== null && pending.length > 0) {
        await pull.return(undefined) // the local file is let go; the stored one is read on
        pending = new Uint8Array(0)
      }
      offset += chunk.length
    }
    if (difference === null) {
      while (at === pending.length) {
        const next = await pull.next()
        if (next.done === true) break
        ;[pending, at] = [next.value, 0]
      }
      if (at < pending.length) difference = offset // the local file goes on
    }
    return { offset: difference, bytes: offset }
  } finally {
    await pull.return(undefined)
  }
}

/** `bytes` of `file` as they pass, the count so far told to `tell` (when given). */
async function* counted(
  bytes: AsyncIterable<Uint8Array>,
  file: { readonly assetId: string; readonly name: string },
  tell: CompareOptions['onCompared'],
): AsyncGenerator<Uint8Array> {
  let count = 0
  for await (const piece of bytes) {
    count += piece.length
    tell?.({ assetId: file.assetId, name: file.name }, count)
    yield piece
  }
}

/** Picks `count` of `items` at random, in their order. */
function sampleOf<T>(items: readonly T[], count: number, random: () => number): T[] {
  if (count >= items.length) return [...items]
  const picked = items.map((_, i) => i)
  for (let i = 0; i < count; i++) {
    const j = i + Math.floor(random() * (picked.length - i))
    ;[picked[i], picked[j]] = [picked[j]!, picked[i]!]
  }
  return picked
    .slice(0, count)
    .sort((a, b) => a - b)
    .map((i) => items[i]!)
}

const when = (ms: number | null): string => (ms === null ? 'no mtime' : `mtime ${new Date(ms).toISOString()}`)

/** Pairs compared at once are opened a window at a time (as verify's, so --all on a large album holds a window, not the album). */
const WINDOW = 64

/**
 * Compares the album's files (`stored`, verifyAlbum's reports of `albumId`) with the local
 * files they were backed up from; see the top of this file. Events come as files are found:
 * not_in_album during the walk, then changed and missing, then each comparison as it ends.
 */
export async function compareWithLocal(
  library: Library,
  albumId: string,
  stored: readonly StoredFile[],
  local: AsyncIterable<LocalFile>,
  options: CompareOptions = {},
): Promise<ComparisonSummary> {
  const files = stored.filter((s): s is StoredFile & { name: string } => !s.record && s.name !== null)
  const byName = new Map<string, (StoredFile & { name: string })[]>()
  for (const file of files) byName.set(file.name, [...(byName.get(file.name) ?? []), file])
  const localOf = new Map<string, LocalFile>()
  const counts = { localFiles: 0, compared: 0, matched: 0, differs: 0, failed: 0, changed: 0, missing: 0, notInAlbum: 0, bytes: 0 }
  const tell = (file: ComparedFile): void => {
    counts[file.outcome === 'not_in_album' ? 'notInAlbum' : file.outcome === 'match' ? 'matched' : file.outcome]++
    options.onFile?.(file)
  }

  for await (const file of local) {
    counts.localFiles++
    const named = byName.get(file.path)
    if (named === undefined) tell({ path: file.path, assetId: null, outcome: 'not_in_album', size: file.size })
    else for (const asset of named) localOf.set(asset.assetId, file)
  }

  const comparable: { readonly asset: StoredFile & { name: string }; readonly file: LocalFile }[] = []
  for (const asset of files) {
    const file = localOf.get(asset.assetId)
    if (file === undefined) tell({ path: asset.name, assetId: asset.assetId, outcome: 'missing', size: asset.size ?? 0 })
    else if (file.size !== asset.size || (asset.modified !== null && file.modified !== asset.modified)) {
      tell({
        path: asset.name,
        assetId: asset.assetId,
        outcome: 'changed',
        size: file.size,
        detail: `backed up with ${asset.size} bytes and ${when(asset.modified)}; here ${file.size} bytes, ${when(file.modified)}`,
      })
    } else comparable.push({ asset, file })
  }

  const picked = sampleOf(comparable, options.sample ?? comparable.length, options.random ?? Math.random)
  const pairOf = new Map(picked.map((pair) => [pair.asset.assetId, pair]))
  options.onPicked?.(
    picked.length,
    picked.reduce((sum, pair) => sum + pair.file.size, 0),
  )
  const compare = async (entry: Parameters<typeof restoreFile>[1]): Promise<void> => {
    if (options.signal?.aborted === true) return
    const { asset, file } = pairOf.get(entry.asset_id)!
    const result = { path: asset.name, assetId: asset.assetId, size: file.size }
    try {
      const opened = await restoreFile({ ...library, albumId }, entry)
      const { offset, bytes } = await firstDifference(counted(opened.bytes, asset, options.onCompared), file.open())
      counts.bytes += bytes
      if (offset === null) tell({ ...result, outcome: 'match' })
      else
        tell({
          ...result,
          outcome: 'differs',
          offset,
          detail: `the local file differs from the stored original at byte ${offset}; the stored original decrypts and verifies, and the local file has the size and mtime backed up: it was changed or damaged here since`,
        })
    } catch (error) {
      const detail =
        error instanceof LocalReadError ? `the local file cannot be read: ${error.message}` : `the stored original cannot be read: ${(error as Error).message}`
      tell({ ...result, outcome: 'failed', detail })
    }
    counts.compared++
  }
  let window: Parameters<typeof restoreFile>[1][] = []
  for await (const entry of liveEntriesOf(library.client, albumId, pairOf.keys())) {
    if (options.signal?.aborted === true) break
    window.push(entry)
    if (window.length === WINDOW) {
      await inParallel(window, options.concurrency ?? 4, compare)
      window = []
    }
  }
  await inParallel(window, options.concurrency ?? 4, compare)
  return { albumFiles: files.length, comparable: comparable.length, ...counts, stopped: options.signal?.aborted === true && counts.compared < picked.length }
}
