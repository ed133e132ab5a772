// The files of an export another service made (a Google Takeout export: decision 0071) as
// coffer-photos finds them on disk: the entries of its zip archives, read where they lie (no
// unpacking), or the files of the folder it was unpacked to; and each photo of it as the sync
// engine's candidate. A photo small enough is read into memory once; a video, or a photo larger
// than that, is copied from its archive to a staging file first (ffmpeg seeks in a file, and
// sharp reads a large one from disk), which goes once the photo is stored.
import { createReadStream } from 'node:fs'
import { mkdir, open, opendir, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import type { FileSource, MediaFacts } from '../files.ts'
import { memorySource } from '../files.ts'
import type { Candidate } from '../sync.ts'
import type { ExportFile } from '../takeout-import.ts'
import { openZip } from '../zip-reader.ts'
import { fileSource, mediaTypeOf, modifiedMs } from './files.ts'
import { openZipFile, type ZipFileSource } from './zip-file.ts'

/** An export's files, and what to close once they are read. */
export interface OpenedExport {
  readonly files: readonly ExportFile[]
  /** The archives read, in the order given (none for an unpacked folder). */
  readonly archives: readonly string[]
  close(): Promise<void>
}

/** A file of an unpacked export: where it is on disk. */
export interface DiskExportFile extends ExportFile {
  readonly diskPath: string
}

const isDiskFile = (file: ExportFile): file is DiskExportFile => typeof (file as Partial<DiskExportFile>).diskPath === 'string'

/**
 * The files of the export at `given`: zip archives, or folders holding them (each folder's own
 * `.zip` files, by name), or one folder it was unpacked to (every file under it, its path
 * relative to it). Throws when a path is neither, or an archive is not a zip (ZipError).
 */
export async function openExport(given: readonly string[]): Promise<OpenedExport> {
  const archives: string[] = []
  const folders: string[] = []
  for (const at of given) {
    const info = await stat(at)
    if (info.isFile()) archives.push(at)
    else if (info.isDirectory()) {
      const zips = (await listNames(at)).filter((name) => name.toLowerCase().endsWith('.zip')).map((name) => path.join(at, name))
      if (zips.length > 0) archives.push(...zips)
      else folders.push(at)
    } else throw new Error(`${at}: neither a file nor a folder`)
  }
  if (folders.length > 0 && (archives.length > 0 || folders.length > 1))
    throw new Error('give the zip archives of an export, or the one folder it was unpacked to, not both')
  if (folders[0] !== undefined) return { files: await unpackedFiles(folders[0]), archives: [], close: async () => {} }
  const sources: ZipFileSource[] = []
  const files: ExportFile[] = []
  try {
    for (const archive of archives) {
      const source = await openZipFile(archive)
      sources.push(source)
      const zip = await openZip(source).catch((error: unknown) => {
        throw new Error(`${archive}: ${(error as Error).message}`, { cause: error })
      })
      for (const entry of zip.entries) {
        if (entry.directory) continue
        files.push({
          path: entry.name,
          size: entry.size,
          modified: entry.modified,
          identity: `crc32:${entry.crc32.toString(16).padStart(8, '0')}`,
          open: () => zip.stream(entry),
        })
      }
    }
  } catch (error) {
    await Promise.all(sources.map((source) => source.close()))
    throw error
  }
  return { files, archives, close: async () => void (await Promise.all(sources.map((source) => source.close()))) }
}

async function listNames(folder: string): Promise<string[]> {
  const names: string[] = []
  for await (const entry of await opendir(folder)) if (entry.isFile()) names.push(entry.name)
  return names.sort()
}

/** Every regular file under `root` (links not followed), "/" between names, in name order. */
async function unpackedFiles(root: string, relative = ''): Promise<DiskExportFile[]> {
  const entries = []
  for await (const entry of await opendir(path.join(root, relative))) entries.push(entry)
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  const files: DiskExportFile[] = []
  for (const entry of entries) {
    const child = relative === '' ? entry.name : `${relative}/${entry.name}`
    if (entry.isDirectory()) files.push(...(await unpackedFiles(root, child)))
    else if (entry.isFile()) {
      const diskPath = path.join(root, ...child.split('/'))
      const info = await stat(diskPath, { bigint: true })
      files.push({
        path: child,
        diskPath,
        size: Number(info.size),
        modified: modifiedMs(info),
        identity: `${info.dev}:${info.ino}`,
        open: () => createReadStream(diskPath),
      })
    }
  }
  return files
}

/** A folder where entries too large to hold in memory are copied while they are stored; emptied when opened and when closed. */
export interface Staging {
  /** Copies the file there and answers the copy's path. */
  stage(file: ExportFile): Promise<string>
  /** Removes a staged copy (a photo stored, or given up). */
  release(file: ExportFile): Promise<void>
  close(): Promise<void>
}

export async function openStaging(folder: string): Promise<Staging> {
  await rm(folder, { recursive: true, force: true })
  await mkdir(folder, { recursive: true, mode: 0o700 })
  const staged = new Map<ExportFile, Promise<string>>()
  let next = 0
  return {
    stage(file) {
      let copy = staged.get(file)
      if (copy === undefined) {
        copy = copyOut(file, path.join(folder, `${next++}${path.extname(file.path)}`))
        staged.set(file, copy)
      }
      return copy
    },
    async release(file) {
      const copy = staged.get(file)
      if (copy === undefined) return
      staged.delete(file)
      await rm(await copy.catch(() => ''), { force: true })
    },
    close: () => rm(folder, { recursive: true, force: true }),
  }
}

async function copyOut(file: ExportFile, to: string): Promise<string> {
  const handle = await open(to, 'wx', 0o600)
  try {
    for await (const piece of file.open()) await handle.write(piece)
  } finally {
    await handle.close()
  }
  return to
}

async function readWhole(file: ExportFile): Promise<Uint8Array> {
  const whole = new Uint8Array(file.size)
  let at = 0
  for await (const piece of file.open()) {
    if (at + piece.length > whole.length) throw new Error(`${file.path}: longer than its stated ${file.size} bytes`)
    whole.set(piece, at)
    at += piece.length
  }
  if (at !== whole.length) throw new Error(`${file.path}: shorter than its stated ${file.size} bytes`)
  return whole
}

export interface ExportCandidateOptions {
  /** What the file says of itself (node/media.ts describeMedia, with what an import adds): given its bytes or a path. */
  readonly describe: (file: string | Uint8Array, type: string) => Promise<MediaFacts>
  /** The largest file held in memory (node/files.ts inMemoryMaxFor). */
  readonly inMemoryMax: number
  readonly staging: Staging
}

/**
 * A file of the export as the sync engine's candidate, stored under `name`: a file on disk is
 * read from where it is; an archive's entry is read into memory once when it is a photo of at
 * most `inMemoryMax` bytes, else copied to the staging folder first (a video always: ffmpeg
 * seeks in a file, not in a pipe).
 */
export function exportCandidate(file: ExportFile, name: string, options: ExportCandidateOptions): Candidate {
  const type = mediaTypeOf(file.path)
  let loaded: Promise<{ source: FileSource; input: string | Uint8Array }> | undefined
  // Once per candidate: a retry, and the description, use the same read.
  const load = (): Promise<{ source: FileSource; input: string | Uint8Array }> =>
    (loaded ??= (async () => {
      const onDisk = isDiskFile(file) ? file.diskPath : null
      if (onDisk === null && file.size <= options.inMemoryMax && !type.startsWith('video/')) {
        const bytes = await readWhole(file)
        return { source: memorySource(bytes, { name, type, modified: file.modified }), input: bytes }
      }
      const at = onDisk ?? (await options.staging.stage(file))
      const source = await fileSource(at, { name, type, inMemoryMax: type.startsWith('video/') ? 0 : options.inMemoryMax })
      return { source: { ...source, modified: file.modified }, input: type.startsWith('video/') ? at : (source.bytes ?? at) }
    })())
  return {
    path: name,
    size: file.size,
    modified: file.modified,
    identity: file.identity,
    source: async () => (await load()).source,
    describe: async () => options.describe((await load()).input, type),
  }
}
