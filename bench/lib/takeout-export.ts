// A Google Takeout export of a generated photo library (the import scenario's): the same photos,
// laid out as Takeout lays them out (test/support/takeout.ts: Takeout/Google Photos/<folder>/,
// a JSON sidecar beside each photo, an album folder's metadata.json) and written as deflated zip
// archives, streamed to disk one entry at a time. test/support/takeout.ts `writeTakeout` holds a
// whole archive in memory (the tests' exports are a few KiB); a library of thousands of photos is
// hundreds of MiB. The records are APPNOTE 6.3.10's as test/support/zip-archive.ts writes them
// (no zip64: an archive is kept under 2 GiB and 60,000 entries, as Takeout splits at 2 GB).
import { readFile, open, mkdir } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { crc32, deflateRaw } from 'node:zlib'
import { randomNumbers } from '../../test/support/photos.ts'
import { albumMetadataJson, sidecarJson, TAKEOUT_ROOT } from '../../test/support/takeout.ts'

const deflate = promisify(deflateRaw)

/** What the export holds, beside its archives. */
export interface TakeoutExport {
  /** The archives, in order. */
  readonly archives: readonly string[]
  /** Bytes of the archives on disk. */
  readonly archiveBytes: number
  /** Photos and videos, each in its year folder with a sidecar (the library's files, once each). */
  readonly photos: number
  /** Album folders (each with a metadata.json). */
  readonly albums: number
  /** Photos also in album folders. */
  readonly inAlbums: number
  /** Album copies, photo by album: what the import adds to a further album without sending it again. */
  readonly copies: number
}

export interface TakeoutExportOptions {
  readonly seed: number
  /** Archives at least (more when one would pass ARCHIVE_MAX_BYTES or ARCHIVE_MAX_ENTRIES). */
  readonly archives: number
  /** Album folders. */
  readonly albums: number
  /** The share of the photos also in 2 or 3 of the albums. */
  readonly inAlbumsShare: number
}

/** Takeout's default split; and well under zip's 32-bit fields, so no zip64 records are needed. */
const ARCHIVE_MAX_BYTES = 2 * 1024 ** 3
const ARCHIVE_MAX_ENTRIES = 60_000
const MAX32 = 0xffff_ffff
/** Entries read and deflated at once (on libuv's pool), written in order. */
const IN_FLIGHT = 4

interface Item {
  /** Its name in the archive. */
  readonly name: string
  /** A file of the library, or a JSON text. */
  readonly source: { readonly file: string } | { readonly text: string }
  readonly size: number
}

/**
 * Writes `files` (absolute paths of a library, each with its size) as a Takeout export in
 * `folder`: every file in a "Photos from 20xx" folder with its sidecar (a date taken in that year,
 * a place on one in three, a description on one in ten, a favourite mark on one in thirty), and
 * `inAlbumsShare` of them also in 2-3 album folders, each copy with its sidecar; split over
 * `archives` zip archives by size, so that a photo and its sidecar may be in different ones.
 * Deterministic for a seed. The files' names must be unique (the generator's are).
 */
export async function writeTakeoutExport(
  folder: string,
  files: readonly { readonly file: string; readonly size: number }[],
  options: TakeoutExportOptions,
): Promise<TakeoutExport> {
  const random = randomNumbers(options.seed)
  const albumNames = Array.from({ length: options.albums }, (_, i) => `Bench album ${i + 1}`)
  const years: Item[] = []
  const albums = new Map<string, Item[]>(albumNames.map((name) => [name, []]))
  const names = new Set<string>()
  let inAlbums = 0
  let copies = 0
  const json = (name: string, text: string): Item => ({ name, source: { text }, size: Buffer.byteLength(text) })
  for (const { file, size } of files) {
    const name = path.basename(file)
    if (names.has(name)) throw new Error(`two files named ${name}: a Takeout folder holds one`)
    names.add(name)
    const year = 2015 + Math.floor(random() * 10)
    const sidecar = sidecarJson({
      title: name,
      takenMs: Date.UTC(year, 0, 1) + Math.floor(random() * 364 * 86_400) * 1000,
      ...(random() < 1 / 3 ? { geo: { latitude: 48.8582602 - random(), longitude: 2.2944991 + random() } } : {}),
      ...(random() < 0.1 ? { description: `Bench photo ${name}` } : {}),
      ...(random() < 1 / 30 ? { favorited: true } : {}),
    })
    const entries = (at: string): Item[] => [
      { name: `${TAKEOUT_ROOT}/${at}/${name}`, source: { file }, size },
      json(`${TAKEOUT_ROOT}/${at}/${name}.supplemental-metadata.json`, sidecar),
    ]
    years.push(...entries(`Photos from ${year}`))
    if (albumNames.length >= 3 && random() < options.inAlbumsShare) {
      // 2 or 3 distinct albums (a partial Fisher-Yates shuffle).
      const chosen = [...albumNames]
      const take = random() < 0.5 ? 2 : 3
      for (let k = 0; k < take; k++) {
        const j = k + Math.floor(random() * (chosen.length - k))
        ;[chosen[k], chosen[j]] = [chosen[j]!, chosen[k]!]
      }
      chosen.length = take
      inAlbums++
      copies += chosen.length
      for (const album of chosen) albums.get(album)!.push(...entries(album))
    }
  }
  // Folder by folder, as Takeout lists them (a photo's sidecar right after it).
  const yearOf = (item: Item) => item.name.slice(TAKEOUT_ROOT.length + 1, TAKEOUT_ROOT.length + 1 + 'Photos from 2015'.length)
  const items = years
    .map((item, i) => ({ item, i }))
    .sort((a, b) => yearOf(a.item).localeCompare(yearOf(b.item)) || a.i - b.i)
    .map(({ item }) => item)
  for (const [album, entries] of albums) {
    if (entries.length === 0) continue
    items.push(json(`${TAKEOUT_ROOT}/${album}/metadata.json`, albumMetadataJson(album)), ...entries)
  }

  const total = items.reduce((sum, item) => sum + item.size, 0)
  const count = Math.max(options.archives, Math.ceil(total / ARCHIVE_MAX_BYTES), Math.ceil(items.length / ARCHIVE_MAX_ENTRIES))
  // Split by bytes (entries stay in order): each archive about total / count.
  const parts: Item[][] = Array.from({ length: count }, () => [])
  let running = 0
  for (const item of items) {
    parts[Math.min(count - 1, Math.floor((running * count) / total))]!.push(item)
    running += item.size
  }
  await mkdir(folder, { recursive: true })
  const archives: string[] = []
  let archiveBytes = 0
  for (const [i, part] of parts.entries()) {
    const archive = path.join(folder, `takeout-20261205T120000Z-${String(i + 1).padStart(3, '0')}.zip`)
    archiveBytes += await writeArchiveFile(archive, part)
    archives.push(archive)
  }
  return { archives, archiveBytes, photos: files.length, albums: [...albums.values()].filter((e) => e.length > 0).length, inAlbums, copies }
}

