// Reading a zip archive where it lies, without unpacking it (issue 42; docs/decisions/0071-takeout-import.md,
// "Reading the archives"): its central directory is listed first, then any entry's bytes are
// streamed from its own range of the archive, through `DecompressionStream('deflate-raw')` when
// deflated, with their size and CRC-32 checked at the end. Everything goes through a
// RandomAccessSource: a file on disk (node/zip-file.ts, a FileHandle) or a File the web app was
// given (`blobSource`). Runs in browsers and on Node (Uint8Array, DataView, web streams only).
//
// APPNOTE 6.3.10: one disk, STORE (0) and DEFLATE (8), zip64 (4.3.14 to 4.3.16, 4.5.3), UTF-8
// names (bit 11, appendix D). Refused with a ZipError, never guessed around: anything that does
// not add up (a record not where the end record says, a count the directory cannot hold, an entry
// reaching into the next or past the directory, a local header that disagrees with the
// directory), and anything past the limits below. Every loop is bounded by the declared count and
// the directory's size, which are checked before the directory is read; no read is larger than
// about 1 MiB, so a hostile archive costs neither time nor memory.
import { crc32 } from './zip.ts'

/** An archive read at any offset: a file on disk, a File or Blob in a browser. */
export interface RandomAccessSource {
  /** The archive's length in bytes. */
  readonly size: number
  /**
   * `length` bytes from `offset`. The reader asks only within `size`, at most ZIP_READ_MAX bytes
   * at a time; an answer shorter than asked (the file shrank or changed) is refused as `truncated`.
   */
  read(offset: number, length: number): Promise<Uint8Array>
}

/** The largest central directory read: 256 MiB, about a million entries with Takeout's path lengths. */
export const ZIP_MAX_DIRECTORY_BYTES = 256 * 1024 * 1024
/** The most entries an archive may hold: a 50 GB Takeout archive of 100 KB photos and their sidecars is 1,000,000. */
export const ZIP_MAX_ENTRIES = 1_000_000
/** The longest name, in bytes as stored: PATH_MAX on Linux. */
export const ZIP_MAX_NAME_BYTES = 4096
/** The largest piece asked of a source at once (the directory is read in windows of this size). */
export const ZIP_READ_MAX = 1024 * 1024

export interface ZipLimits {
  readonly maxEntries?: number
  readonly maxDirectoryBytes?: number
  readonly maxNameBytes?: number
}

export type ZipProblem =
  /** No end-of-central-directory record at all, and not the start of a zip either. */
  | 'not-a-zip'
  /** The archive ends early: it starts as a zip but its end is missing, or a read came back short. */
  | 'truncated'
  /** The structure does not add up (records missing, overlapping, disagreeing, bytes after the end). */
  | 'malformed'
  /** The directory or an entry points outside the archive, or into the directory. */
  | 'out-of-bounds'
  /** A zip feature this reader does not take: several disks, encryption, a method other than STORE and DEFLATE, 64-bit values past 2^53. */
  | 'unsupported'
  | 'too-many-entries'
  | 'directory-too-large'
  | 'name-too-long'
  /** A name marked UTF-8 that is not, or one holding NUL. */
  | 'bad-name'
  /** An entry's local header does not say what the central directory says. */
  | 'local-header-mismatch'
  /** A deflated entry's bytes do not inflate. */
  | 'bad-data'
  /** An entry's bytes are not as many as the directory says. */
  | 'size-mismatch'
  /** An entry's bytes do not have the CRC-32 the directory says. */
  | 'crc-mismatch'

/** An archive or an entry that is not read, and why: the one error openZip and ZipArchive.stream throw (besides the source's own). */
export class ZipError extends Error {
  readonly problem: ZipProblem
  /** The entry's name, when the problem is one entry's. */
  readonly entry: string | null

