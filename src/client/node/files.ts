// Node adapters for the client library's files (../files.ts): a FileSource read from a path,
// and a sink that keeps nothing under a restored file's final name until it is whole and
// verified (written to a temporary name in the same folder, fsynced, then renamed).
import { randomBytes } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { mkdir, open, readFile, rename, stat, unlink, utimes } from 'node:fs/promises'
import path from 'node:path'
import { IN_MEMORY_FILE_MAX, memorySource, type FileSource, type RestoredFile } from '../files.ts'
import type { RestoreWriter } from '../restore.ts'

const TYPES: Record<string, string> = {
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.png': 'image/png',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.heic': 'image/heic',
  '.heif': 'image/heif',
  '.avif': 'image/avif',
  '.tif': 'image/tiff',
  '.tiff': 'image/tiff',
  '.dng': 'image/x-adobe-dng',
  // Camera RAW: backed up as they are (no derivatives: node/media.ts decodes none of them).
  '.nef': 'image/x-nikon-nef',
  '.nrw': 'image/x-nikon-nrw',
  '.cr2': 'image/x-canon-cr2',
  '.cr3': 'image/x-canon-cr3',
  '.arw': 'image/x-sony-arw',
  '.orf': 'image/x-olympus-orf',
  '.rw2': 'image/x-panasonic-rw2',
  '.raf': 'image/x-fuji-raf',
  '.pef': 'image/x-pentax-pef',
  '.mp4': 'video/mp4',
  '.mov': 'video/quicktime',
  '.m4v': 'video/x-m4v',
  '.avi': 'video/x-msvideo',
  '.mkv': 'video/x-matroska',
  '.webm': 'video/webm',
  '.3gp': 'video/3gpp',
  '.mts': 'video/mp2t',
}

/** What a file being restored is called until it is whole and verified (a crash can leave one; the next restore removes it). */
export const PARTIAL_SUFFIX = '.coffer-partial'

/** A guess from the extension; application/octet-stream when it is not a known one. */
export function mediaTypeOf(file: string): string {
  return TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream'
}

/** What the files in flight may hold in memory together: each file's in-memory limit is this over the files in flight. */
export const IN_MEMORY_BUDGET = 512 * 1024 * 1024

/** The in-memory limit per file when `inFlight` files are backed up at once (fileSource's inMemoryMax). */
export const inMemoryMaxFor = (inFlight: number): number => Math.min(IN_MEMORY_FILE_MAX, Math.floor(IN_MEMORY_BUDGET / Math.max(1, inFlight)))

/** A file on disk as a FileSource; `bytes` is the whole file when it was read into memory. */
export interface DiskFileSource extends FileSource {
  readonly bytes: Uint8Array | null
}

/**
 * A file on disk as a FileSource: its name, size and modification time (whole ms) from stat.
 * A file of at most `inMemoryMax` bytes is read once, whole (docs/client-library.md, "One pass
 * over each file"): its hash, both encryption passes and its derivatives then come from memory,
 * and its original is encrypted under keys that follow from its content (FileSource.digest).
 * A larger one is streamed from disk on each pass.
 */
export async function fileSource(file: string, options: { type?: string; name?: string; inMemoryMax?: number } = {}): Promise<DiskFileSource> {
  const info = await stat(file)
  if (!info.isFile()) throw new Error(`${file}: not a regular file`)
  const described = { name: options.name ?? path.basename(file), type: options.type ?? mediaTypeOf(file) }
  if (info.size > (options.inMemoryMax ?? 0)) {
    return { ...described, size: info.size, modified: Math.floor(info.mtimeMs), bytes: null, open: (start = 0) => createReadStream(file, { start }) }
  }
  const bytes = await readFile(file)
  const after = await stat(file)
  // Modified while being read: the bytes may be a mix of two versions.
  if (after.size !== bytes.length || after.mtimeMs !== info.mtimeMs) throw new Error(`${file}: changed while being read`)
  return { ...memorySource(bytes, { ...described, modified: Math.floor(info.mtimeMs) }), bytes }
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
    for await (const chunk of restored.bytes) await handle.write(chunk)
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
    const existing = await stat(final).catch(() => null)
    if (existing?.isFile() && existing.size === file.metadata.size && Math.floor(existing.mtimeMs) === file.metadata.modified) return 'unchanged'
    if (existing !== null && options.overwrite !== true) return 'kept'
    await writeRestored(file, folder, { name })
    return 'restored'
  }
}
