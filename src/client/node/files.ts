// Node adapters for the client library's files (../files.ts): a FileSource read from a path,
// and a sink that keeps nothing under a restored file's final name until it is whole and
// verified (written to a temporary name in the same folder, fsynced, then renamed).
import { randomBytes } from 'node:crypto'
import { createReadStream, type BigIntStats } from 'node:fs'
import { mkdir, open, readFile, rename, stat, unlink, utimes, type FileHandle } from 'node:fs/promises'
import path from 'node:path'
import { IN_MEMORY_FILE_MAX, memorySource, type FileSource, type RestoredFile } from '../files.ts'
import { mediaTypeOfName } from '../media-types.ts'
import type { RestoreWriter } from '../restore.ts'

/** What a file being restored is called until it is whole and verified (a crash can leave one; the next restore removes it). */
export const PARTIAL_SUFFIX = '.coffer-partial'

/** A guess from the extension (../media-types.ts); application/octet-stream when it is not a known one. */
export const mediaTypeOf = (file: string): string => mediaTypeOfName(file)

/** What the files in flight may hold in memory together: each file's in-memory limit is this over the files in flight. */
export const IN_MEMORY_BUDGET = 512 * 1024 * 1024

/** The in-memory limit per file when `inFlight` files are backed up at once (fileSource's inMemoryMax). */
export const inMemoryMaxFor = (inFlight: number): number => Math.min(IN_MEMORY_FILE_MAX, Math.floor(IN_MEMORY_BUDGET / Math.max(1, inFlight)))

/** A file on disk as a FileSource; `bytes` is the whole file when it was read into memory. */
export interface DiskFileSource extends FileSource {
  readonly bytes: Uint8Array | null
}

/**
 * A file's modification time in whole milliseconds, as backup records it: from the nanoseconds,
 * exactly (the double `mtimeMs` of a plain stat can fall a hair under a whole millisecond).
 */
export const modifiedMs = (info: BigIntStats): number => Number(info.mtimeMs)

/**
 * A file on disk as a FileSource: its name, size and modification time (whole ms) from stat.
 * A file of at most `inMemoryMax` bytes is read once, whole (docs/client-library.md, "One pass
 * over each file"): its hash, both encryption passes and its derivatives then come from memory,
 * and its original is encrypted under keys that follow from its content (FileSource.digest).
 * A larger one is streamed from disk on each pass.
 */
export async function fileSource(file: string, options: { type?: string; name?: string; inMemoryMax?: number } = {}): Promise<DiskFileSource> {
  const info = await stat(file, { bigint: true })
  if (!info.isFile()) throw new Error(`${file}: not a regular file`)
  const described = { name: options.name ?? path.basename(file), type: options.type ?? mediaTypeOf(file) }
  const size = Number(info.size)
  const modified = modifiedMs(info)
  if (size > (options.inMemoryMax ?? 0)) {
    return { ...described, size, modified, bytes: null, open: (start = 0) => createReadStream(file, { start }) }
  }
  const bytes = await readFile(file)
  const after = await stat(file, { bigint: true })
  // Modified while being read: the bytes may be a mix of two versions.
  if (after.size !== info.size || Number(after.size) !== bytes.length || after.mtimeNs !== info.mtimeNs) throw new Error(`${file}: changed while being read`)
  return { ...memorySource(bytes, { ...described, modified }), bytes }
}

/**
 * A restored name must stay inside the folder: plain names joined by "/" (a file backed up
 * from a subfolder keeps its relative path), none empty, "." or "..", none holding "\\" or NUL.
 * Answers the name's segments.
 */
export function safeRelativePath(name: string): string[] {
  const segments = name.split('/')
  if (segments.some((segment) => segment === '' || segment === '.' || segment === '..' || /[\\\0]/.test(segment))) {
    throw new Error(`refusing to write a file named ${JSON.stringify(name)}: not a relative path of plain names`)
  }
  return segments
}

