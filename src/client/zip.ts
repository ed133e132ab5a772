// A zip archive written as a stream (docs/decisions/0062-selection-and-zip-downloads.md): each
// file's bytes pass through as they come and only the central directory (about 100 bytes a file)
// is held until the end. STORE only: photos and videos are compressed already. Each file's CRC-32
// follows it in a data descriptor (the sizes are known ahead, the CRC only once the bytes have
// passed). Zip64 (APPNOTE 6.3, 4.3.9 and 4.5.3) where a size, an offset or the count needs it,
// and only there, so that small archives open in every tool. Names are UTF-8 (flag bit 11).
// Runs in browsers and on Node (Uint8Array only).

export interface ZipEntry {
  /** A relative path, "/" between folders: zipPath makes one from any name. */
  readonly name: string
  /** Milliseconds since the epoch, written as the local wall clock (DOS time, 2 s steps, 1980 to 2107). */
  readonly modified: number
  /** The bytes `bytes` yields, in all: a stream of another length throws (the archive would lie about it). */
  readonly size: number
  readonly bytes: AsyncIterable<Uint8Array> | Iterable<Uint8Array>
}

const MAX32 = 0xffff_ffff
const MAX16 = 0xffff
/** "Version needed to extract": 2.0 for stored files, 4.5 with zip64. */
const VERSION = 20
const VERSION_ZIP64 = 45
/** Bit 3 (sizes and CRC in a data descriptor) and bit 11 (the name is UTF-8). */
const FLAGS = 0x0808

const CRC_TABLE = (() => {
  const table = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb8_8320 ^ (c >>> 1) : c >>> 1
    table[n] = c >>> 0
  }
  return table
})()

/** Continues a CRC-32 (ISO-HDLC, as zip uses it) over `bytes`; start from 0. */
export function crc32(crc: number, bytes: Uint8Array): number {
  let c = ~crc >>> 0
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8)
  return ~c >>> 0
}

/**
 * A path safe to extract anywhere: "/" between non-empty segments, none of them "." or "..",
 * no backslash (a separator on Windows); "file" when nothing is left.
 */
export function zipPath(name: string): string {
  const segments = name
    .replaceAll('\\', '_')
    .split('/')
    .filter((segment) => segment !== '' && segment !== '.' && segment !== '..')
  return segments.length === 0 ? 'file' : segments.join('/')
}

