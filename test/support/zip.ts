// A small zip reader for the tests (Node's zlib.crc32 checks each file): it reads what
// src/client/zip.ts writes (stored files, data descriptors, zip64) from the central directory,
// independently of the writer's code, and throws at anything it does not expect.
import { crc32 } from 'node:zlib'

export interface ZipFile {
  readonly name: string
  readonly bytes: Buffer
  /** The DOS date and time written, as the local wall clock. */
  readonly modified: Date
}

const MAX32 = 0xffff_ffff

export function readZip(zip: Buffer): ZipFile[] {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]))
  if (end < 0) throw new Error('no end of central directory record')
  let count = zip.readUInt16LE(end + 10)
  let directorySize = zip.readUInt32LE(end + 12)
  let directoryOffset = zip.readUInt32LE(end + 16)
  if (count === 0xffff || directorySize === MAX32 || directoryOffset === MAX32) {
    const locator = end - 20
    if (zip.readUInt32LE(locator) !== 0x07064b50) throw new Error('zip64 values without a zip64 locator')
    const record = Number(zip.readBigUInt64LE(locator + 8))
    if (zip.readUInt32LE(record) !== 0x06064b50) throw new Error('no zip64 end of central directory record')
    count = Number(zip.readBigUInt64LE(record + 32))
    directorySize = Number(zip.readBigUInt64LE(record + 40))
    directoryOffset = Number(zip.readBigUInt64LE(record + 48))
  }
  const files: ZipFile[] = []
  let at = directoryOffset
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error(`central record ${i} missing`)
    if (zip.readUInt16LE(at + 10) !== 0) throw new Error('not stored')
    const time = zip.readUInt16LE(at + 12)
    const date = zip.readUInt16LE(at + 14)
    const crc = zip.readUInt32LE(at + 16)
    let size = zip.readUInt32LE(at + 24)
    const nameLength = zip.readUInt16LE(at + 28)
    const extraLength = zip.readUInt16LE(at + 30)
    const commentLength = zip.readUInt16LE(at + 32)
    let offset = zip.readUInt32LE(at + 42)
    const name = zip.subarray(at + 46, at + 46 + nameLength).toString('utf8')
    let extra = at + 46 + nameLength
    while (extra < at + 46 + nameLength + extraLength) {
      const id = zip.readUInt16LE(extra)
      let field = extra + 4
      if (id === 0x0001) {
        if (size === MAX32) {
          size = Number(zip.readBigUInt64LE(field))
          field += 16
        }
        if (offset === MAX32) offset = Number(zip.readBigUInt64LE(field))
      }
      extra += 4 + zip.readUInt16LE(extra + 2)
    }
    if (zip.readUInt32LE(offset) !== 0x04034b50) throw new Error(`${name}: no local header`)
    const localName = zip.subarray(offset + 30, offset + 30 + zip.readUInt16LE(offset + 26)).toString('utf8')
    if (localName !== name) throw new Error(`${name}: the local header names ${localName}`)
    const start = offset + 30 + zip.readUInt16LE(offset + 26) + zip.readUInt16LE(offset + 28)
    const bytes = zip.subarray(start, start + size)
    if (crc32(bytes) !== crc) throw new Error(`${name}: CRC-32 differs`)
    if (zip.readUInt32LE(start + size) !== 0x08074b50 || zip.readUInt32LE(start + size + 4) !== crc) throw new Error(`${name}: no data descriptor`)
    const modified = new Date(1980 + (date >> 9), ((date >> 5) & 15) - 1, date & 31, time >> 11, (time >> 5) & 63, (time & 31) * 2)
    files.push({ name, bytes, modified })
    at += 46 + nameLength + extraLength + commentLength
  }
  if (at !== directoryOffset + directorySize) throw new Error('the central directory is not the size the end record says')
  return files
}
