// The blob-store port: content-addressed ciphertext, named by its SHA-256 (hex). Bytes are
// streamed, never held whole in memory. A local folder implements it today; an object store
// can follow behind the same methods (put = verified upload then atomic publish; open = a
// ranged read; remove = delete by name; listing only for garbage collection).
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
  /**
   * Streams `source` into the store, hashing as it goes; keeps the bytes only when their
   * SHA-256 and length equal the declaration, and only once they are on disk (fsynced).
   */
  put(hash: string, size: number, source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<PutOutcome>
  /** The stored size, or null when the blob is not in the store. */
  size(hash: string): Promise<number | null>
  /** A stream of the blob's bytes (or of one range of them: only that range is read). */
  open(hash: string, range?: ByteRange): Readable
  /**
   * Removes the blob unless its file was modified after `unlessModifiedSince` (wall-clock ms);
   * true when this call removed it (of racing removals, one).
   */
  remove(hash: string, unlessModifiedSince?: number): Promise<boolean>
  /** Removes what interrupted writes left behind; answers how many files it removed. */
  cleanLeftovers(): Promise<number>
  /** The store answers (readiness). */
  ping(): Promise<void>
}
