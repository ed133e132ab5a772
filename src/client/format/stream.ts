// STREAM (Hoang, Reyhanitabar, Rogaway, Vizár: "Online Authenticated-Encryption and its
// Nonce-Reuse Misuse-Resistance", 2015) over AES-256-GCM, as Tink's streaming AEAD and age use
// it: fixed-size chunks, each nonce carrying the chunk's index and whether it is the last, so
// that a stream cut short, reordered, spliced from another stream or extended fails to decrypt.
// Layout, limits and rationale: docs/client-format.md, "Streams". AES-256-GCM through
// primitives.ts; memory stays at about two chunks whatever the size of the stream.
import { concatBytes, utf8 } from '../../sdk/bytes.ts'
import { randomBytes, u32be } from './bytes.ts'
import { ClientFormatError } from './errors.ts'
import { GCM_NONCE_BYTES, GCM_TAG_BYTES, hkdfSha256, KEY_BYTES } from './keys.ts'
import { primitives, type AesGcm } from './primitives.ts'

export const STREAM_VERSION = 0x01
export const STREAM_KEY_INFO = 'coffer/v1/stream'
export const SALT_BYTES = 16
/** version (1) || role (1) || chunk size (u32 BE, 4) || salt (16). */
export const HEADER_BYTES = 2 + 4 + SALT_BYTES
export const DEFAULT_CHUNK_SIZE = 65_536
export const MIN_CHUNK_SIZE = 16
export const MAX_CHUNK_SIZE = 16 * 1024 * 1024
/** Chunk indexes are a u32: 2^32 chunks at most (256 TiB at the default chunk size). */
export const MAX_CHUNKS = 2 ** 32

/** What a stream holds, bound into its key (so a derivative never decrypts as an original). */
export const StreamRole = { original: 0x01, derivative: 0x02, metadata: 0x03 } as const
export type StreamRole = keyof typeof StreamRole

export interface StreamHeader {
  readonly role: StreamRole
  readonly chunkSize: number
  readonly salt: Uint8Array
}

export interface EncryptOptions {
  readonly role: StreamRole
  /** Plaintext bytes per chunk (the envelope's chunk_size); DEFAULT_CHUNK_SIZE unless given. */
  readonly chunkSize?: number
  /** For test vectors only: by default random, as it must be. */
  readonly salt?: Uint8Array
  /**
   * Continues a stream from chunk `firstChunk` (resuming an upload): the plaintext given starts
   * at byte firstChunk x chunk size, the header is not yielded again, and the chunks are sealed
   * at their places. The key and salt must be the stream's own. 0 unless given.
   */
  readonly firstChunk?: number
}

type Source = AsyncIterable<Uint8Array> | Iterable<Uint8Array>

function checkChunkSize(chunkSize: number): void {
  if (!Number.isInteger(chunkSize) || chunkSize < MIN_CHUNK_SIZE || chunkSize > MAX_CHUNK_SIZE) {
    throw new TypeError(`chunk size: an integer from ${MIN_CHUNK_SIZE} to ${MAX_CHUNK_SIZE}`)
  }
}

export function encodeHeader(header: StreamHeader): Uint8Array {
  checkChunkSize(header.chunkSize)
  if (header.salt.length !== SALT_BYTES) throw new TypeError(`salt: expected ${SALT_BYTES} bytes`)
  return concatBytes(new Uint8Array([STREAM_VERSION, StreamRole[header.role]]), u32be(header.chunkSize), header.salt)
}

export function decodeHeader(bytes: Uint8Array): StreamHeader {
  if (bytes.length < HEADER_BYTES) throw new ClientFormatError('truncated', `stream header: expected ${HEADER_BYTES} bytes, got ${bytes.length}`)
  if (bytes[0] !== STREAM_VERSION) throw new ClientFormatError('malformed', `stream header: unknown version ${bytes[0]}`)
  const role = (Object.keys(StreamRole) as StreamRole[]).find((name) => StreamRole[name] === bytes[1])
  if (role === undefined) throw new ClientFormatError('malformed', `stream header: unknown role ${bytes[1]}`)
  const chunkSize = new DataView(bytes.buffer, bytes.byteOffset + 2, 4).getUint32(0)
  if (chunkSize < MIN_CHUNK_SIZE || chunkSize > MAX_CHUNK_SIZE) throw new ClientFormatError('malformed', `stream header: chunk size ${chunkSize} out of range`)
  return { role, chunkSize, salt: bytes.slice(6, HEADER_BYTES) }
}