class Writer {
  readonly bytes: Uint8Array
  readonly #view: DataView
  #at = 0
  constructor(length: number) {
    this.bytes = new Uint8Array(length)
    this.#view = new DataView(this.bytes.buffer)
  }
  u16(value: number): this {
    this.#view.setUint16(this.#at, value, true)
    this.#at += 2
    return this
  }
  u32(value: number): this {
    this.#view.setUint32(this.#at, value, true)
    this.#at += 4
    return this
  }
  u64(value: number): this {
    this.#view.setBigUint64(this.#at, BigInt(value), true)
    this.#at += 8
    return this
  }
  raw(bytes: Uint8Array): this {
    this.bytes.set(bytes, this.#at)
    this.#at += bytes.length
    return this
  }
}

/** DOS date and time of a moment at this machine's wall clock. */
function dosTime(ms: number): { time: number; date: number } {
  const d = new Date(Math.min(Math.max(ms, Date.UTC(1980, 0, 2)), Date.UTC(2107, 11, 30)))
  return {
    time: (d.getHours() << 11) | (d.getMinutes() << 5) | (d.getSeconds() >> 1),
    date: ((d.getFullYear() - 1980) << 9) | ((d.getMonth() + 1) << 5) | d.getDate(),
  }
}

interface Written {
  readonly name: Uint8Array
  readonly time: number
  readonly date: number
  readonly crc: number
  readonly size: number
  readonly offset: number
}

function centralRecord(file: Written): Uint8Array {
  const bigSize = file.size >= MAX32
  const bigOffset = file.offset >= MAX32
  const extra = (bigSize ? 16 : 0) + (bigOffset ? 8 : 0)
  const zip64 = extra > 0
  const w = new Writer(46 + file.name.length + (zip64 ? 4 + extra : 0))
  w.u32(0x0201_4b50)
    .u16(VERSION_ZIP64)
    .u16(zip64 ? VERSION_ZIP64 : VERSION)
    .u16(FLAGS)
    .u16(0)
    .u16(file.time)
    .u16(file.date)
    .u32(file.crc)
    .u32(bigSize ? MAX32 : file.size)
    .u32(bigSize ? MAX32 : file.size)
    .u16(file.name.length)
    .u16(zip64 ? 4 + extra : 0)
    .u16(0) // comment
    .u16(0) // disk
    .u16(0) // internal attributes
    .u32(0) // external attributes
    .u32(bigOffset ? MAX32 : file.offset)
    .raw(file.name)
  if (zip64) {
    // The zip64 field holds, in this order, only the values whose 32-bit field says 0xFFFFFFFF.
    w.u16(0x0001).u16(extra)
    if (bigSize) w.u64(file.size).u64(file.size)
    if (bigOffset) w.u64(file.offset)
  }
  return w.bytes
}

function endRecords(count: number, directoryOffset: number, directorySize: number): Uint8Array {
  const zip64 = count >= MAX16 || directoryOffset >= MAX32 || directorySize >= MAX32
  const end = new Writer(22)
    .u32(0x0605_4b50)
    .u16(0)
    .u16(0)
    .u16(Math.min(count, MAX16))
    .u16(Math.min(count, MAX16))
    .u32(Math.min(directorySize, MAX32))
    .u32(Math.min(directoryOffset, MAX32))
    .u16(0).bytes
  if (!zip64) return end
  const record = new Writer(56)
    .u32(0x0606_4b50)
    .u64(44) // the record's size after this field
    .u16(VERSION_ZIP64)
    .u16(VERSION_ZIP64)
    .u32(0)
    .u32(0)
    .u64(count)
    .u64(count)
    .u64(directorySize)
    .u64(directoryOffset).bytes
  const locator = new Writer(20)
    .u32(0x0706_4b50)
    .u32(0)
    .u64(directoryOffset + directorySize)
    .u32(1).bytes
  return new Writer(record.length + locator.length + end.length).raw(record).raw(locator).raw(end).bytes
}

/**
 * The archive of `entries`, in their order, as it is written: a file's bytes are read only when
 * the archive's reader has taken what came before (pull-based, so memory holds a chunk, not a
 * file). An entry whose bytes fail ends the archive with that error: a truncated archive is never
 * passed off as whole.
 */
export async function* zipStream(entries: AsyncIterable<ZipEntry> | Iterable<ZipEntry>): AsyncGenerator<Uint8Array> {
  const encoder = new TextEncoder()
  const written: Written[] = []
  let offset = 0
  for await (const entry of entries) {
    const name = encoder.encode(zipPath(entry.name))
    const { time, date } = dosTime(entry.modified)
    const zip64 = entry.size >= MAX32
    const local = new Writer(30 + name.length + (zip64 ? 20 : 0))
      .u32(0x0403_4b50)
      .u16(zip64 ? VERSION_ZIP64 : VERSION)
      .u16(FLAGS)
      .u16(0)
      .u16(time)
      .u16(date)
      .u32(0) // CRC and sizes: in the data descriptor (bit 3)
      .u32(zip64 ? MAX32 : 0)
      .u32(zip64 ? MAX32 : 0)
      .u16(name.length)
      .u16(zip64 ? 20 : 0)
      .raw(name)
    // The zip64 field in the local header tells a reader that the descriptor's sizes are 8 bytes.
    if (zip64) local.u16(0x0001).u16(16).u64(0).u64(0)
    yield local.bytes
    let crc = 0
    let size = 0
    for await (const chunk of entry.bytes) {
      crc = crc32(crc, chunk)
      size += chunk.length
      if (size > entry.size) throw new Error(`${entry.name}: more than the ${entry.size} bytes announced`)
      yield chunk
    }
    if (size !== entry.size) throw new Error(`${entry.name}: ${size} bytes, ${entry.size} announced`)
    const descriptor = new Writer(zip64 ? 24 : 16).u32(0x0807_4b50).u32(crc)
    if (zip64) descriptor.u64(size).u64(size)
    else descriptor.u32(size).u32(size)
    yield descriptor.bytes
    written.push({ name, time, date, crc, size, offset })
    offset += local.bytes.length + size + descriptor.bytes.length
  }
  let directorySize = 0
  for (const file of written) {
    const record = centralRecord(file)
    directorySize += record.length
    yield record
  }
  yield endRecords(written.length, offset, directorySize)
}
