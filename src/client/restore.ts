// Restoring an album (docs/client-library.md, "Restoring an album"): every file of a plan
// (albums.ts planAlbum) opened a window at a time (openPlanned) and handed to a writer, several
// at a time, so that memory holds the window and not the album.
//
// - Names: each file gets its metadata name (or the name a layout gives it: datedName puts it in
//   a YYYY/MM folder), and a second file of the same name (different content) gets its asset
//   id's start before the extension ("IMG.jpg", "IMG (1a2b3c4d).jpg").
//   Names are given in feed order as the files come out of openPlanned, one at a time, so the
//   same album gives the same names whatever the concurrency.
// - Failures are per file: a file that cannot be opened (its manifest, metadata or key) or
//   written is reported and the run goes on. What every other file would meet too (401 session
//   ended, 403 suspended: the server's CofferProblem is thrown, not the FileTransferError around
//   it; a full disk: DiskFullError, naming the first file that found no room) and a failure to
//   read the feed stop the run and are thrown, once the files in flight have finished.
// - Stopping (the signal): no new file is taken, the files in flight finish.
// - The writer is a port: node/files.ts restoreInto writes into a folder; a browser can write
//   to a folder handle or an archive.
import { openPlanned, type AlbumPlan, type Library, type PlannedFile } from './albums.ts'
import type { RestoredFile } from './files.ts'
import { fatalCause } from './sync.ts'
import { metadataTaken, takenMonthPath, type TakenOptions } from './taken.ts'

/** `kept`: a different file is already at its name (the writer keeps it): this one is not restored. */
export type RestoreOutcome = 'restored' | 'unchanged' | 'kept' | 'failed'

/** One file done: `name` is the name it was given, null when it could not be opened (its metadata unread). */
export interface RestoreEvent {
  readonly type: 'file'
  readonly name: string | null
  readonly assetId: string
  readonly outcome: RestoreOutcome
  /** Plaintext bytes: the metadata's size, or the envelope's stated size when it could not be opened. */
  readonly size: number
  readonly error?: string
}

export interface RestoreSummary {
  /** The plan's files. */
  readonly files: number
  readonly restored: number
  readonly unchanged: number
  readonly kept: number
  readonly failed: number
  /** True when the signal stopped the run before every planned file was taken. */
  readonly stopped: boolean
  readonly failures: readonly { readonly name: string | null; readonly assetId: string; readonly error: string }[]
}

/**
 * Puts one opened file in place under `name`: 'restored', 'unchanged' when an identical file is
 * already there, or 'kept' when a different one is (and stays). Throws to fail this file (the run
 * goes on; a full disk stops it: DiskFullError). It reads `file.bytes` at most once, and keeps
 * nothing under `name` unless they end without throwing.
 */
export type RestoreWriter = (file: RestoredFile, name: string) => Promise<'restored' | 'unchanged' | 'kept'>

/**
 * The writer found no room (ENOSPC, or EDQUOT: the quota spent): every next file would fail the
 * same way, so the run stops at the first, naming it. `code` is the system's.
 */
export class DiskFullError extends Error {
  override readonly name = 'DiskFullError'
  readonly code: string
  readonly fileName: string

  constructor(fileName: string, code: string, options?: ErrorOptions) {
    super(`no space left to write ${fileName} (${code}); the files restored before it are kept: make room and run again to continue`, options)
    this.code = code
    this.fileName = fileName
  }
}

const DISK_FULL = new Set(['ENOSPC', 'EDQUOT'])

/** The system's code when `error` says the disk is full, else null. */
function diskFull(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && DISK_FULL.has(code) ? code : null
}

export interface RestoreRun {
  readonly library: Library
  readonly plan: AlbumPlan
  readonly write: RestoreWriter
  /** Files being written at once; 4 unless given. */
  readonly concurrency?: number
  /** Files opened ahead of the writers (openPlanned); concurrency + 4 unless given. */
  readonly ahead?: number
  readonly signal?: AbortSignal
  readonly onEvent?: (event: RestoreEvent) => void
  /** The name (a relative path, "/" between plain names) a file is restored under, before uniqueName: its metadata name unless given. */
  readonly nameOf?: (file: RestoredFile) => string
}

