import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { crc32 } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { memorySource, writeArchive, type ArchiveEntry } from '../../test/support/zip-archive.ts'
import { zipStream, type ZipEntry } from './zip.ts'
import {
  blobSource,
  openZip,
  ZIP_READ_MAX,
  ZipError,
  type RandomAccessSource,
  type ZipArchive,
  type ZipEntryInfo,
  type ZipLimits,
  type ZipProblem,
} from './zip-reader.ts'

const GiB = 1024 * 1024 * 1024
const MiB = 1024 * 1024

/** Bytes that do not compress, the same on every run. */
function noise(length: number, seed: number): Uint8Array {
  const bytes = new Uint8Array(length)
  let x = seed >>> 0 || 1
  for (let i = 0; i < length; i++) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    bytes[i] = x & 0xff
  }
  return bytes
}

const photo = noise(300_000, 7)
const sidecar = Buffer.from(`{"title":"IMG_0001.jpg","photoTakenTime":{"timestamp":"1563188112"}}\n`.repeat(300))
const small = noise(5_000, 11)

async function read(zip: ZipArchive, entry: ZipEntryInfo, options: { chunkSize?: number } = {}): Promise<{ bytes: Buffer; pieces: number }> {
  const pieces: Uint8Array[] = []
  for await (const piece of zip.stream(entry, options)) pieces.push(piece)
  return { bytes: Buffer.concat(pieces), pieces: pieces.length }
}

/** The problem a promise is refused with; a promise that resolves, or fails otherwise, fails the test. */
async function problemOf(promise: Promise<unknown>): Promise<ZipProblem> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  )
  expect(error, 'refused with a ZipError').toBeInstanceOf(ZipError)
  return (error as ZipError).problem
}

const listing = (source: RandomAccessSource, limits?: ZipLimits) => problemOf(openZip(source, limits))
const streaming = async (zip: ZipArchive, entry: ZipEntryInfo) => problemOf(read(zip, entry))

function entryNamed(zip: ZipArchive, name: string): ZipEntryInfo {
  const entry = zip.entries.find((e) => e.name === name)
  if (!entry) throw new Error(`no ${name} in ${zip.entries.map((e) => e.name).join(', ')}`)
  return entry
}

/** Info-ZIP checks every CRC and the structure: what it accepts is a well-formed archive. */
async function unzipAccepts(bytes: Uint8Array): Promise<void> {
  const folder = await mkdtemp(join(tmpdir(), 'coffer-zip-reader-'))
  try {
    await writeFile(join(folder, 'a.zip'), bytes)
    const { stdout } = await promisify(execFile)('unzip', ['-t', join(folder, 'a.zip')])
    expect(stdout).toContain('No errors detected')
  } finally {
    await rm(folder, { recursive: true })
  }
}

const takeout: ArchiveEntry[] = [
  { name: 'Takeout/Google Photos/Photos from 2019/IMG_0001.jpg', data: photo },
  { name: 'Takeout/Google Photos/Photos from 2019/IMG_0001.jpg.supplemental-metadata.json', data: sidecar, method: 8, descriptor: true },
  { name: 'Takeout/Google Photos/Été à Lisbonne/' },
  { name: 'Takeout/Google Photos/Été à Lisbonne/empty.jpg' },
  { name: 'Takeout/Google Photos/Été à Lisbonne/写真 😀.jpg', data: small, method: 8, unixSeconds: 1_700_000_000 },
]

/** The entries of `takeout`, first in the archive. */
function expectTakeoutListing(zip: ZipArchive): void {
  expect(
    zip.entries.slice(0, takeout.length).map((e) => ({
      name: e.name,
      method: e.method,
      size: e.size,
      crc32: e.crc32,
      directory: e.directory,
      encrypted: e.encrypted,
      nameEncoding: e.nameEncoding,
    })),
  ).toEqual([
    { name: takeout[0]!.name, method: 0, size: photo.length, crc32: crc32(photo), directory: false, encrypted: false, nameEncoding: 'utf-8' },
    { name: takeout[1]!.name, method: 8, size: sidecar.length, crc32: crc32(sidecar), directory: false, encrypted: false, nameEncoding: 'utf-8' },
    { name: 'Takeout/Google Photos/Été à Lisbonne/', method: 0, size: 0, crc32: 0, directory: true, encrypted: false, nameEncoding: 'utf-8' },
    { name: 'Takeout/Google Photos/Été à Lisbonne/empty.jpg', method: 0, size: 0, crc32: 0, directory: false, encrypted: false, nameEncoding: 'utf-8' },
    {
      name: 'Takeout/Google Photos/Été à Lisbonne/写真 😀.jpg',
      method: 8,
      size: small.length,
      crc32: crc32(small),
      directory: false,
      encrypted: false,
      nameEncoding: 'utf-8',
    },
  ])
  expect(zip.entries[1]!.compressedSize).toBeLessThan(sidecar.length / 10)
  expect(zip.entries.map((e) => e.index)).toEqual([...zip.entries.keys()])
  // The DOS time as the local wall clock; the extended timestamp, in UTC, where there is one.
  expect(zip.entries[0]!.modified).toBe(new Date(2024, 6, 14, 9, 30, 12).getTime())
  expect(zip.entries[4]!.modified).toBe(1_700_000_000_000)
}

