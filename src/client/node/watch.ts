// `backup --watch`: the folder's changes, gathered until it has been quiet a moment (a copy in
// progress, a camera import, an editor saving in several writes all end as one batch), as the
// paths to look at again. fs.watch is recursive on Linux (inotify, one watch per folder: see
// fs.inotify.max_user_watches), macOS and Windows. An event names a path, not what happened, so
// the caller stats each: a new or changed file is backed up, a folder is walked, a path that
// is gone is left alone (a backup never deletes from the album).
import { watch } from 'node:fs'
import { lstat } from 'node:fs/promises'
import path from 'node:path'
import { walkedFile, walkMedia, type WalkedFile } from './walk.ts'

export interface FolderWatch {
  /** Resolves with the paths (relative to the root, "/" between names) changed since the last call, once nothing has changed for `quietMs`; with null when stopped. */
  next(): Promise<string[] | null>
  close(): void
}

/** Watches `root` and its subfolders; `signal` stops it. A watcher error (the folder removed, the system's watch limit reached) rejects `next`. */
export function watchFolder(root: string, options: { quietMs: number; signal?: AbortSignal }): FolderWatch {
  const changed = new Set<string>()
  let timer: NodeJS.Timeout | null = null
  let waiting: { resolve: (paths: string[] | null) => void; reject: (error: unknown) => void } | null = null
  let failure: unknown = null
  let closed = false
  const deliver = (): void => {
    if (waiting === null || timer !== null) return
    if (failure !== null) {
      waiting.reject(failure)
      return
    }
    if (closed) {
      waiting.resolve(null)
      return
    }
    if (changed.size === 0) return
    const paths = [...changed]
    changed.clear()
    const { resolve } = waiting
    waiting = null
    resolve(paths)
  }
  const watcher = watch(root, { recursive: true }, (_event, name) => {
    if (name === null) return
    changed.add(name.split(path.sep).join('/'))
    if (timer !== null) clearTimeout(timer)
    timer = setTimeout(() => {
      timer = null
      deliver()
    }, options.quietMs)
  })
  const close = (): void => {
    if (closed) return
    closed = true
    watcher.close()
    if (timer !== null) clearTimeout(timer)
    timer = null
    deliver()
  }
  watcher.on('error', (error) => {
    failure = error
    close()
  })
  options.signal?.addEventListener('abort', close, { once: true })
  return {
    next: () =>
      new Promise((resolve, reject) => {
        waiting = { resolve, reject }
        deliver()
      }),
    close,
  }
}

async function* onlyFile(file: WalkedFile | null): AsyncGenerator<WalkedFile> {
  if (file !== null) yield file
}

/**
 * The files to back up among changed paths: a file is walked as walkMedia would find it (a photo
 * or video by its name, not hidden, not empty, no link followed), a folder is walked whole. Each
 * file once, in the paths' order.
 */
export async function* changedFiles(root: string, paths: readonly string[]): AsyncGenerator<WalkedFile> {
  const seen = new Set<string>()
  for (const relative of paths) {
    if (relative.split('/').some((segment) => segment.startsWith('.'))) continue
    const info = await lstat(path.join(root, ...relative.split('/'))).catch(() => null)
    if (info === null) continue // gone since: a backup does not delete
    const found = info.isDirectory() ? walkMedia(root, relative) : onlyFile(await walkedFile(root, relative))
    for await (const file of found) {
      if (seen.has(file.path)) continue
      seen.add(file.path)
      yield file
    }
  }
}