/** The stream's AES-256-GCM key: HKDF-SHA256(file key, salt, "coffer/v1/stream" || 0x00 || role byte). */
export async function streamKeyBytes(fileKey: Uint8Array, header: StreamHeader): Promise<Uint8Array> {
  if (fileKey.length !== KEY_BYTES) throw new TypeError(`file key: expected ${KEY_BYTES} bytes`)
  return hkdfSha256(fileKey, header.salt, concatBytes(utf8(STREAM_KEY_INFO), new Uint8Array([0, StreamRole[header.role]])), KEY_BYTES)
}

async function streamCipher(fileKey: Uint8Array, header: StreamHeader): Promise<AesGcm> {
  return primitives().aesGcm(await streamKeyBytes(fileKey, header))
}

/** Chunk i's nonce: 7 zero bytes || i (u32 BE) || 0x01 for the last chunk, else 0x00. */
export function chunkNonce(index: number, last: boolean): Uint8Array {
  const nonce = new Uint8Array(GCM_NONCE_BYTES)
  new DataView(nonce.buffer).setUint32(7, index)
  nonce[11] = last ? 1 : 0
  return nonce
}

/** Ciphertext bytes for a plaintext of `size` bytes: the header, the plaintext, a tag per chunk (an empty stream has one, empty, chunk). */
export function ciphertextSize(size: number, chunkSize: number = DEFAULT_CHUNK_SIZE): number {
  checkChunkSize(chunkSize)
  return HEADER_BYTES + size + GCM_TAG_BYTES * Math.max(1, Math.ceil(size / chunkSize))
}

/** A FIFO of byte pieces that hands out exact lengths without concatenating everything it holds. */
class ByteQueue {
  #pieces: Uint8Array[] = []
  #length = 0
  get length(): number {
    return this.#length
  }

  push(piece: Uint8Array): void {
    if (piece.length === 0) return
    this.#pieces.push(piece)
    this.#length += piece.length
  }

  take(count: number): Uint8Array<ArrayBuffer> {
    const first = this.#pieces[0]
    // A piece of exactly the length asked for (a file read in chunk-sized pieces) goes out as it
    // is: a copy per chunk is garbage the collector has to go through.
    if (first !== undefined && first.length === count && first.buffer instanceof ArrayBuffer) {
      this.#pieces.shift()
      this.#length -= count
      return first as Uint8Array<ArrayBuffer>
    }
    const out = new Uint8Array(count)
    let filled = 0
    while (filled < count) {
      const piece = this.#pieces[0]!
      const used = Math.min(piece.length, count - filled)
      out.set(piece.subarray(0, used), filled)
      filled += used
      if (used === piece.length) this.#pieces.shift()
      else this.#pieces[0] = piece.subarray(used)
    }
    this.#length -= count
    return out
  }
}

/**
 * Encrypts a plaintext stream: yields the header, then each chunk as it fills. A chunk is
 * sealed only once the next byte (or the end) is seen, so that the last one is flagged.
 */
export async function* encryptStream(fileKey: Uint8Array, plaintext: Source, options: EncryptOptions): AsyncGenerator<Uint8Array> {
  const header = { role: options.role, chunkSize: options.chunkSize ?? DEFAULT_CHUNK_SIZE, salt: options.salt ?? randomBytes(SALT_BYTES) }
  const headerBytes = encodeHeader(header)
  const cipher = await streamCipher(fileKey, header)
  const seal = (chunk: Uint8Array, index: number, last: boolean): Promise<Uint8Array> => {
    if (index >= MAX_CHUNKS || (index === MAX_CHUNKS - 1 && !last)) throw new ClientFormatError('limit', `a stream holds at most ${MAX_CHUNKS} chunks`)
    return cipher.seal(chunkNonce(index, last), headerBytes, chunk)
  }
  let index = options.firstChunk ?? 0
  if (!Number.isInteger(index) || index < 0) throw new TypeError('firstChunk: a chunk index')
  if (index > 0 && options.salt === undefined) throw new TypeError('firstChunk: continuing a stream needs its salt')
  if (index === 0) yield headerBytes
  const pending = new ByteQueue()
  for await (const piece of plaintext) {
    pending.push(piece)
    while (pending.length > header.chunkSize) yield await seal(pending.take(header.chunkSize), index++, false)
  }
  yield await seal(pending.take(pending.length), index, true)
}