async function expectTakeoutBytes(zip: ZipArchive): Promise<void> {
  expect((await read(zip, zip.entries[0]!)).bytes.equals(photo)).toBe(true)
  expect((await read(zip, zip.entries[1]!)).bytes.equals(sidecar)).toBe(true)
  expect(await read(zip, zip.entries[2]!)).toEqual({ bytes: Buffer.alloc(0), pieces: 0 })
  expect(await read(zip, zip.entries[3]!)).toEqual({ bytes: Buffer.alloc(0), pieces: 0 })
  expect((await read(zip, zip.entries[4]!)).bytes.equals(small)).toBe(true)
}

describe('openZip: the listing', () => {
  it('lists stored and deflated entries, a folder, an empty file and UTF-8 names from the end records and the directory alone', async () => {
    const archive = writeArchive(takeout)
    await unzipAccepts(archive.bytes())
    const source = memorySource(archive.bytes())
    const zip = await openZip(source)
    expectTakeoutListing(zip)
    expect(zip.zip64).toBe(false)
    expect(zip.directoryOffset).toBe(archive.directoryOffset)
    expect(zip.entries.map((e) => e.offset)).toEqual(archive.entries.map((e) => e.offset))
    expect(zip.entries.map((e) => e.compressedSize)).toEqual(archive.entries.map((e) => e.compressedSize))
    // The tail (end record and a comment's room) and then only the directory and the end records.
    const [tail, ...rest] = source.reads
    expect(tail).toEqual([Math.max(0, archive.size - 65_557), Math.min(archive.size, 65_557)])
    for (const [offset] of rest) expect(offset).toBeGreaterThanOrEqual(archive.directoryOffset)
    await expectTakeoutBytes(zip)
  })

  it('reads what src/client/zip.ts writes (stored files, each with a data descriptor), byte for byte', async () => {
    const modified = new Date(2023, 0, 2, 3, 4, 6).getTime()
    const files: ZipEntry[] = [
      { name: 'IMG_0001.jpg', modified, size: photo.length, bytes: [photo.subarray(0, 100_000), photo.subarray(100_000)] },
      { name: 'Été/photo ü.png', modified, size: small.length, bytes: [small] },
      { name: 'empty.txt', modified, size: 0, bytes: [] },
    ]
    const parts: Uint8Array[] = []
    for await (const part of zipStream(files)) parts.push(part)
    const zip = await openZip(memorySource(Buffer.concat(parts)))
    expect(zip.entries.map((e) => [e.name, e.size, e.flags & 0x0808, e.modified])).toEqual([
      ['IMG_0001.jpg', photo.length, 0x0808, modified],
      ['Été/photo ü.png', small.length, 0x0808, modified],
      ['empty.txt', 0, 0x0808, modified],
    ])
    expect((await read(zip, zip.entries[0]!)).bytes.equals(photo)).toBe(true)
    expect((await read(zip, zip.entries[1]!)).bytes.equals(small)).toBe(true)
    expect((await read(zip, zip.entries[2]!)).bytes.length).toBe(0)
  })

  it('reads zip64 records and fields (sizes and offsets in the local headers and the directory, zip64 end records) as the plain ones', async () => {
    for (const descriptor of [false, true]) {
      const archive = writeArchive(
        takeout.map((entry) => ({ ...entry, zip64: true, descriptor: entry.descriptor === true || descriptor })),
        { zip64End: true },
      )
      expect(archive.zip64EndOffset).not.toBeNull()
      await unzipAccepts(archive.bytes())
      const zip = await openZip(memorySource(archive.bytes()))
      expect(zip.zip64).toBe(true)
      expectTakeoutListing(zip)
      expect(zip.entries.map((e) => e.offset)).toEqual(archive.entries.map((e) => e.offset))
      await expectTakeoutBytes(zip)
    }
  })

  it('lists past 65,535 entries (zip64 end records), reading the directory a window at a time', async () => {
    const files = Array.from({ length: 70_000 }, (_, i) => ({
      name: `Takeout/Google Photos/Photos from 2019/IMG_${i}.jpg`,
      modified: 0,
      size: 1,
      bytes: [new Uint8Array([i & 255])],
    }))
    const parts: Uint8Array[] = []
    for await (const part of zipStream(files)) parts.push(part)
    const bytes = Buffer.concat(parts)
    const source = memorySource(bytes)
    const zip = await openZip(source)
    expect(zip.zip64).toBe(true)
    expect(zip.entries.length).toBe(70_000)
    expect(zip.entries[69_999]!.name).toBe('Takeout/Google Photos/Photos from 2019/IMG_69999.jpg')
    expect([...(await read(zip, zip.entries[69_999]!)).bytes]).toEqual([69_999 & 255])
    expect(bytes.length - zip.directoryOffset).toBeGreaterThan(5 * ZIP_READ_MAX)
    for (const [, length] of source.reads) expect(length).toBeLessThanOrEqual(ZIP_READ_MAX)
  })

  it('reads an entry over 4 GiB at an offset over 4 GiB (a sparse 12 GiB archive), and only its own range', async () => {
    const archive = writeArchive([
      { name: 'IMG_0001.jpg', data: photo },
      { name: 'VID_0001.mp4', zeros: 5 * GiB, gapBefore: 6 * GiB },
      { name: 'VID_0001.mp4.supplemental-metadata.json', data: sidecar, method: 8 },
    ])
    expect(archive.size).toBeGreaterThan(11 * GiB)
    const source = archive.source()
    const zip = await openZip(source)
    expect(zip.zip64).toBe(true) // the directory starts past 4 GiB
    const video = entryNamed(zip, 'VID_0001.mp4')
    expect([video.size, video.compressedSize, video.offset]).toEqual([5 * GiB, 5 * GiB, archive.entries[1]!.offset])
    expect(video.offset).toBeGreaterThan(6 * GiB)
    const json = entryNamed(zip, 'VID_0001.mp4.supplemental-metadata.json')
    expect(json.offset).toBeGreaterThan(11 * GiB)
    expect((await read(zip, json)).bytes.equals(sidecar)).toBe(true)
    // The video's first pieces, then stop: nothing else is read.
    source.reads.length = 0
    let pieces = 0
    for await (const piece of zip.stream(video)) {
      expect(piece.length).toBe(ZIP_READ_MAX)
      if (++pieces === 3) break
    }
    const dataOffset = archive.entries[1]!.dataOffset
    expect(source.reads).toEqual([
      [video.offset, 30],
      [video.offset + 30, 'VID_0001.mp4'.length + 20],
      [dataOffset, ZIP_READ_MAX],
      [dataOffset + ZIP_READ_MAX, ZIP_READ_MAX],
      [dataOffset + 2 * ZIP_READ_MAX, ZIP_READ_MAX],
    ])
  })

  it('reads names marked UTF-8, UTF-8 names without the mark (macOS), and CP437 names (the default); refuses a marked name that is not UTF-8', async () => {
    const cp437 = Uint8Array.from([0x43, 0x61, 0x66, 0x82, 0x20, 0x94, 0x9a, 0xe1, 0x2e, 0x6a, 0x70, 0x67]) // "Café öÜß.jpg"
    const archive = writeArchive([
      { name: 'Été.jpg', data: small },
      { name: Buffer.from('Fête.jpg', 'utf8'), data: small, utf8Flag: false },
      { name: cp437, data: small, utf8Flag: false },
    ])
    const zip = await openZip(memorySource(archive.bytes()))
    expect(zip.entries.map((e) => [e.name, e.nameEncoding, e.flags & 0x0800])).toEqual([
      ['Été.jpg', 'utf-8', 0x0800],
      ['Fête.jpg', 'utf-8', 0],
      ['Café öÜß.jpg', 'cp437', 0],
    ])
    // Each name is compared with its local header's bytes, CP437 ones too.
    for (const entry of zip.entries) expect((await read(zip, entry)).bytes.equals(small)).toBe(true)

    const marked = writeArchive([{ name: cp437, data: small, utf8Flag: true }])
    expect(await listing(memorySource(marked.bytes()))).toBe('bad-name')
    const nul = writeArchive([{ name: Buffer.from('a\0b.jpg'), data: small }])
    expect(await listing(memorySource(nul.bytes()))).toBe('bad-name')
  })
})