/** The file's extension as path.posix.extname gives it: from the last "." of its last segment, unless that starts it. */
function extensionOf(name: string): string {
  const base = name.slice(name.lastIndexOf('/') + 1)
  const dot = base.lastIndexOf('.')
  return dot <= 0 ? '' : base.slice(dot)
}

/** `name`, or for a second file of that name, its asset id's start before the extension. */
export function uniqueName(name: string, assetId: string, taken: Set<string>): string {
  let chosen = name
  if (taken.has(chosen)) {
    const extension = extensionOf(name)
    chosen = `${name.slice(0, name.length - extension.length)} (${assetId.slice(0, 8)})${extension}`
  }
  taken.add(chosen)
  return chosen
}

/**
 * The date layout's name of a file: "YYYY/MM/" of the date it was taken (taken.ts: the wall
 * clock where it was taken, a modification or upload time in the viewer's `zone`, as
 * `coffer-photos ls` shows it), then its name without its subfolder.
 */
export function datedName(file: Pick<RestoredFile, 'metadata' | 'envelope'>, options: TakenOptions = {}): string {
  const { name } = file.metadata
  return `${takenMonthPath(metadataTaken(file.metadata, file.envelope.timestamp, options).local)}/${name.slice(name.lastIndexOf('/') + 1)}`
}

/** Restores every file of the plan with `write`; see the top of this file. */
export async function restoreAll(run: RestoreRun): Promise<RestoreSummary> {
  const concurrency = Math.max(1, run.concurrency ?? 4)
  const emit = run.onEvent ?? (() => {})
  const counts = { restored: 0, unchanged: 0, kept: 0, failed: 0 }
  const failures: { name: string | null; assetId: string; error: string }[] = []
  let stopError: unknown = null
  let exhausted = false
  const taken = new Set<string>()
  const nameOf = run.nameOf ?? ((file: RestoredFile) => file.metadata.name)
  // Names are given here, in the order openPlanned yields, before any writer sees the file.
  const files = (async function* (): AsyncGenerator<PlannedFile & { readonly name: string | null }, void> {
    for await (const planned of openPlanned(run.library, run.plan, { ahead: run.ahead ?? concurrency + 4 })) {
      yield planned.file === undefined ? { ...planned, name: null } : { ...planned, name: uniqueName(nameOf(planned.file), planned.assetId, taken) }
    }
  })()

  const finish = (name: string | null, assetId: string, size: number, outcome: RestoreOutcome, error?: string): void => {
    counts[outcome]++
    if (error !== undefined) failures.push({ name, assetId, error })
    emit({ type: 'file', name, assetId, outcome, size, ...(error === undefined ? {} : { error }) })
  }

  const worker = async (): Promise<void> => {
    while (run.signal?.aborted !== true && stopError === null) {
      let next: IteratorResult<PlannedFile & { readonly name: string | null }, void>
      try {
        next = await files.next()
      } catch (error) {
        stopError ??= error // the feed could not be read
        return
      }
      if (next.done === true) {
        exhausted = true
        return
      }
      const { assetId, size, name, file, error } = next.value
      if (file === undefined || name === null) {
        const stop = fatalCause(error)
        if (stop !== null) {
          stopError ??= stop
          return
        }
        finish(null, assetId, size, 'failed', error?.message)
        continue
      }
      try {
        finish(name, assetId, file.metadata.size, await run.write(file, name))
      } catch (caught) {
        const full = diskFull(caught)
        const stop = full === null ? fatalCause(caught) : new DiskFullError(name, full, { cause: caught })
        if (stop !== null) {
          stopError ??= stop
          return
        }
        finish(name, assetId, file.metadata.size, 'failed', (caught as Error)?.message ?? String(caught))
      }
    }
  }
  let stopped = false
  try {
    await Promise.all(Array.from({ length: concurrency }, worker))
    // Told to stop: was anything left? (The next file, if any, is already opened.)
    if (stopError === null && !exhausted) stopped = (await files.next().catch(() => ({ done: false }))).done !== true
  } finally {
    await files.return(undefined).catch(() => {}) // stopped early: open no more
  }
  if (stopError !== null) throw stopError
  return { files: run.plan.files, ...counts, stopped, failures }
}