/**
 * Decrypts a stream made by encryptStream, yielding each chunk's plaintext once it
 * authenticates. Throws ClientFormatError: `truncated` when the stream ends before its last
 * chunk, `trailing-data` when bytes follow it, `authentication` when a chunk does not
 * authenticate at its place (wrong key, altered, reordered or from another stream), `malformed`
 * for a header that is not v1. `expected`, when given, must match the header (role, chunk size).
 */
export async function* decryptStream(
  fileKey: Uint8Array,
  ciphertext: Source,
  expected: Partial<Pick<StreamHeader, 'role' | 'chunkSize'>> = {},
): AsyncGenerator<Uint8Array> {
  const pending = new ByteQueue()
  let header: StreamHeader | null = null
  let headerBytes: Uint8Array = new Uint8Array(0)
  let cipher: AesGcm | null = null
  let index = 0
  const open = (sealed: Uint8Array, last: boolean): Promise<Uint8Array | null> => cipher!.open(chunkNonce(index, last), headerBytes, sealed)
  const sealedSize = (): number => header!.chunkSize + GCM_TAG_BYTES
  for await (const piece of ciphertext) {
    pending.push(piece)
    if (header === null) {
      if (pending.length < HEADER_BYTES) continue
      headerBytes = pending.take(HEADER_BYTES)
      header = decodeHeader(headerBytes)
      if (expected.role !== undefined && expected.role !== header.role)
        throw new ClientFormatError('malformed', `stream header: role ${header.role}, expected ${expected.role}`)
      if (expected.chunkSize !== undefined && expected.chunkSize !== header.chunkSize)
        throw new ClientFormatError('malformed', `stream header: chunk size ${header.chunkSize}, expected ${expected.chunkSize}`)
      cipher = await streamCipher(fileKey, header)
    }
    // A full chunk followed by more bytes is not the last.
    while (pending.length > sealedSize()) {
      if (index >= MAX_CHUNKS - 1) throw new ClientFormatError('limit', `a stream holds at most ${MAX_CHUNKS} chunks`)
      const sealed = pending.take(sealedSize())
      const plain = await open(sealed, false)
      if (plain === null) {
        if ((await open(sealed, true)) !== null) throw new ClientFormatError('trailing-data', `bytes follow the last chunk (chunk ${index})`)
        throw new ClientFormatError('authentication', `chunk ${index} fails to authenticate: altered, reordered, from another stream, or a wrong key`)
      }
      yield plain
      index += 1
    }
  }
  if (header === null) throw new ClientFormatError('truncated', `stream ends inside its header (${pending.length} of ${HEADER_BYTES} bytes)`)
  if (pending.length < GCM_TAG_BYTES) throw new ClientFormatError('truncated', `stream ends inside chunk ${index}`)
  const sealed = pending.take(pending.length)
  const plain = await open(sealed, true)
  if (plain === null) {
    if (sealed.length === sealedSize() && (await open(sealed, false)) !== null)
      throw new ClientFormatError('truncated', `stream ends after chunk ${index}, which is not the last`)
    throw new ClientFormatError(
      'authentication',
      `last chunk (${index}) fails to authenticate: altered, cut short, reordered, from another stream, or a wrong key`,
    )
  }
  if (plain.length === 0 && index > 0) throw new ClientFormatError('malformed', 'an empty last chunk follows other chunks (v1 seals a full last chunk instead)')
  yield plain
}

/** Where a chunk of a stream lies in its ciphertext: its first byte and its sealed length. */
export interface ChunkSpan {
  readonly start: number
  readonly length: number
}

/** Chunks in a stream of `size` plaintext bytes: an empty plaintext has one, empty. */
export const chunkCount = (size: number, chunkSize: number): number => Math.max(1, Math.ceil(size / chunkSize))

/** Chunk `index`'s place in the ciphertext of a stream of `size` plaintext bytes (chunk i starts at 22 + i × (C + 16); the last is short). */
export function chunkSpan(size: number, chunkSize: number, index: number): ChunkSpan {
  const plain = index === chunkCount(size, chunkSize) - 1 ? size - index * chunkSize : chunkSize
  return { start: HEADER_BYTES + index * (chunkSize + GCM_TAG_BYTES), length: plain + GCM_TAG_BYTES }
}

