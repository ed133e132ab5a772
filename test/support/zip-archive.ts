// Zip archives written for the reader's tests (src/client/zip-reader.test.ts), independently of
// the reader's code: stored and deflated entries (node:zlib), data descriptors, zip64 fields and
// end records forced on small archives, names as given bytes with or without the UTF-8 flag,
// extended timestamps, and entries of any size as zeros never held in memory (a sparse archive of
// tens of GiB read through a RandomAccessSource). Every offset is answered, so that a test can
// corrupt exactly one field. The well-formed output is checked by Info-ZIP's `unzip -t`.
import { crc32, deflateRawSync } from 'node:zlib'
import type { RandomAccessSource } from '../../src/client/zip-reader.ts'

export interface ArchiveEntry {
  /** A string is written as UTF-8; bytes as they are. */
  readonly name: string | Uint8Array
  readonly data?: Uint8Array
  /** Instead of `data`: this many zero bytes, stored, never held in memory. */
  readonly zeros?: number
  readonly method?: 0 | 8
  /** Deflate's level (zlib's default unless given): 0 writes stored blocks inside the deflated stream, quickly, for data that would not compress anyway. */
  readonly level?: number
  /** Bit 11; by default set when the name is a string that is not ASCII. */
  readonly utf8Flag?: boolean
  /** Bit 3: the CRC and sizes follow the data, zeros in the local header. */
  readonly descriptor?: boolean
  /** zip64 fields in the local header and the central record even where the values are small. */
  readonly zip64?: boolean
  /** Zero bytes (not held in memory) before the local header. */
  readonly gapBefore?: number
  /** The DOS time, as the local wall clock. */
  readonly modified?: Date
  /** An extended timestamp (0x5455), seconds since the epoch. */
  readonly unixSeconds?: number
  /** Flags set in both headers besides the above (bit 0: encrypted). */
  readonly extraFlags?: number
}

export interface ArchiveOptions {
  /** zip64 end records, with all ones in the end record's fields. */
  readonly zip64End?: boolean
  readonly comment?: string
}

export interface WrittenEntry {
  /** The local header. */
  readonly offset: number
  /** The first byte of the data. */
  readonly dataOffset: number
  readonly compressedSize: number
  /** The central directory record. */
  readonly centralOffset: number
}

export interface Archive {
  readonly size: number
  readonly entries: readonly WrittenEntry[]
  readonly directoryOffset: number
  readonly directorySize: number
  /** The end-of-central-directory record. */
  readonly endOffset: number
  /** The zip64 end record, or null. */
  readonly zip64EndOffset: number | null
  /** The whole archive in memory (refused for a sparse one). */
  bytes(): Buffer
  /** The archive as a source (zeros where nothing was written), reads recorded in `reads`. */
  source(): RandomAccessSource & { readonly reads: [offset: number, length: number][] }
}

const MAX32 = 0xffff_ffff
const ZEROS = new Uint8Array(16 * 1024 * 1024)

function zerosCrc(length: number): number {
  let crc = 0
  for (let done = 0; done < length; done += ZEROS.length) crc = crc32(ZEROS.subarray(0, Math.min(ZEROS.length, length - done)), crc)
  return crc
}

