// Durable file copies for backup and restore: a copy is written under a temporary name, its
// SHA-256 taken while it streams, fsynced, renamed into place and its folder fsynced.
import { createHash, randomBytes } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { mkdir, open, readdir, rename, stat, unlink } from 'node:fs/promises'
import path from 'node:path'

/** What backup and restore refuse or fail with: one line for the operator, no stack. */
export class BackupError extends Error {}

export async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** Copies `from` to `to` durably; answers the copy's size and SHA-256 (hex). */
export async function copyDurably(from: string, to: string, mode = 0o600): Promise<{ bytes: number; sha256: string }> {
  await mkdir(path.dirname(to), { recursive: true })
  const partial = `${to}.${randomBytes(6).toString('hex')}.part`
  const digest = createHash('sha256')
  let bytes = 0
  const handle = await open(partial, 'wx', mode)
  try {
    for await (const chunk of createReadStream(from) as AsyncIterable<Buffer>) {
      digest.update(chunk)
      bytes += chunk.length
      await handle.write(chunk)
    }
    await handle.sync()
  } catch (error) {
    await handle.close()
    await unlink(partial).catch(() => {})
    throw error
  }
  await handle.close()
  await rename(partial, to)
  await syncDirectory(path.dirname(to))
  return { bytes, sha256: digest.digest('hex') }
}

export async function sha256OfFile(file: string): Promise<string> {
  const digest = createHash('sha256')
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) digest.update(chunk)
  return digest.digest('hex')
}

export async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return false
      throw error
    },
  )
}

/** The names in a folder; none when it does not exist. */
export async function entriesOf(directory: string): Promise<string[]> {
  try {
    return await readdir(directory)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
}

/** Runs `work` on every item, at most `width` at a time, in order of start. */
export async function inPool<T>(items: AsyncIterable<T> | Iterable<T>, width: number, work: (item: T) => Promise<void>): Promise<void> {
  const running = new Set<Promise<void>>()
  let failure: unknown = null
  for await (const item of items) {
    if (failure !== null) break
    const task: Promise<void> = work(item).then(
      () => {
        running.delete(task)
      },
      (error: unknown) => {
        running.delete(task)
        failure ??= error
      },
    )
    running.add(task)
    if (running.size >= width) await Promise.race(running)
  }
  await Promise.all(running)
  if (failure !== null) throw failure
}