/**
 * Random access to a stream whose plaintext size is known (an original's, from its signed
 * metadata): which chunks hold a plaintext range, where they lie in the ciphertext, and each
 * chunk opened at its place. Opening authenticates as decryptStream does, chunk by chunk: the
 * index and the last-chunk flag in the nonce make a chunk from another place, another stream or a
 * cut-short stream fail, so a reader that never sees the rest of the stream still gets only the
 * stream's own bytes at the place asked for (docs/client-format.md, "Streams": seeking).
 */
export class StreamSeeker {
  readonly size: number
  readonly chunkSize: number
  /** Chunks in the stream: an empty plaintext has one, empty. */
  readonly chunks: number
  readonly #headerBytes: Uint8Array
  readonly #cipher: AesGcm

  private constructor(size: number, headerBytes: Uint8Array, header: StreamHeader, cipher: AesGcm) {
    this.size = size
    this.chunkSize = header.chunkSize
    this.chunks = chunkCount(size, header.chunkSize)
    this.#headerBytes = headerBytes
    this.#cipher = cipher
  }

  /** From the stream's first HEADER_BYTES bytes and its plaintext size; `expected` as decryptStream's. Throws ClientFormatError. */
  static async open(
    fileKey: Uint8Array,
    headerBytes: Uint8Array,
    size: number,
    expected: Partial<Pick<StreamHeader, 'role' | 'chunkSize'>> = {},
  ): Promise<StreamSeeker> {
    const header = decodeHeader(headerBytes.subarray(0, HEADER_BYTES))
    if (expected.role !== undefined && expected.role !== header.role)
      throw new ClientFormatError('malformed', `stream header: role ${header.role}, expected ${expected.role}`)
    if (expected.chunkSize !== undefined && expected.chunkSize !== header.chunkSize)
      throw new ClientFormatError('malformed', `stream header: chunk size ${header.chunkSize}, expected ${expected.chunkSize}`)
    if (!Number.isSafeInteger(size) || size < 0 || Math.ceil(size / header.chunkSize) > MAX_CHUNKS)
      throw new TypeError('size: a plaintext size the stream can hold')
    return new StreamSeeker(size, headerBytes.slice(0, HEADER_BYTES), header, await streamCipher(fileKey, header))
  }

  /** The chunk holding plaintext byte `offset` (0 to size - 1; 0 for an empty stream). */
  chunkOf(offset: number): number {
    return Math.min(this.chunks - 1, Math.floor(offset / this.chunkSize))
  }

  /** Chunk `index`'s place in the ciphertext. */
  span(index: number): ChunkSpan {
    return chunkSpan(this.size, this.chunkSize, index)
  }

  /** Chunk `index`'s plaintext from its sealed bytes; throws ClientFormatError `authentication` when they are not that chunk's. */
  async openChunk(index: number, sealed: Uint8Array): Promise<Uint8Array> {
    if (sealed.length !== this.span(index).length)
      throw new ClientFormatError('truncated', `chunk ${index}: ${sealed.length} bytes, expected ${this.span(index).length}`)
    const plain = await this.#cipher.open(chunkNonce(index, index === this.chunks - 1), this.#headerBytes, sealed)
    if (plain === null)
      throw new ClientFormatError('authentication', `chunk ${index} fails to authenticate: altered, from another place or stream, or a wrong key`)
    return plain
  }
}

async function collect(chunks: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = []
  for await (const chunk of chunks) parts.push(chunk)
  return concatBytes(...parts)
}

/** encryptStream over bytes in memory. */
export function encryptBytes(fileKey: Uint8Array, plaintext: Uint8Array, options: EncryptOptions): Promise<Uint8Array> {
  return collect(encryptStream(fileKey, [plaintext], options))
}

/** decryptStream over bytes in memory. */
export function decryptBytes(
  fileKey: Uint8Array,
  ciphertext: Uint8Array,
  expected: Partial<Pick<StreamHeader, 'role' | 'chunkSize'>> = {},
): Promise<Uint8Array> {
  return collect(decryptStream(fileKey, [ciphertext], expected))
}
