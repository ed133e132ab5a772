// The blob store on a local (or shared) folder. Layout: <root>/<2 hex>/<2 hex>/<64 hex> for
// blobs, <root>/parts/<upload id>/<64 hex>/<part name> for the parts of blobs uploaded in pieces
// (decision 0034) and <root>/tmp/ for writes in progress. A write goes to a temporary file, is hashed
// while streaming, fsynced, renamed into place and the directory fsynced: a blob is either
// absent or complete and durable. Temporary names are writers.ts's, so that a cleanup removes
// only what gone writers left.
import { createHash } from 'node:crypto'
import { mkdir, open, readdir, rename, rm, stat, unlink, utimes, type FileHandle } from 'node:fs/promises'
import path from 'node:path'
import { makeDirectory } from '../directories.ts'
import { BLOB_NAME, partSegments, UPLOAD_NAME, type BlobStore, type ByteRange, type PutOutcome } from './port.ts'
import { collectingEvery, countedReads, trackWrites } from './writers.ts'

export interface LocalFolderBlobStore extends BlobStore {
  readonly root: string
  /** Where a blob lives (tests and the operator's tools look at the files). */
  pathOf(hash: string): string
}

const FAN_OUT = /^[0-9a-f]{2}$/
/**
 * Bytes per read of a deep check. Its reads go into two buffers used in turn (one read while the
 * other is hashed), where a read stream allocates a buffer per chunk: garbage that, in a server's
 * heap, cost as much CPU in full collections as the hashing itself.
 */
const CHECK_READ_BYTES = 64 * 1024
/**
 * Bytes per write of a put: the request's chunks (64 KiB or less) are hashed as they arrive and
 * copied into two buffers used in turn, one written while the other fills, so that a write (a
 * round trip through the libuv pool) carries 4 of them and overlaps receiving the next. (1 MiB
 * writes cost more CPU per MiB than 64 KiB ones on the 2-core VM, in some rounds twice as much.)
 */
const WRITE_BYTES = 256 * 1024

async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** A write may take fewer bytes than it was given (a disk filling up): the rest follows, or its failure. */
async function writeWhole(handle: FileHandle, bytes: Buffer): Promise<void> {
  for (let written = 0; written < bytes.length; ) written += (await handle.write(bytes, written, bytes.length - written)).bytesWritten
}

/** For a file another writer may have renamed or removed meanwhile: undefined when it is gone. */
function ignoreMissing(error: unknown): undefined {
  if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
  throw error
}