  constructor(problem: ZipProblem, message: string, options: { readonly entry?: string; readonly cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'ZipError'
    this.problem = problem
    this.entry = options.entry ?? null
  }
}

export interface ZipEntryInfo {
  /** Its place in the central directory (ZipArchive.entries[index] is this entry). */
  readonly index: number
  /** The path as stored, "/" between folders (a folder's own entry ends with "/"). */
  readonly name: string
  /**
   * How the name was read: UTF-8 when flagged so (bit 11) or when its bytes are valid UTF-8
   * (macOS and others write UTF-8 without the flag), else CP437, the format's default.
   */
  readonly nameEncoding: 'utf-8' | 'cp437'
  readonly directory: boolean
  /** 0 stored, 8 deflated; others are listed and refused by stream(). */
  readonly method: number
  /** The general-purpose bit flag. */
  readonly flags: number
  readonly encrypted: boolean
  /** Bytes once read (uncompressed). */
  readonly size: number
  readonly compressedSize: number
  readonly crc32: number
  /** Where its local header starts in the archive. */
  readonly offset: number
  /** Modified, ms since the epoch: the extended timestamp (UTC) when there is one, else the DOS time as the local wall clock; null when neither is a date. */
  readonly modified: number | null
}

export interface ZipArchive {
  readonly size: number
  readonly entries: readonly ZipEntryInfo[]
  /** Whether the end records are zip64 ones. */
  readonly zip64: boolean
  /** Where the central directory starts: every entry lies before it. */
  readonly directoryOffset: number
  /**
   * An entry's bytes, read from its range of the archive only, in pieces of at most `chunkSize`
   * bytes (stored) or as they inflate. The size and CRC-32 are checked as the bytes pass and at
   * the end: the stream throws (ZipError) after its last piece when they differ, so a consumer
   * keeps nothing of a stream that did not end normally. Stopping early reads nothing more.
   */
  stream(entry: ZipEntryInfo, options?: { readonly chunkSize?: number }): AsyncGenerator<Uint8Array>
}

/** A Blob or a File (browsers, Node) as a RandomAccessSource: each read is a slice, never the whole file. */
export function blobSource(blob: Blob): RandomAccessSource {
  return {
    size: blob.size,
    read: async (offset, length) => new Uint8Array(await blob.slice(offset, offset + length).arrayBuffer()),
  }
}

const END = 0x0605_4b50
const END_LENGTH = 22
const ZIP64_LOCATOR = 0x0706_4b50
const ZIP64_LOCATOR_LENGTH = 20
const ZIP64_END = 0x0606_4b50
const ZIP64_END_LENGTH = 56
const CENTRAL = 0x0201_4b50
const CENTRAL_LENGTH = 46
const LOCAL = 0x0403_4b50
const LOCAL_LENGTH = 30
const MAX16 = 0xffff
const MAX32 = 0xffff_ffff
const FLAG_ENCRYPTED = 0x0001
const FLAG_DESCRIPTOR = 0x0008
const FLAG_STRONG_ENCRYPTION = 0x0040
const FLAG_UTF8 = 0x0800
const FLAG_MASKED_HEADERS = 0x2000
/** The flags a local header must repeat (as zip.js checks them): encryption, data descriptor, name encoding. */
const FLAGS_COMPARED = FLAG_ENCRYPTED | FLAG_DESCRIPTOR | FLAG_STRONG_ENCRYPTION | FLAG_UTF8
const EXTRA_ZIP64 = 0x0001
const EXTRA_TIMESTAMP = 0x5455
const STORE = 0
const DEFLATE = 8
/** Deflated bytes are handed to the decompressor in pieces this small: one piece inflates to at most about 64 MiB (1032:1). */
const INFLATE_INPUT_MAX = 64 * 1024

const CP437_HIGH = 'ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u00a0'
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
const encoder = new TextEncoder()

const viewOf = (bytes: Uint8Array): DataView => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)

/** A 64-bit field as a number, refused past 2^53 (no archive is that large; a value that is lies). */
function u64(view: DataView, at: number, what: string): number {
  const value = view.getBigUint64(at, true)
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new ZipError('unsupported', `${what} is past 2^53 (${value})`)
  return Number(value)
}

async function readExactly(source: RandomAccessSource, offset: number, length: number): Promise<Uint8Array> {
  if (offset < 0 || length < 0 || offset + length > source.size)
    throw new ZipError('out-of-bounds', `a read at ${offset} of ${length} bytes falls outside the ${source.size}-byte archive`)
  const bytes = length === 0 ? new Uint8Array(0) : await source.read(offset, length)
  if (bytes.length !== length)
    throw new ZipError('truncated', `the archive gave ${bytes.length} bytes at ${offset} where ${length} were asked: it is shorter than it was, or changed`)
  return bytes
}