/** The archive's bytes with `write` applied (a copy). */
function patched(bytes: Buffer, write: (b: Buffer) => void): Buffer {
  const copy = Buffer.from(bytes)
  write(copy)
  return copy
}

describe('openZip: limits and malformed archives', () => {
  const archive = writeArchive(takeout)
  const bytes = archive.bytes()
  const zip64 = writeArchive(takeout, { zip64End: true })
  const zip64Bytes = zip64.bytes()
  const record = zip64.zip64EndOffset!

  it('refuses more entries than the limit, however they are declared, before reading the directory', async () => {
    const source = memorySource(bytes)
    expect(await listing(source, { maxEntries: 4 })).toBe('too-many-entries')
    expect(source.reads.length).toBe(2) // the tail and where a zip64 locator would be
    // A zip64 count of 2^40 with the default limit.
    const huge = patched(zip64Bytes, (b) => {
      b.writeBigUInt64LE(2n ** 40n, record + 24)
      b.writeBigUInt64LE(2n ** 40n, record + 32)
    })
    expect(await listing(memorySource(huge))).toBe('too-many-entries')
    // A count under the limit that the directory cannot hold.
    const crowded = patched(bytes, (b) => {
      b.writeUInt16LE(60_000, archive.endOffset + 8)
      b.writeUInt16LE(60_000, archive.endOffset + 10)
    })
    const crowdedSource = memorySource(crowded)
    expect(await listing(crowdedSource)).toBe('malformed')
    expect(crowdedSource.reads.length).toBe(2)
  })

  it('refuses a directory or a name over its limit', async () => {
    expect(await listing(memorySource(bytes), { maxDirectoryBytes: archive.directorySize - 1 })).toBe('directory-too-large')
    expect((await openZip(memorySource(bytes), { maxDirectoryBytes: archive.directorySize })).entries.length).toBe(5)
    const huge = patched(zip64Bytes, (b) => b.writeBigUInt64LE(2n ** 40n, record + 40))
    expect(await listing(memorySource(huge))).toBe('directory-too-large')
    const long = writeArchive([{ name: `${'a'.repeat(4097)}.jpg`, data: small }])
    expect(await listing(memorySource(long.bytes()))).toBe('name-too-long')
    expect(await listing(memorySource(bytes), { maxNameBytes: 40 })).toBe('name-too-long')
  })

  it('refuses what is not a zip, and a zip cut short anywhere', async () => {
    expect(await listing(memorySource(new Uint8Array(0)))).toBe('not-a-zip')
    expect(await listing(memorySource(noise(100_000, 3)))).toBe('not-a-zip')
    expect(await listing(memorySource(Buffer.from('PK')))).toBe('not-a-zip')
    const empty = await openZip(memorySource(writeArchive([]).bytes()))
    expect([empty.size, empty.entries.length]).toEqual([22, 0])
    for (const cut of [10, 100, Math.floor(bytes.length / 2), archive.directoryOffset + 10, archive.endOffset, bytes.length - 1]) {
      expect(await listing(memorySource(bytes.subarray(0, cut))), `cut at ${cut}`).toBe('truncated')
    }
    expect(await listing(memorySource(Buffer.concat([bytes, Buffer.from('junk')])))).toBe('malformed')
  })

  it('refuses a central directory pointing outside the file, or not ending at the end records', async () => {
    const outside = patched(bytes, (b) => b.writeUInt32LE(bytes.length + 1000, archive.endOffset + 16))
    expect(await listing(memorySource(outside))).toBe('out-of-bounds')
    const outside64 = patched(zip64Bytes, (b) => b.writeBigUInt64LE(2n ** 40n, record + 48))
    expect(await listing(memorySource(outside64))).toBe('out-of-bounds')
    const shifted = patched(bytes, (b) => b.writeUInt32LE(archive.directoryOffset - 1, archive.endOffset + 16))
    expect(await listing(memorySource(shifted))).toBe('malformed')
    // Bytes between the last record and the end record, counted in the directory's size.
    const padded = Buffer.concat([bytes.subarray(0, archive.endOffset), Buffer.from('pad!'), bytes.subarray(archive.endOffset)])
    padded.writeUInt32LE(archive.directorySize + 4, archive.endOffset + 4 + 12)
    expect(await listing(memorySource(padded))).toBe('malformed')
    const larger = patched(bytes, (b) => b.writeUInt32LE(archive.directorySize + 1, archive.endOffset + 12))
    expect(await listing(memorySource(larger))).toBe('out-of-bounds')
    const locatorLost = patched(zip64Bytes, (b) => b.writeBigUInt64LE(BigInt(zip64Bytes.length), zip64.endOffset - 12))
    expect(await listing(memorySource(locatorLost))).toBe('out-of-bounds')
  })

  it('refuses end records that disagree, a split archive, an entry outside the archive and entries that overlap', async () => {
    const disagree = patched(zip64Bytes, (b) => b.writeUInt16LE(4, zip64.endOffset + 10))
    expect(await listing(memorySource(disagree))).toBe('malformed')
    const recordSize = patched(zip64Bytes, (b) => b.writeBigUInt64LE(45n, record + 4))
    expect(await listing(memorySource(recordSize))).toBe('malformed')
    const split = patched(bytes, (b) => b.writeUInt16LE(1, archive.endOffset + 4))
    expect(await listing(memorySource(split))).toBe('unsupported')
    const second = archive.entries[1]!
    const away = patched(bytes, (b) => b.writeUInt32LE(bytes.length + 5, second.centralOffset + 42))
    expect(await listing(memorySource(away))).toBe('out-of-bounds')
    const intoDirectory = patched(bytes, (b) => b.writeUInt32LE(archive.directoryOffset - 40, second.centralOffset + 42))
    expect(await listing(memorySource(intoDirectory))).toBe('out-of-bounds')
    const overlap = patched(bytes, (b) => b.writeUInt32LE(archive.entries[0]!.offset + 1000, second.centralOffset + 42))
    expect(await listing(memorySource(overlap))).toBe('malformed')
    const lostRecord = patched(bytes, (b) => b.writeUInt32LE(0, second.centralOffset))
    expect(await listing(memorySource(lostRecord))).toBe('malformed')
    // A stored entry whose two sizes differ.
    const sizes = patched(bytes, (b) => b.writeUInt32LE(photo.length - 1, archive.entries[0]!.centralOffset + 24))
    expect(await listing(memorySource(sizes))).toBe('malformed')
  })
})