/**
 * Bytes gathered before each write of a restored file: one write per 64 KiB chunk (a round trip
 * through libuv's pool each) cost a restore of 12-megapixel photos a fifth of its main thread.
 */
const RESTORE_WRITE_BYTES = 1024 * 1024

/** Writes all of `bytes` (a write may take fewer than it was given: a disk filling up). */
async function writeWhole(handle: FileHandle, bytes: Uint8Array): Promise<void> {
  for (let written = 0; written < bytes.length; ) written += (await handle.write(bytes, written, bytes.length - written)).bytesWritten
}

/** Writes `chunks` to `handle` RESTORE_WRITE_BYTES at a time, each batch in one writev. */
async function writeGathered(handle: FileHandle, chunks: AsyncIterable<Uint8Array>): Promise<void> {
  let gathered: Uint8Array[] = []
  let size = 0
  const flush = async (): Promise<void> => {
    if (size === 0) return
    const { bytesWritten } = await handle.writev(gathered)
    if (bytesWritten < size) await writeWhole(handle, Buffer.concat(gathered, size).subarray(bytesWritten))
    gathered = []
    size = 0
  }
  for await (const chunk of chunks) {
    gathered.push(chunk)
    size += chunk.length
    if (size >= RESTORE_WRITE_BYTES) await flush()
  }
  await flush()
}

/**
 * Writes a restored file into `folder` under its name (or `options.name`): to a temporary name
 * beside it, fsynced, its mtime set, then renamed over the final name (replacing a file there)
 * and the folder fsynced. If reading, decrypting or verifying fails, the temporary file is
 * removed and the error rethrown: nothing appears under the final name. Answers the final path.
 */
export async function writeRestored(restored: RestoredFile, folder: string, options: { name?: string } = {}): Promise<string> {
  const final = path.join(folder, ...safeRelativePath(options.name ?? restored.metadata.name))
  const parent = path.dirname(final)
  await mkdir(parent, { recursive: true })
  const temp = path.join(parent, `.${path.basename(final).slice(0, 200)}.${randomBytes(6).toString('hex')}${PARTIAL_SUFFIX}`)
  // 0o666 and the umask, as for any file a program writes: restored photos are as readable as the person's other files.
  const handle = await open(temp, 'wx', 0o666)
  let renamed = false
  try {
    await writeGathered(handle, restored.bytes)
    await handle.sync()
    await handle.close()
    const modified = restored.metadata.modified
    // utimes takes seconds as a double, off by up to about 0.1 µs at today's dates: the middle
    // of the millisecond keeps floor(mtimeMs) at `modified`, which is how backup and the next
    // restore read it back.
    if (modified !== null) await utimes(temp, new Date(), (modified + 0.5) / 1000)
    await rename(temp, final)
    renamed = true
    const dir = await open(parent, 'r')
    try {
      await dir.sync()
    } catch {
      // Some platforms cannot fsync a folder; the rename itself is done.
    } finally {
      await dir.close()
    }
    return final
  } finally {
    if (!renamed) {
      await handle.close().catch(() => {})
      await unlink(temp).catch(() => {})
    }
  }
}

/**
 * restoreAll's writer into `folder`: a file already there with the same size and modification
 * time is left as it is ('unchanged'); a different one is kept too and this file is not restored
 * ('kept'), unless `overwrite`; otherwise writeRestored.
 */
export function restoreInto(folder: string, options: { overwrite?: boolean } = {}): RestoreWriter {
  return async (file, name) => {
    const final = path.join(folder, ...safeRelativePath(name))
    const existing = await stat(final, { bigint: true }).catch(() => null)
    if (existing?.isFile() && Number(existing.size) === file.metadata.size && modifiedMs(existing) === file.metadata.modified) return 'unchanged'
    if (existing !== null && options.overwrite !== true) return 'kept'
    await writeRestored(file, folder, { name })
    return 'restored'
  }
}