/** The DOS time and date of the export (12:00:00 on 5 December 2026), as Takeout stamps every entry with its own. */
const DOS_TIME = 12 << 11
const DOS_DATE = ((2026 - 1980) << 9) | (12 << 5) | 5

/** Writes one archive, entries deflated in order; answers its size. */
async function writeArchiveFile(file: string, items: readonly Item[]): Promise<number> {
  const handle = await open(file, 'w')
  const central: Buffer[] = []
  let offset = 0
  try {
    const prepare = async (item: Item) => {
      const data = 'file' in item.source ? await readFile(item.source.file) : Buffer.from(item.source.text, 'utf8')
      if (data.length !== item.size) throw new Error(`${item.name}: ${data.length} bytes, ${item.size} expected`)
      return { crc: crc32(data), deflated: await deflate(data) }
    }
    const pending = new Map<number, Promise<{ crc: number; deflated: Buffer }>>()
    const start = (i: number) => {
      const item = items[i]
      if (item === undefined) return
      const prepared = prepare(item)
      prepared.catch(() => {}) // awaited in turn below; not an unhandled rejection meanwhile
      pending.set(i, prepared)
    }
    for (let i = 0; i < IN_FLIGHT; i++) start(i)
    for (const [i, item] of items.entries()) {
      const { crc, deflated } = await pending.get(i)!
      pending.delete(i)
      start(i + IN_FLIGHT)
      const name = Buffer.from(item.name, 'utf8')
      if (offset + 30 + name.length + deflated.length > MAX32) throw new Error(`${file}: past 4 GiB; write more archives`)
      const local = Buffer.alloc(30)
      local.writeUInt32LE(0x0403_4b50, 0)
      local.writeUInt16LE(20, 4) // version needed: 2.0 (deflate)
      local.writeUInt16LE(/[^\x20-\x7e]/.test(item.name) ? 0x0800 : 0, 6)
      local.writeUInt16LE(8, 8)
      local.writeUInt16LE(DOS_TIME, 10)
      local.writeUInt16LE(DOS_DATE, 12)
      local.writeUInt32LE(crc, 14)
      local.writeUInt32LE(deflated.length, 18)
      local.writeUInt32LE(item.size, 22)
      local.writeUInt16LE(name.length, 26)
      local.writeUInt16LE(0, 28)
      const record = Buffer.alloc(46)
      record.writeUInt32LE(0x0201_4b50, 0)
      record.writeUInt16LE(20, 4) // made by: MS-DOS, 2.0
      local.copy(record, 6, 4, 30) // version needed, flags, method, time, date, CRC, sizes, name length, extra length
      // comment length, disk, internal and external attributes: 0
      record.writeUInt32LE(offset, 42)
      central.push(record, name)
      await handle.write(Buffer.concat([local, name]))
      await handle.write(deflated)
      offset += local.length + name.length + deflated.length
    }
    const directory = Buffer.concat(central)
    const end = Buffer.alloc(22)
    end.writeUInt32LE(0x0605_4b50, 0)
    end.writeUInt16LE(items.length, 8)
    end.writeUInt16LE(items.length, 10)
    end.writeUInt32LE(directory.length, 12)
    end.writeUInt32LE(offset, 16)
    await handle.write(directory)
    await handle.write(end)
    return offset + directory.length + end.length
  } finally {
    await handle.close()
  }
}