describe('ZipArchive.stream', () => {
  it('streams a 40 MiB stored entry and a 40 MiB deflated one piece by piece, reading only their ranges', async () => {
    const stored = noise(40 * MiB, 5)
    const lines = Buffer.from(Array.from({ length: 1_000_000 }, (_, i) => `line ${i} of a long text that deflates well\n`).join(''))
    expect(lines.length).toBeGreaterThan(40 * MiB)
    const archive = writeArchive([
      { name: 'VID_0001.mp4', data: stored },
      { name: 'lines.txt', data: lines, method: 8, descriptor: true },
    ])
    const source = archive.source()
    const zip = await openZip(source)
    for (const [entry, expected, written] of [
      [zip.entries[0]!, stored, archive.entries[0]!],
      [zip.entries[1]!, lines, archive.entries[1]!],
    ] as const) {
      source.reads.length = 0
      const hash = createHash('sha256')
      let pieces = 0
      let largest = 0
      for await (const piece of zip.stream(entry)) {
        hash.update(piece)
        pieces++
        largest = Math.max(largest, piece.length)
      }
      expect(hash.digest('hex')).toBe(createHash('sha256').update(expected).digest('hex'))
      expect(largest).toBeLessThanOrEqual(ZIP_READ_MAX)
      expect(pieces).toBeGreaterThanOrEqual(40)
      for (const [offset, length] of source.reads) {
        expect(offset).toBeGreaterThanOrEqual(entry.offset)
        expect(offset + length).toBeLessThanOrEqual(written.dataOffset + written.compressedSize)
        expect(length).toBeLessThanOrEqual(ZIP_READ_MAX)
      }
    }
    expect((await read(zip, zip.entries[0]!, { chunkSize: 64 * 1024 })).pieces).toBe(640)
  })

  it('refuses an entry whose bytes do not have their CRC-32, or do not inflate', async () => {
    const archive = writeArchive(takeout)
    const bytes = archive.bytes()
    const flipped = patched(bytes, (b) => {
      b[archive.entries[0]!.dataOffset + 1234]! ^= 0x01
    })
    let zip = await openZip(memorySource(flipped))
    expect(await streaming(zip, zip.entries[0]!)).toBe('crc-mismatch')
    expect((await read(zip, zip.entries[4]!)).bytes.equals(small)).toBe(true) // the others still read
    // The directory's CRC altered for a deflated entry (with a data descriptor: the local header holds none).
    const listed = patched(bytes, (b) => b.writeUInt32LE((crc32(sidecar) ^ 1) >>> 0, archive.entries[1]!.centralOffset + 16))
    zip = await openZip(memorySource(listed))
    expect(await streaming(zip, zip.entries[1]!)).toBe('crc-mismatch')
    const garbage = patched(bytes, (b) => b.fill(0xff, archive.entries[1]!.dataOffset, archive.entries[1]!.dataOffset + archive.entries[1]!.compressedSize))
    zip = await openZip(memorySource(garbage))
    expect(await streaming(zip, zip.entries[1]!)).toBe('bad-data')
  })

  it('refuses a deflated entry that inflates to more, or fewer, bytes than the directory says, stopping at the first byte too many', async () => {
    const lines = Buffer.from(Array.from({ length: 200_000 }, (_, i) => `line ${i}\n`).join(''))
    const archive = writeArchive([{ name: 'lines.txt', data: lines, method: 8, descriptor: true }])
    const at = archive.entries[0]!.centralOffset + 24
    const shorter = await openZip(memorySource(patched(archive.bytes(), (b) => b.writeUInt32LE(100_000, at))))
    let passed = 0
    const error = await (async () => {
      for await (const piece of shorter.stream(shorter.entries[0]!)) passed += piece.length
    })().catch((e: unknown) => e)
    expect((error as ZipError).problem).toBe('size-mismatch')
    expect(passed).toBeLessThanOrEqual(100_000)
    const longer = await openZip(memorySource(patched(archive.bytes(), (b) => b.writeUInt32LE(lines.length + 1, at))))
    expect(await streaming(longer, longer.entries[0]!)).toBe('size-mismatch')
  })

  it('refuses an entry whose local header disagrees with the directory', async () => {
    const archive = writeArchive(takeout)
    const bytes = archive.bytes()
    const photoAt = archive.entries[0]!.offset
    const cases: [string, number, (b: Buffer) => void][] = [
      ['no local header', 0, (b) => b.writeUInt32LE(0, photoAt)],
      ['another name', 0, (b) => (b[photoAt + 30 + 5] = 0x78)],
      ['a longer name', 0, (b) => b.writeUInt16LE(b.readUInt16LE(photoAt + 26) + 1, photoAt + 26)],
      ['another method', 0, (b) => b.writeUInt16LE(8, photoAt + 8)],
      ['another size', 0, (b) => b.writeUInt32LE(photo.length + 1, photoAt + 22)],
      ['another CRC-32', 0, (b) => b.writeUInt32LE((crc32(photo) ^ 1) >>> 0, photoAt + 14)],
      ['the UTF-8 mark dropped', 4, (b) => b.writeUInt16LE(b.readUInt16LE(archive.entries[4]!.offset + 6) & ~0x0800, archive.entries[4]!.offset + 6)],
      ['no data descriptor mark', 1, (b) => b.writeUInt16LE(b.readUInt16LE(archive.entries[1]!.offset + 6) & ~0x0008, archive.entries[1]!.offset + 6)],
    ]
    for (const [what, index, write] of cases) {
      const zip = await openZip(memorySource(patched(bytes, write)))
      expect(await streaming(zip, zip.entries[index]!), what).toBe('local-header-mismatch')
    }
    // A local extra field that pushes the data into the central directory.
    const last = archive.entries[4]!.offset
    const zip = await openZip(memorySource(patched(bytes, (b) => b.writeUInt16LE(b.readUInt16LE(last + 28) + 100, last + 28))))
    expect(await streaming(zip, zip.entries[4]!)).toBe('out-of-bounds')
  })

  it('lists encrypted entries and other compression methods, and refuses to stream them', async () => {
    const archive = writeArchive([
      { name: 'secret.jpg', data: small, extraFlags: 0x0001 },
      { name: 'packed.bin', data: small },
    ])
    const bzip2 = patched(archive.bytes(), (b) => {
      b.writeUInt16LE(12, archive.entries[1]!.offset + 8)
      b.writeUInt16LE(12, archive.entries[1]!.centralOffset + 10)
    })
    const zip = await openZip(memorySource(bzip2))
    expect(zip.entries.map((e) => [e.name, e.encrypted, e.method])).toEqual([
      ['secret.jpg', true, 0],
      ['packed.bin', false, 12],
    ])
    expect(await streaming(zip, zip.entries[0]!)).toBe('unsupported')
    expect(await streaming(zip, zip.entries[1]!)).toBe('unsupported')
  })

  it('refuses an entry of another archive and a piece size out of range', async () => {
    const one = await openZip(memorySource(writeArchive(takeout).bytes()))
    const other = await openZip(memorySource(writeArchive(takeout).bytes()))
    await expect(read(one, other.entries[0]!)).rejects.toThrow(TypeError)
    await expect(read(one, one.entries[0]!, { chunkSize: 0 })).rejects.toThrow(RangeError)
    await expect(read(one, one.entries[0]!, { chunkSize: ZIP_READ_MAX + 1 })).rejects.toThrow(RangeError)
  })

  it('reads nothing more once the consumer stops', async () => {
    const lines = Buffer.from(Array.from({ length: 400_000 }, (_, i) => `line ${i} ${i * 7919}\n`).join(''))
    const archive = writeArchive([
      { name: 'a.mp4', data: noise(8 * MiB, 9) },
      { name: 'b.txt', data: lines, method: 8 },
    ])
    expect(archive.entries[1]!.compressedSize).toBeGreaterThan(2 * MiB)
    const source = archive.source()
    const zip = await openZip(source)
    for (const entry of zip.entries) {
      source.reads.length = 0
      for await (const _ of zip.stream(entry)) break
      const stopped = source.reads.length
      await new Promise((resolve) => setTimeout(resolve, 50))
      expect(source.reads.length, entry.name).toBe(stopped)
      expect(stopped, entry.name).toBeLessThanOrEqual(4) // the local header, its name, a piece or two: not the 8 MiB
    }
  })

  it('refuses a source that comes back short (a file that shrank after it was listed)', async () => {
    const archive = writeArchive([
      { name: 'a.mp4', data: noise(8 * MiB, 9) },
      { name: 'b.txt', data: sidecar, method: 8 },
    ])
    const full = archive.source()
    let shrunk = false
    const zip = await openZip({
      size: archive.size,
      read: async (offset, length) => (await full.read(offset, length)).subarray(0, shrunk && offset + length > 4 * MiB ? 10 : length),
    })
    shrunk = true
    expect(await streaming(zip, zip.entries[0]!)).toBe('truncated')
    expect(await streaming(zip, zip.entries[1]!)).toBe('truncated')
  })
})