/** An extra field's data by its id, or null; a field running past the extra block ends the search (some writers pad with zeros). */
function extraField(extra: Uint8Array, id: number): Uint8Array | null {
  const view = viewOf(extra)
  for (let at = 0; at + 4 <= extra.length; ) {
    const length = view.getUint16(at + 2, true)
    if (at + 4 + length > extra.length) return null
    if (view.getUint16(at, true) === id) return extra.subarray(at + 4, at + 4 + length)
    at += 4 + length
  }
  return null
}

function decodeName(raw: Uint8Array, flags: number, at: number): { name: string; encoding: 'utf-8' | 'cp437' } {
  if (raw.includes(0)) throw new ZipError('bad-name', `the name of the entry at ${at} holds a NUL byte`)
  try {
    return { name: utf8.decode(raw), encoding: 'utf-8' }
  } catch (error) {
    if (flags & FLAG_UTF8) throw new ZipError('bad-name', `the name of the entry at ${at} is marked UTF-8 and is not`, { cause: error })
  }
  let name = ''
  for (const byte of raw) name += byte < 0x80 ? String.fromCharCode(byte) : CP437_HIGH[byte - 0x80]!
  return { name, encoding: 'cp437' }
}

/** The name's bytes as stored (the decoding is reversed exactly: UTF-8 by TextEncoder, CP437 by its table). */
function nameBytes(entry: ZipEntryInfo): Uint8Array {
  if (entry.nameEncoding === 'utf-8') return encoder.encode(entry.name)
  return Uint8Array.from(entry.name, (char) => {
    const code = char.charCodeAt(0)
    return code < 0x80 ? code : 0x80 + CP437_HIGH.indexOf(char)
  })
}

/** DOS date and time (2 s steps) as the local wall clock, or null when the fields are not a date. */
function dosTime(date: number, time: number): number | null {
  const month = (date >> 5) & 15
  const day = date & 31
  if (month < 1 || month > 12 || day < 1) return null
  const ms = new Date(1980 + (date >> 9), month - 1, day, time >> 11, (time >> 5) & 63, (time & 31) * 2).getTime()
  return Number.isFinite(ms) ? ms : null
}

/** Sequential reads of the central directory in windows of ZIP_READ_MAX: memory holds a window, not the directory. */
class DirectoryReader {
  readonly #source: RandomAccessSource
  readonly #end: number
  #window: Uint8Array = new Uint8Array(0)
  #at = 0

  constructor(source: RandomAccessSource, end: number) {
    this.#source = source
    this.#end = end
  }