class Bytes {
  #bytes: number[] = []
  u8(value: number): this {
    this.#bytes.push(value & 0xff)
    return this
  }
  u16(value: number): this {
    return this.u8(value).u8(value >>> 8)
  }
  u32(value: number): this {
    return this.u16(value & 0xffff).u16(Math.floor(value / 0x10000))
  }
  u64(value: number): this {
    return this.u32(value % 0x1_0000_0000).u32(Math.floor(value / 0x1_0000_0000))
  }
  raw(bytes: Uint8Array): this {
    for (const byte of bytes) this.#bytes.push(byte)
    return this
  }
  done(): Buffer {
    return Buffer.from(this.#bytes)
  }
}

function dos(date: Date): { time: number; date: number } {
  return {
    time: (date.getHours() << 11) | (date.getMinutes() << 5) | (date.getSeconds() >> 1),
    date: ((date.getFullYear() - 1980) << 9) | ((date.getMonth() + 1) << 5) | date.getDate(),
  }
}

export function writeArchive(entries: readonly ArchiveEntry[], options: ArchiveOptions = {}): Archive {
  const segments: { offset: number; bytes: Uint8Array }[] = []
  const central: Buffer[] = []
  const written: WrittenEntry[] = []
  let at = 0
  const put = (bytes: Uint8Array) => {
    if (bytes.length > 0) segments.push({ offset: at, bytes })
    at += bytes.length
  }
  for (const entry of entries) {
    at += entry.gapBefore ?? 0
    const name = typeof entry.name === 'string' ? Buffer.from(entry.name, 'utf8') : Buffer.from(entry.name)
    const utf8 = entry.utf8Flag ?? (typeof entry.name === 'string' && /[^\x20-\x7e]/.test(entry.name))
    const method = entry.method ?? 0
    const plain = entry.data ?? new Uint8Array(0)
    const size = entry.zeros ?? plain.length
    const crc = entry.zeros === undefined ? crc32(plain) : zerosCrc(entry.zeros)
    const stored = method === 0 ? plain : deflateRawSync(plain, entry.level === undefined ? {} : { level: entry.level })
    const compressedSize = entry.zeros ?? stored.length
    const zip64 = entry.zip64 === true || size >= MAX32 || compressedSize >= MAX32
    const flags = (entry.descriptor ? 0x0008 : 0) | (utf8 ? 0x0800 : 0) | (entry.extraFlags ?? 0)
    const { time, date } = dos(entry.modified ?? new Date(2024, 6, 14, 9, 30, 12))
    const offset = at
    const localExtra = zip64
      ? new Bytes()
          .u16(0x0001)
          .u16(16)
          .u64(entry.descriptor ? 0 : size)
          .u64(entry.descriptor ? 0 : compressedSize)
          .done()
      : Buffer.alloc(0)
    const local = new Bytes()
      .u32(0x0403_4b50)
      .u16(zip64 ? 45 : 20)
      .u16(flags)
      .u16(method)
      .u16(time)
      .u16(date)
      .u32(entry.descriptor ? 0 : crc)
      .u32(zip64 ? MAX32 : entry.descriptor ? 0 : compressedSize)
      .u32(zip64 ? MAX32 : entry.descriptor ? 0 : size)
      .u16(name.length)
      .u16(localExtra.length)
      .raw(name)
      .raw(localExtra)
      .done()
    put(local)
    const dataOffset = at
    if (entry.zeros === undefined) put(stored)
    else at += entry.zeros
    if (entry.descriptor) {
      const descriptor = new Bytes().u32(0x0807_4b50).u32(crc)
      put((zip64 ? descriptor.u64(compressedSize).u64(size) : descriptor.u32(compressedSize).u32(size)).done())
    }
    const bigOffset = entry.zip64 === true || offset >= MAX32
    const zip64Field = new Bytes()
    if (zip64) zip64Field.u64(size).u64(compressedSize)
    if (bigOffset) zip64Field.u64(offset)
    const zip64Bytes = zip64Field.done()
    const extra = new Bytes()
    if (zip64Bytes.length > 0) extra.u16(0x0001).u16(zip64Bytes.length).raw(zip64Bytes)
    if (entry.unixSeconds !== undefined)
      extra
        .u16(0x5455)
        .u16(5)
        .u8(1)
        .u32(entry.unixSeconds >>> 0)
    const extraBytes = extra.done()
    central.push(
      new Bytes()
        .u32(0x0201_4b50)
        .u16(0x0300 | 45)
        .u16(zip64 || bigOffset ? 45 : 20)
        .u16(flags)
        .u16(method)
        .u16(time)
        .u16(date)
        .u32(crc)
        .u32(zip64 ? MAX32 : compressedSize)
        .u32(zip64 ? MAX32 : size)
        .u16(name.length)
        .u16(extraBytes.length)
        .u16(0)
        .u16(0)
        .u16(0)
        .u32(name.at(-1) === 0x2f ? 0x10 : 0)
        .u32(bigOffset ? MAX32 : offset)
        .raw(name)
        .raw(extraBytes)
        .done(),
    )
    written.push({ offset, dataOffset, compressedSize, centralOffset: 0 })
  }
  const directoryOffset = at
  const withCentral = written.map((entry, i) => {
    const centralOffset = at
    put(central[i]!)
    return { ...entry, centralOffset }
  })
  const directorySize = at - directoryOffset
  const count = entries.length
  const zip64End = options.zip64End === true || count >= 0xffff || directoryOffset >= MAX32
  let zip64EndOffset: number | null = null
  if (zip64End) {
    zip64EndOffset = at
    put(new Bytes().u32(0x0606_4b50).u64(44).u16(45).u16(45).u32(0).u32(0).u64(count).u64(count).u64(directorySize).u64(directoryOffset).done())
    put(new Bytes().u32(0x0706_4b50).u32(0).u64(zip64EndOffset).u32(1).done())
  }
  const endOffset = at
  const comment = Buffer.from(options.comment ?? '', 'utf8')
  put(
    new Bytes()
      .u32(0x0605_4b50)
      .u16(0)
      .u16(0)
      .u16(zip64End ? 0xffff : count)
      .u16(zip64End ? 0xffff : count)
      .u32(zip64End ? MAX32 : directorySize)
      .u32(zip64End ? MAX32 : directoryOffset)
      .u16(comment.length)
      .raw(comment)
      .done(),
  )
  const size = at
  const sparse = segments.reduce((sum, segment) => sum + segment.bytes.length, 0) !== size
  return {
    size,
    entries: withCentral,
    directoryOffset,
    directorySize,
    endOffset,
    zip64EndOffset,
    bytes() {
      if (sparse) throw new Error('a sparse archive: read it through source()')
      return Buffer.concat(segments.map((segment) => segment.bytes))
    },
    source() {
      const reads: [number, number][] = []
      return {
        size,
        reads,
        async read(offset, length) {
          reads.push([offset, length])
          const out = new Uint8Array(Math.max(0, Math.min(length, size - offset)))
          for (const segment of segments) {
            const from = Math.max(offset, segment.offset)
            const to = Math.min(offset + out.length, segment.offset + segment.bytes.length)
            if (from < to) out.set(segment.bytes.subarray(from - segment.offset, to - segment.offset), from - offset)
          }
          return out
        },
      }
    },
  }
}

/** Bytes as a source, reads recorded. */
export function memorySource(bytes: Uint8Array): RandomAccessSource & { readonly reads: [offset: number, length: number][] } {
  const reads: [number, number][] = []
  return {
    size: bytes.length,
    reads,
    read: async (offset, length) => {
      reads.push([offset, length])
      return bytes.slice(offset, offset + length)
    },
  }
}