describe('blobSource', () => {
  it('reads an archive from a Blob (a File in the browser) a slice at a time, as from memory', async () => {
    const archive = writeArchive([...takeout, { name: 'VID_0002.mp4', data: noise(3 * MiB, 13) }])
    const bytes = archive.bytes()
    const blob = blobSource(new Blob([bytes]))
    const reads: number[] = []
    const source: RandomAccessSource = {
      size: blob.size,
      read: (offset, length) => {
        reads.push(length)
        return blob.read(offset, length)
      },
    }
    const zip = await openZip(source)
    expectTakeoutListing(zip)
    await expectTakeoutBytes(zip)
    const video = await read(zip, zip.entries[5]!)
    expect(video.bytes.equals(noise(3 * MiB, 13))).toBe(true)
    expect(video.pieces).toBe(3)
    expect(Math.max(...reads)).toBeLessThanOrEqual(ZIP_READ_MAX)
    // A Blob read past its end answers short, as a File changed on disk would: refused, not padded.
    const cut = blobSource(new Blob([bytes.subarray(0, archive.entries[5]!.dataOffset + MiB)]))
    let changed = false
    const lying = await openZip({ size: bytes.length, read: (offset, length) => (changed ? cut : blob).read(offset, length) })
    changed = true
    expect(await streaming(lying, lying.entries[5]!)).toBe('truncated')
  })
})
