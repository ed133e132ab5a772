// The blob-store port: content-addressed ciphertext, named by its SHA-256 (hex). Bytes are
// streamed, never held whole in memory. Two stores implement it, chosen at start-up: a local
// (or shared) folder and an S3-compatible bucket. put = verified upload then atomic publish;
// open = a ranged read; sha256 = a deep check's re-hash; remove = delete by name; list for
// garbage collection, fsck and copies. Parts of a blob being uploaded in pieces (decision 0034)
// live in a namespace of their own, which list, size and open never see.
import type { Readable } from 'node:stream'

export type PutOutcome =
  /** The bytes matched the declaration and are durable under their hash. */
  | { readonly kind: 'stored' }
  /** More bytes than declared arrived, or fewer, or their SHA-256 differs: nothing was kept. */
  | { readonly kind: 'mismatch'; readonly detail: string }

export interface ByteRange {
  /** First byte, inclusive. */
  readonly start: number
  /** Last byte, inclusive. */
  readonly end: number
}

export interface BlobStore {
  /** `folder` or `s3`: what the logs and the operator's tools name. */
  readonly kind: 'folder' | 's3'
  /** Where the bytes are, for messages (a folder's path, or `s3://bucket/prefix`). */
  readonly location: string
  /**
   * Streams `source` into the store, hashing as it goes; keeps the bytes only when their
   * SHA-256 and length equal the declaration, and only once they are durable.
   */
  put(hash: string, size: number, source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<PutOutcome>
  /** The stored size, or null when the blob is not in the store. */
  size(hash: string): Promise<number | null>
  /**
   * A stream of the blob's bytes (or of one range of them: only that range is read), once the
   * store has answered: a store that cannot be reached rejects here, before anything is sent.
   */
  open(hash: string, range?: ByteRange): Promise<Readable>
  /** The SHA-256 (hex) of the bytes the store holds under `hash`, all read again (a deep check). */
  sha256(hash: string): Promise<string>
  /**
   * Removes the blob unless it was published after `unlessModifiedSince` (wall-clock ms);
   * true when this call found it and removed it.
   */
  remove(hash: string, unlessModifiedSince?: number): Promise<boolean>
  /**
   * The hash of every blob, in hash order. A blob published or removed while the walk runs may
   * or may not be seen.
   */
  list(): AsyncIterable<string>
  /** Removes what interrupted writes left behind (none of this process's writes in progress); answers how many. */
  cleanLeftovers(): Promise<number>
  /** The store answers (readiness). */
  ping(): Promise<void>
  /**
   * Streams `source` into the parts namespace as `name` of blob `hash` of upload `uploadId`; keeps
   * it only when its length is `size` and, when `sha256` (hex) is given, its SHA-256 is that, and
   * only once durable. Parts are never seen by list, size or open.
   */
  putPart(
    uploadId: string,
    hash: string,
    name: string,
    size: number,
    source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
    sha256?: string,
  ): Promise<PutOutcome>
  /** A stream of a part's bytes; rejects when the part is not there. */
  openPart(uploadId: string, hash: string, name: string): Promise<Readable>
  /** Removes one part (absent: nothing to do). */
  removePart(uploadId: string, hash: string, name: string): Promise<void>
  /** Removes every part of the upload's blob `hash`, or of the whole upload. */
  removeParts(uploadId: string, hash?: string): Promise<void>
  /** The id of every upload that has parts in the store. */
  partUploads(): AsyncIterable<string>
  /**
   * A URL that serves the blob's bytes without this server for `expiresInS` seconds (a bucket's
   * presigned GET), or undefined for a store that has none (the folder).
   */
  readonly presignedDownload?: (hash: string, expiresInS: number) => Promise<string>
}

/**
 * What every method throws when the store cannot be reached or fails on its side (a bucket's
 * endpoint down, refusing, or answering 5xx): nothing is wrong with the request, and it may
 * succeed when tried again. The HTTP edge answers 503 with Retry-After.
 */
export class BlobStoreUnavailableError extends Error {
  constructor(cause: Error) {
    super(cause.message, { cause })
    this.name = 'BlobStoreUnavailableError'
  }
}

export const BLOB_NAME = /^[0-9a-f]{64}$/

/** An upload session's id (a canonical UUID): the parts namespace's first level. */
export const UPLOAD_NAME = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
/** A part's name inside its blob's folder (the service's `<offset>-<random hex>`). */
export const PART_NAME = /^[0-9a-z][0-9a-z-]{0,99}$/

/** The path segments of a part (or of a blob's or an upload's parts), each checked. */
export function partSegments(uploadId: string, hash?: string, name?: string): string[] {
  if (!UPLOAD_NAME.test(uploadId)) throw new Error(`not an upload id: ${uploadId}`)
  if (hash !== undefined && !BLOB_NAME.test(hash)) throw new Error(`not a blob name: ${hash}`)
  if (name !== undefined && !PART_NAME.test(name)) throw new Error(`not a part name: ${name}`)
  return [uploadId, ...(hash === undefined ? [] : [hash]), ...(name === undefined ? [] : [name])]
}
