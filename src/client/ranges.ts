// Part of an original, decrypted: what a video player asks for (a range of its plaintext bytes),
// from the ciphertext of only the chunks that hold it (docs/decisions/0069-video.md). The web app's
// service worker answers a video element's range requests with it (web/src/lib/video.ts), so that
// a seek far into a large video fetches and decrypts a few chunks, not everything before them.
//
// Trust: every chunk authenticates at its own place (format/stream.ts StreamSeeker), and where
// the chunks lie follows from the signed envelope (chunk size) and metadata (size), not from
// anything the server says. The whole file's SHA-256 is not checked (the player never holds the
// whole file); a chunk from anywhere else, altered or cut short fails, which is what the hash
// would catch.
import { concatBytes } from '../sdk/bytes.ts'
import type { OpenedAsset } from './files.ts'
import { ClientFormatError } from './format/errors.ts'
import { chunkSpan, HEADER_BYTES, StreamSeeker } from './format/stream.ts'

/** Fetches the original's ciphertext bytes start..end (inclusive): one HTTP Range request. */
export type CiphertextRange = (start: number, end: number) => Promise<Uint8Array>

export class OriginalRanges {
  /** The original's plaintext size: the metadata's. */
  readonly size: number
  readonly #asset: OpenedAsset
  readonly #fetch: CiphertextRange
  #seeker: Promise<StreamSeeker> | null = null

  constructor(asset: OpenedAsset, fetch: CiphertextRange) {
    this.#asset = asset
    this.#fetch = fetch
    this.size = asset.metadata.size
  }

  #open(headerBytes: Uint8Array): Promise<StreamSeeker> {
    this.#seeker ??= StreamSeeker.open(this.#asset.fileKey, headerBytes, this.size, { role: 'original', chunkSize: this.#asset.envelope.chunk_size }).catch(
      (error: unknown) => {
        this.#seeker = null // a header that did not open is asked for again by the next read
        throw error
      },
    )
    return this.#seeker
  }

  /**
   * Plaintext bytes start..end (inclusive; end past the last byte reads to the last), from the
   * chunks that hold them. Throws ClientFormatError when the server's bytes are not the stream's
   * own (`authentication`, `truncated`), RangeError for a start past the end.
   */
  async read(start: number, end: number): Promise<Uint8Array> {
    const last = Math.min(end, this.size - 1)
    if (!Number.isSafeInteger(start) || start < 0 || start > last) throw new RangeError(`bytes ${start}-${end} of ${this.size}`)
    const chunkSize = this.#asset.envelope.chunk_size
    const firstChunk = Math.floor(start / chunkSize)
    const lastChunk = Math.floor(last / chunkSize)
    const from = chunkSpan(this.size, chunkSize, firstChunk).start
    const lastSpan = chunkSpan(this.size, chunkSize, lastChunk)
    const to = lastSpan.start + lastSpan.length - 1
    let seeker: StreamSeeker
    let sealed: Uint8Array
    if (this.#seeker === null && firstChunk === 0) {
      // The first read from the start: the header comes in the same request.
      const bytes = await this.#fetch(0, to)
      seeker = await this.#open(bytes.subarray(0, HEADER_BYTES))
      sealed = bytes.subarray(HEADER_BYTES)
    } else {
      const header = this.#seeker === null ? this.#fetch(0, HEADER_BYTES - 1) : null
      ;[sealed, seeker] = await Promise.all([this.#fetch(from, to), header === null ? this.#seeker! : header.then((bytes) => this.#open(bytes))])
    }
    if (sealed.length !== to - from + 1) throw new ClientFormatError('truncated', `the server sent ${sealed.length} bytes of ${to - from + 1} asked for`)
    const parts: Uint8Array[] = []
    let at = 0
    for (let index = firstChunk; index <= lastChunk; index++) {
      const { length } = seeker.span(index)
      parts.push(await seeker.openChunk(index, sealed.subarray(at, at + length)))
      at += length
    }
    const plain = parts.length === 1 ? parts[0]! : concatBytes(...parts)
    const offset = firstChunk * chunkSize
    return plain.subarray(start - offset, last - offset + 1)
  }
}
