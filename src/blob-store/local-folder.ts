// The blob store on a local (or shared) folder. Layout: <root>/<2 hex>/<2 hex>/<64 hex> for
// blobs and <root>/tmp/ for writes in progress. A write goes to a temporary file, is hashed
// while streaming, fsynced, renamed into place and the directory fsynced: a blob is either
// absent or complete and durable. Temporary names carry host, pid and this process's
// incarnation so that a start-up cleans only what dead writers left (several instances may
// share the folder, and a restarted container's server often has the pid of the one before).
import { createHash, randomBytes } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { mkdir, open, readdir, rename, stat, unlink, utimes, type FileHandle } from 'node:fs/promises'
import { hostname } from 'node:os'
import path from 'node:path'
import { pipeline, Transform } from 'node:stream'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { makeDirectory } from '../directories.ts'
import type { BlobStore, ByteRange, PutOutcome } from './port.ts'

const HASH = /^[0-9a-f]{64}$/

/**
 * A streamed upload arrives in socket buffers that only a garbage collection frees, and V8
 * lets some 64 MiB of them pile up before it collects on its own. A young-generation
 * collection (about a millisecond) after every COLLECT_EVERY bytes keeps a gigabyte's upload
 * within a few buffers' worth of memory. `gc` is reached through a fresh context, which is
 * how V8 exposes it once the flag is set at run time.
 */
const COLLECT_EVERY = 16 * 1024 * 1024
const collectYoungGeneration: () => void = (() => {
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as (options: { type: 'minor' }) => void
  return () => gc({ type: 'minor' })
})()
const STALE_FOREIGN_TEMP_MS = 24 * 3600 * 1000
/** Tells this process from an earlier one with the same pid on the same host. */
const INCARNATION = randomBytes(8).toString('hex')
/** `<host>-<pid>-i<incarnation>-<random>.part`; names of earlier versions have no incarnation. */
const TEMPORARY_NAME = /^(.+)-(\d+)-(?:i([0-9a-f]{16})-)?[0-9a-f]+\.part$/

function host(): string {
  return hostname().replace(/[^A-Za-z0-9.-]/g, '_')
}

async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

export interface LocalFolderBlobStore extends BlobStore {
  readonly root: string
  /** Where a blob lives (tests and the operator's tools look at the files). */
  pathOf(hash: string): string
  /**
   * The hash of every blob file, in hash order, one folder at a time (fsck, backup): tmp/ and
   * names that are not blobs in their place are left out. A blob published or removed while the
   * walk runs may or may not be seen.
   */
  list(): AsyncIterable<string>
}

const FAN_OUT = /^[0-9a-f]{2}$/

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
  makeDirectory(temporary)
  const pathOf = (hash: string): string => {
    if (!HASH.test(hash)) throw new Error(`not a blob name: ${hash}`)
    return path.join(root, hash.slice(0, 2), hash.slice(2, 4), hash)
  }

  async function writeVerified(handle: FileHandle, hash: string, size: number, source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<PutOutcome> {
    const digest = createHash('sha256')
    let received = 0
    let sinceCollection = 0
    for await (const chunk of source) {
      received += chunk.length
      if (received > size) return { kind: 'mismatch', detail: `more than the declared ${size} bytes arrived` }
      digest.update(chunk)
      await handle.write(chunk)
      sinceCollection += chunk.length
      if (sinceCollection >= COLLECT_EVERY) {
        sinceCollection = 0
        collectYoungGeneration()
      }
    }
    if (received !== size) return { kind: 'mismatch', detail: `${received} bytes arrived, ${size} were declared` }
    if (digest.digest('hex') !== hash) return { kind: 'mismatch', detail: 'the SHA-256 of the bytes differs from the declared hash' }
    await handle.sync()
    return { kind: 'stored' }
  }

  return {
    root,
    pathOf,

    async put(hash, size, source) {
      const final = pathOf(hash)
      const partial = path.join(temporary, `${host()}-${process.pid}-i${INCARNATION}-${randomBytes(8).toString('hex')}.part`)
      const handle = await open(partial, 'wx', 0o600)
      // Whatever fails before the rename (the bytes, a full or failing disk, a folder that cannot
      // be made), the temporary file goes with it.
      let published = false
      try {
        let outcome: PutOutcome
        try {
          outcome = await writeVerified(handle, hash, size, source)
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
        // One that cannot be removed now either is a leftover the next start cleans.
        if (!published) await unlink(partial).catch(() => {})
      }
    },

    async *list() {
      for (const first of (await sortedNames(root)).filter((name) => FAN_OUT.test(name))) {
        for (const second of (await sortedNames(path.join(root, first))).filter((name) => FAN_OUT.test(name))) {
          const prefix = first + second
          for (const name of await sortedNames(path.join(root, first, second))) if (HASH.test(name) && name.startsWith(prefix)) yield name
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

    open(hash, range?: ByteRange) {
      const file = createReadStream(pathOf(hash), range ? { start: range.start, end: range.end } : {})
      // Counted as the bytes pass on to the consumer. A 'data' listener on the file would set it
      // flowing before its consumer is attached, and whatever flowed meanwhile would be lost.
      const counted = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          onRead(chunk.length)
          done(null, chunk)
        },
      })
      // A read error reaches the consumer through `counted`; a consumer that stops closes the file.
      pipeline(file, counted, () => {})
      return counted
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
      const me = host()
      for (const name of await readdir(temporary)) {
        const match = TEMPORARY_NAME.exec(name)
        const file = path.join(temporary, name)
        const mine = match?.[1] === me
        const pid = Number(match?.[2])
        const earlierIncarnation = pid === process.pid && match?.[3] !== undefined && match[3] !== INCARNATION
        const writerGone = mine && (earlierIncarnation || !processIsAlive(pid))
        const staleForeign = !mine && Date.now() - (await stat(file)).mtimeMs > STALE_FOREIGN_TEMP_MS
        if (writerGone || staleForeign || match === null) {
          await unlink(file)
          removed++
        }
      }
      return removed
    },

    async ping() {
      await stat(temporary)
    },
  }
}