async function sortedNames(directory: string): Promise<string[]> {
  try {
    return (await readdir(directory)).sort()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
}

export async function openLocalFolderBlobStore(root: string, onRead: (bytes: number) => void = () => {}): Promise<LocalFolderBlobStore> {
  const temporary = path.join(root, 'tmp')
  const parts = path.join(root, 'parts')
  makeDirectory(temporary)
  const writes = trackWrites()
  const pathOf = (hash: string): string => {
    if (!BLOB_NAME.test(hash)) throw new Error(`not a blob name: ${hash}`)
    return path.join(root, hash.slice(0, 2), hash.slice(2, 4), hash)
  }
  const partPath = (uploadId: string, hash?: string, name?: string): string => path.join(parts, ...partSegments(uploadId, hash, name))

  /** `hash` undefined: only the size is checked. */
  async function writeVerified(
    handle: FileHandle,
    hash: string | undefined,
    size: number,
    source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  ): Promise<PutOutcome> {
    const digest = createHash('sha256')
    const collect = collectingEvery()
    let received = 0
    // A small blob needs no more than its size.
    let filling = Buffer.allocUnsafeSlow(Math.min(WRITE_BYTES, size))
    let spare = Buffer.allocUnsafeSlow(filling.length)
    let filled = 0
    let writing: Promise<unknown> = Promise.resolve()
    // Writes the filled buffer while the other fills; the write before it is done first, so the
    // file's bytes stay in order.
    const writeFilled = async () => {
      await writing
      const bytes = filling.subarray(0, filled)
      writing = writeWhole(handle, bytes)
      // Its failure is the next await's; until then it must not count as unhandled.
      writing.catch(() => {})
      ;[filling, spare] = [spare, filling]
      filled = 0
    }
    try {
      for await (const chunk of source) {
        received += chunk.length
        if (received > size) return { kind: 'mismatch', detail: `more than the declared ${size} bytes arrived` }
        digest.update(chunk)
        for (let offset = 0; offset < chunk.length; ) {
          const copied = Math.min(chunk.length - offset, filling.length - filled)
          filling.set(chunk.subarray(offset, offset + copied), filled)
          filled += copied
          offset += copied
          if (filled === filling.length) await writeFilled()
        }
        collect(chunk.length)
      }
      if (filled > 0) await writeFilled()
      await writing
    } finally {
      // Nothing may write to the file once this returns (it is closed, or removed).
      await writing.catch(() => {})
    }
    if (received !== size) return { kind: 'mismatch', detail: `${received} bytes arrived, ${size} were declared` }
    if (hash !== undefined && digest.digest('hex') !== hash) return { kind: 'mismatch', detail: 'the SHA-256 of the bytes differs from the declared hash' }
    await handle.sync()
    return { kind: 'stored' }
  }

  /**
   * Writes `source` to `final` through tmp/: verified (`expected`: the SHA-256 to match, if any),
   * fsynced, renamed into place, its folder (and each folder made for it) fsynced.
   */
  async function publish(
    final: string,
    expected: string | undefined,
    size: number,
    source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  ): Promise<PutOutcome> {
    const name = writes.begin()
    const partial = path.join(temporary, name)
    const handle = await open(partial, 'wx', 0o600).catch((error: unknown) => {
      writes.done(name)
      throw error
    })
    // Whatever fails before the rename (the bytes, a full or failing disk, a folder that cannot
    // be made), the temporary file goes with it.
    let published = false
    try {
      let outcome: PutOutcome
      try {
        outcome = await writeVerified(handle, expected, size, source)
      } finally {
        await handle.close()
      }
      if (outcome.kind !== 'stored') return outcome
      const directory = path.dirname(final)
      const created = await mkdir(directory, { recursive: true })
      // Same name, same bytes: renaming over an existing copy is harmless and keeps the write atomic.
      await rename(partial, final)
      published = true
      // The publish time, not the last write's: a collector that decided before this publish
      // leaves the file alone (remove's unlessModifiedSince).
      const publishedAt = new Date()
      await utimes(final, publishedAt, publishedAt)
      await syncDirectory(directory)
      // A folder made for this blob is an entry of its parent: make each such entry durable too.
      if (created !== undefined) {
        for (let parent = path.dirname(directory); ; parent = path.dirname(parent)) {
          await syncDirectory(parent)
          if (parent === path.dirname(created)) break
        }
      }
      return outcome
    } finally {
      // One that cannot be removed now either is a leftover the next cleanup removes.
      if (!published) await unlink(partial).catch(() => {})
      writes.done(name)
    }
  }

  return {
    kind: 'folder',
    location: root,
    root,
    pathOf,

    put: (hash, size, source) => publish(pathOf(hash), hash, size, source),

    putPart: async (uploadId, hash, name, size, source, sha256) => publish(partPath(uploadId, hash, name), sha256, size, source),

    async openPart(uploadId, hash, name) {
      const handle = await open(partPath(uploadId, hash, name), 'r')
      return countedReads(handle.createReadStream(), onRead)
    },

    async removePart(uploadId, hash, name) {
      await unlink(partPath(uploadId, hash, name)).catch(ignoreMissing)
    },

    async removeParts(uploadId, hash) {
      await rm(partPath(uploadId, hash), { recursive: true, force: true })
    },

    async *partUploads() {
      for (const name of await sortedNames(parts)) if (UPLOAD_NAME.test(name)) yield name
    },

    // One folder at a time: tmp/ and names that are not blobs in their place are left out.
    async *list() {
      for (const first of (await sortedNames(root)).filter((name) => FAN_OUT.test(name))) {
        for (const second of (await sortedNames(path.join(root, first))).filter((name) => FAN_OUT.test(name))) {
          const prefix = first + second
          for (const name of await sortedNames(path.join(root, first, second))) if (BLOB_NAME.test(name) && name.startsWith(prefix)) yield name
        }
      }
    },

    async size(hash) {
      try {
        return (await stat(pathOf(hash))).size
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
        throw error
      }
    },

    async open(hash, range?: ByteRange) {
      const handle = await open(pathOf(hash), 'r')
      const file = handle.createReadStream(range ? { start: range.start, end: range.end } : {})
      return countedReads(file, onRead)
    },

    async sha256(hash) {
      const handle = await open(pathOf(hash), 'r')
      try {
        const digest = createHash('sha256')
        let hashing = Buffer.allocUnsafeSlow(CHECK_READ_BYTES)
        let filling = Buffer.allocUnsafeSlow(CHECK_READ_BYTES)
        let position = 0
        let reading = handle.read(hashing, 0, CHECK_READ_BYTES, position)
        for (;;) {
          const { bytesRead } = await reading
          if (bytesRead === 0) break
          position += bytesRead
          reading = handle.read(filling, 0, CHECK_READ_BYTES, position)
          digest.update(hashing.subarray(0, bytesRead))
          onRead(bytesRead)
          ;[hashing, filling] = [filling, hashing]
        }
        return digest.digest('hex')
      } finally {
        await handle.close()
      }
    },

    async remove(hash, unlessModifiedSince) {
      const file = pathOf(hash)
      try {
        // A blob rewritten after the caller decided to remove it (a new upload of the same
        // bytes) is kept: its modification time moved.
        if (unlessModifiedSince !== undefined && (await stat(file)).mtimeMs > unlessModifiedSince) return false
        await unlink(file)
        return true
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
        return false
      }
    },

    async cleanLeftovers() {
      let removed = 0
      for (const name of await readdir(temporary)) {
        const file = path.join(temporary, name)
        // A write that was in progress when the folder was listed may have been published (or
        // removed by its own failure) since: gone, it is nothing to clean.
        const modifiedMs = await stat(file).then((found) => found.mtimeMs, ignoreMissing)
        if (modifiedMs !== undefined && writes.leftBehind(name, modifiedMs) && (await unlink(file).then(() => true, ignoreMissing))) removed++
      }
      return removed
    },

    async ping() {
      await stat(temporary)
    },
  }
}