  async take(offset: number, length: number): Promise<Uint8Array> {
    if (offset + length > this.#end) throw new ZipError('malformed', `a central directory record at ${offset} runs past the directory's end (${this.#end})`)
    if (offset < this.#at || offset + length > this.#at + this.#window.length) {
      this.#window = await readExactly(this.#source, offset, Math.min(Math.max(length, ZIP_READ_MAX), this.#end - offset))
      this.#at = offset
    }
    return this.#window.subarray(offset - this.#at, offset - this.#at + length)
  }
}

interface EndRecords {
  readonly count: number
  readonly directoryOffset: number
  readonly directorySize: number
  /** Where the directory must end: the zip64 end record, or the end record. */
  readonly directoryEnd: number
  readonly zip64: boolean
}

/** No end record: an archive cut short if it starts as one, else not a zip. */
async function noEnd(source: RandomAccessSource): Promise<never> {
  if (source.size >= 4 && viewOf(await readExactly(source, 0, 4)).getUint32(0, true) === LOCAL) {
    throw new ZipError('truncated', 'the archive starts as a zip but has no end record: it was cut short')
  }
  throw new ZipError('not-a-zip', 'not a zip archive: no end-of-central-directory record')
}

async function findEnd(source: RandomAccessSource): Promise<EndRecords> {
  if (source.size < END_LENGTH) return noEnd(source)
  const tailLength = Math.min(source.size, END_LENGTH + MAX16)
  const tailStart = source.size - tailLength
  const tail = await readExactly(source, tailStart, tailLength)
  const tailView = viewOf(tail)
  // The end record is the one whose comment reaches the archive's last byte (its signature may
  // also appear inside a comment); one that stops short means bytes were appended after it.
  let at = -1
  let stopsShort = -1
  for (let i = tail.length - END_LENGTH; i >= 0; i--) {
    if (tail[i] !== 0x50 || tailView.getUint32(i, true) !== END) continue
    if (i + END_LENGTH + tailView.getUint16(i + 20, true) === tail.length) {
      at = i
      break
    }
    if (stopsShort < 0 && i + END_LENGTH + tailView.getUint16(i + 20, true) < tail.length) stopsShort = i
  }
  if (at < 0) {
    if (stopsShort >= 0)
      throw new ZipError('malformed', `${tail.length - stopsShort - END_LENGTH - tailView.getUint16(stopsShort + 20, true)} bytes follow the end record`)
    return noEnd(source)
  }
  const endOffset = tailStart + at
  const disk = tailView.getUint16(at + 4, true)
  const directoryDisk = tailView.getUint16(at + 6, true)
  const countOnDisk = tailView.getUint16(at + 8, true)
  const count = tailView.getUint16(at + 10, true)
  const directorySize = tailView.getUint32(at + 12, true)
  const directoryOffset = tailView.getUint32(at + 16, true)
  const locator = endOffset >= ZIP64_LOCATOR_LENGTH ? await readExactly(source, endOffset - ZIP64_LOCATOR_LENGTH, ZIP64_LOCATOR_LENGTH) : null
  if (locator === null || viewOf(locator).getUint32(0, true) !== ZIP64_LOCATOR) {
    // Without zip64 records the fields are what they say, even 0xFFFF (exactly 65,535 entries).
    if (disk !== 0 || directoryDisk !== 0 || countOnDisk !== count) throw new ZipError('unsupported', 'a split archive (several disks)')
    return { count, directoryOffset, directorySize, directoryEnd: endOffset, zip64: false }
  }
  const locatorView = viewOf(locator)
  const locatorOffset = endOffset - ZIP64_LOCATOR_LENGTH
  if (locatorView.getUint32(4, true) !== 0 || locatorView.getUint32(16, true) > 1) throw new ZipError('unsupported', 'a split archive (several disks)')
  const recordOffset = u64(locatorView, 8, 'the zip64 end record offset')
  if (recordOffset + ZIP64_END_LENGTH > locatorOffset)
    throw new ZipError('out-of-bounds', `the zip64 end record (at ${recordOffset}) is not before its locator (at ${locatorOffset})`)
  const record = viewOf(await readExactly(source, recordOffset, ZIP64_END_LENGTH))
  if (record.getUint32(0, true) !== ZIP64_END) throw new ZipError('malformed', `no zip64 end record at ${recordOffset}, where its locator says`)
  const recordLength = u64(record, 4, 'the zip64 end record size')
  if (recordLength < ZIP64_END_LENGTH - 12 || recordOffset + 12 + recordLength !== locatorOffset) {
    throw new ZipError('malformed', `the zip64 end record at ${recordOffset} (${recordLength} bytes) does not reach its locator at ${locatorOffset}`)
  }
  if (record.getUint32(16, true) !== 0 || record.getUint32(20, true) !== 0) throw new ZipError('unsupported', 'a split archive (several disks)')
  const count64 = u64(record, 32, 'the entry count')
  const size64 = u64(record, 40, 'the central directory size')
  const offset64 = u64(record, 48, 'the central directory offset')
  const agree =
    u64(record, 24, 'the entry count') === count64 &&
    (count === MAX16 || count === count64) &&
    (countOnDisk === MAX16 || countOnDisk === count64) &&
    (directorySize === MAX32 || directorySize === size64) &&
    (directoryOffset === MAX32 || directoryOffset === offset64)
  if (!agree) throw new ZipError('malformed', 'the end record and the zip64 end record disagree on the entries or the directory')
  return { count: count64, directoryOffset: offset64, directorySize: size64, directoryEnd: recordOffset, zip64: true }
}

/**
 * Lists an archive from its central directory: the end records (64 KiB at most read from the
 * end), then the directory in windows of ZIP_READ_MAX. No entry's data is read.
 */
export async function openZip(source: RandomAccessSource, limits: ZipLimits = {}): Promise<ZipArchive> {
  const maxEntries = limits.maxEntries ?? ZIP_MAX_ENTRIES
  const maxDirectoryBytes = limits.maxDirectoryBytes ?? ZIP_MAX_DIRECTORY_BYTES
  const maxNameBytes = limits.maxNameBytes ?? ZIP_MAX_NAME_BYTES
  if (!Number.isSafeInteger(source.size) || source.size < 0) throw new TypeError(`a source's size must be a whole number of bytes, not ${source.size}`)
  const end = await findEnd(source)
  if (end.count > maxEntries) throw new ZipError('too-many-entries', `${end.count} entries: more than the ${maxEntries} read`)
  if (end.directorySize > maxDirectoryBytes)
    throw new ZipError('directory-too-large', `a central directory of ${end.directorySize} bytes: more than the ${maxDirectoryBytes} read`)
  if (end.directoryOffset + end.directorySize > end.directoryEnd) {
    throw new ZipError(
      'out-of-bounds',
      `the central directory (${end.directorySize} bytes at ${end.directoryOffset}) runs past the end records at ${end.directoryEnd}`,
    )
  }
  if (end.directoryOffset + end.directorySize !== end.directoryEnd) {
    throw new ZipError(
      'malformed',
      `the central directory (${end.directorySize} bytes at ${end.directoryOffset}) does not end where the end records start (${end.directoryEnd})`,
    )
  }
  if (end.count * CENTRAL_LENGTH > end.directorySize)
    throw new ZipError('malformed', `${end.count} entries cannot fit in a central directory of ${end.directorySize} bytes`)

  const directory = new DirectoryReader(source, end.directoryEnd)
  const entries: ZipEntryInfo[] = []
  // Where each entry's local header starts and the least it takes (header, name, data): no two may overlap.
  const starts = new Float64Array(end.count)
  const ends = new Float64Array(end.count)
  let at = end.directoryOffset
  for (let index = 0; index < end.count; index++) {
    const head = viewOf(await directory.take(at, CENTRAL_LENGTH))
    if (head.getUint32(0, true) !== CENTRAL) throw new ZipError('malformed', `central directory record ${index} is not at ${at}`)
    const flags = head.getUint16(8, true)
    const method = head.getUint16(10, true)
    const crc = head.getUint32(16, true)
    let compressedSize = head.getUint32(20, true)
    let size = head.getUint32(24, true)
    const nameLength = head.getUint16(28, true)
    const extraLength = head.getUint16(30, true)
    const commentLength = head.getUint16(32, true)
    let disk = head.getUint16(34, true)
    let offset = head.getUint32(42, true)
    if (nameLength > maxNameBytes) throw new ZipError('name-too-long', `the name of the entry at ${at} is ${nameLength} bytes: more than ${maxNameBytes}`)
    if (nameLength === 0) throw new ZipError('bad-name', `the entry at ${at} has no name`)
    const rest = await directory.take(at + CENTRAL_LENGTH, nameLength + extraLength + commentLength)
    const { name, encoding } = decodeName(rest.subarray(0, nameLength), flags, at)
    const extra = rest.subarray(nameLength, nameLength + extraLength)
    if (size === MAX32 || compressedSize === MAX32 || offset === MAX32 || disk === MAX16) {
      // 4.5.3: the zip64 field holds, in this order, only the values whose own field is all ones.
      const field = extraField(extra, EXTRA_ZIP64)
      const needed = (size === MAX32 ? 8 : 0) + (compressedSize === MAX32 ? 8 : 0) + (offset === MAX32 ? 8 : 0) + (disk === MAX16 ? 4 : 0)
      if (field === null || field.length < needed) throw new ZipError('malformed', `${name}: its zip64 sizes or offset are missing`, { entry: name })
      const view = viewOf(field)
      let p = 0
      if (size === MAX32) {
        size = u64(view, p, `${name}: its size`)
        p += 8
      }
      if (compressedSize === MAX32) {
        compressedSize = u64(view, p, `${name}: its compressed size`)
        p += 8
      }
      if (offset === MAX32) {
        offset = u64(view, p, `${name}: its offset`)
        p += 8
      }
      if (disk === MAX16) disk = view.getUint32(p, true)
    }
    if (disk !== 0) throw new ZipError('unsupported', `${name}: on disk ${disk + 1} of a split archive`, { entry: name })
    const encrypted = (flags & (FLAG_ENCRYPTED | FLAG_STRONG_ENCRYPTION | FLAG_MASKED_HEADERS)) !== 0
    if (method === STORE && !encrypted && compressedSize !== size) {
      throw new ZipError('malformed', `${name}: stored, yet ${compressedSize} bytes in the archive for ${size}`, { entry: name })
    }
    const least = offset + LOCAL_LENGTH + nameLength + compressedSize
    if (least > end.directoryOffset)
      throw new ZipError('out-of-bounds', `${name}: its ${compressedSize} bytes at ${offset} reach past the central directory`, { entry: name })
    starts[index] = offset
    ends[index] = least
    const stamp = extraField(extra, EXTRA_TIMESTAMP)
    const modified =
      stamp !== null && stamp.length >= 5 && (stamp[0]! & 1) !== 0
        ? viewOf(stamp).getInt32(1, true) * 1000
        : dosTime(head.getUint16(14, true), head.getUint16(12, true))
    entries.push({
      index,
      name,
      nameEncoding: encoding,
      directory: name.endsWith('/'),
      method,
      flags,
      encrypted,
      size,
      compressedSize,
      crc32: crc,
      offset,
      modified,
    })
    at += CENTRAL_LENGTH + nameLength + extraLength + commentLength
  }
  if (at !== end.directoryEnd) throw new ZipError('malformed', `${end.directoryEnd - at} bytes follow the last of the ${end.count} central directory records`)
  // Writers put the records in the entries' order: sorted already, as a rule.
  const order = Array.from({ length: end.count }, (_, i) => i)
  if (order.some((i) => i > 0 && starts[i]! < starts[i - 1]!)) order.sort((a, b) => starts[a]! - starts[b]!)
  for (let i = 1; i < order.length; i++) {
    const before = order[i - 1]!
    const after = order[i]!
    if (ends[before]! > starts[after]!) {
      throw new ZipError('malformed', `${entries[before]!.name} and ${entries[after]!.name} overlap in the archive`, { entry: entries[after]!.name })
    }
  }
  return new Archive(source, entries, end.zip64, end.directoryOffset)
}

class Archive implements ZipArchive {
  readonly #source: RandomAccessSource
  readonly entries: readonly ZipEntryInfo[]
  readonly zip64: boolean
  readonly directoryOffset: number

  constructor(source: RandomAccessSource, entries: readonly ZipEntryInfo[], zip64: boolean, directoryOffset: number) {
    this.#source = source
    this.entries = entries
    this.zip64 = zip64
    this.directoryOffset = directoryOffset
  }

  get size(): number {
    return this.#source.size
  }

  async *stream(entry: ZipEntryInfo, options: { readonly chunkSize?: number } = {}): AsyncGenerator<Uint8Array> {
    if (this.entries[entry.index] !== entry) throw new TypeError(`${entry.name}: not an entry of this archive`)
    const chunkSize = options.chunkSize ?? ZIP_READ_MAX
    if (!Number.isSafeInteger(chunkSize) || chunkSize < 1 || chunkSize > ZIP_READ_MAX) throw new RangeError(`chunkSize must be 1 to ${ZIP_READ_MAX} bytes`)
    const name = entry.name
    if (entry.encrypted) throw new ZipError('unsupported', `${name}: encrypted`, { entry: name })
    if (entry.method !== STORE && entry.method !== DEFLATE)
      throw new ZipError('unsupported', `${name}: compression method ${entry.method} (only stored and deflated entries are read)`, { entry: name })
    const start = await this.#dataStart(entry)
    const pieces =
      entry.method === STORE || entry.compressedSize === 0
        ? range(this.#source, start, entry.compressedSize, chunkSize)
        : inflate(split(range(this.#source, start, entry.compressedSize, chunkSize), INFLATE_INPUT_MAX), name)
    let crc = 0
    let size = 0
    for await (const piece of pieces) {
      size += piece.length
      if (size > entry.size) throw new ZipError('size-mismatch', `${name}: more than the ${entry.size} bytes the directory says`, { entry: name })
      crc = crc32(crc, piece)
      yield piece
    }
    if (size !== entry.size) throw new ZipError('size-mismatch', `${name}: ${size} bytes, where the directory says ${entry.size}`, { entry: name })
    if (crc !== entry.crc32) throw new ZipError('crc-mismatch', `${name}: its bytes do not have the CRC-32 the directory says`, { entry: name })
  }

  /** Reads and checks the entry's local header (it must say what the directory says); answers where its data start. */
  async #dataStart(entry: ZipEntryInfo): Promise<number> {
    const name = entry.name
    const mismatch = (what: string) => new ZipError('local-header-mismatch', `${name}: the local header at ${entry.offset} ${what}`, { entry: name })
    const head = viewOf(await readExactly(this.#source, entry.offset, LOCAL_LENGTH))
    if (head.getUint32(0, true) !== LOCAL) throw mismatch('is not there')
    const flags = head.getUint16(6, true)
    const nameLength = head.getUint16(26, true)
    const extraLength = head.getUint16(28, true)
    if ((flags & FLAGS_COMPARED) !== (entry.flags & FLAGS_COMPARED)) throw mismatch('has other flags')
    if (head.getUint16(8, true) !== entry.method) throw mismatch('names another compression method')
    const expected = nameBytes(entry)
    const rest = await readExactly(this.#source, entry.offset + LOCAL_LENGTH, nameLength + extraLength)
    if (nameLength !== expected.length || expected.some((byte, i) => rest[i] !== byte)) throw mismatch('names another file')
    if ((flags & FLAG_DESCRIPTOR) === 0) {
      // Without a data descriptor the local header holds the CRC and sizes, zip64 ones in its extra field (both sizes, 4.5.3).
      let compressedSize = head.getUint32(18, true)
      let size = head.getUint32(22, true)
      if (size === MAX32 || compressedSize === MAX32) {
        const field = extraField(rest.subarray(nameLength), EXTRA_ZIP64)
        if (field === null || field.length < 16) throw mismatch('lacks its zip64 sizes')
        size = u64(viewOf(field), 0, `${name}: its size`)
        compressedSize = u64(viewOf(field), 8, `${name}: its compressed size`)
      }
      if (head.getUint32(14, true) !== entry.crc32 || size !== entry.size || compressedSize !== entry.compressedSize)
        throw mismatch('has another CRC-32 or size')
    }
    const start = entry.offset + LOCAL_LENGTH + nameLength + extraLength
    if (start + entry.compressedSize > this.directoryOffset)
      throw new ZipError('out-of-bounds', `${name}: its data reach past the central directory`, { entry: name })
    return start
  }
}

/** `length` bytes from `start`, read a piece at a time as they are asked for. */
async function* range(source: RandomAccessSource, start: number, length: number, pieceSize: number): AsyncGenerator<Uint8Array> {
  for (let done = 0; done < length; ) {
    const piece = await readExactly(source, start + done, Math.min(pieceSize, length - done))
    done += piece.length
    yield piece
  }
}

/** The same bytes in views of at most `most` bytes (no copy). */
async function* split(pieces: AsyncGenerator<Uint8Array>, most: number): AsyncGenerator<Uint8Array> {
  for await (const piece of pieces) for (let at = 0; at < piece.length; at += most) yield piece.subarray(at, at + most)
}

/** Inflates raw deflate pieces as they are pulled (the decompressor asks for input only when its output was taken). */
async function* inflate(compressed: AsyncGenerator<Uint8Array>, name: string): AsyncGenerator<Uint8Array> {
  let sourceError: unknown = null
  const input = new ReadableStream<Uint8Array<ArrayBuffer>>(
    {
      async pull(controller) {
        try {
          const next = await compressed.next()
          if (next.done) controller.close()
          else controller.enqueue(next.value as Uint8Array<ArrayBuffer>)
        } catch (error) {
          sourceError = error
          throw error
        }
      },
      async cancel() {
        await compressed.return(undefined)
      },
    },
    { highWaterMark: 0 },
  )
  const reader = input.pipeThrough(new DecompressionStream('deflate-raw')).getReader()
  let finished = false
  try {
    for (;;) {
      let next: Awaited<ReturnType<typeof reader.read>>
      try {
        next = await reader.read()
      } catch (error) {
        if (sourceError !== null) throw sourceError
        throw new ZipError('bad-data', `${name}: its deflated bytes do not inflate`, { entry: name, cause: error })
      }
      if (next.done) {
        finished = true
        return
      }
      yield next.value
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => {})
  }
}
