// The sync engine's backup (docs/client-library.md, "Backing up a folder"): every file of a
// walk into one album, several at a time, resumable and idempotent.
//
// - A file this device has backed up before (same path, size and mtime, recorded in the state
//   store) whose asset the album still holds is skipped without being read.
// - Any other file is read and hashed; its asset id follows from its content (format/ids.ts),
//   so content the album already holds is not sent again, whoever sent it, and a crash after
//   the server committed an asset but before the store recorded it cannot store it twice (the
//   server refuses the second create, and backupFile reads that as "present").
// - Content the album holds as a deleted asset (`coffer-photos rm`) is not stored again: a
//   backup does not undo a deletion. It is reported `deleted`.
// - Upload sessions are recorded while open; the next run aborts those a crash left behind.
// - Stopping (the signal) lets the files in flight finish and starts no new one.
// The state store is a port: node/state.ts keeps it in node:sqlite; a browser can keep it in
// IndexedDB.
import { feedEntries } from './albums.ts'
import { backupFile, FileTransferError, type BackupTarget, type FileSource, type MediaFacts } from './files.ts'

/** What a device remembers between runs. */
export interface SyncState {
  /** The asset this device stored a file as, when the same path, size and mtime was backed up to this album before. */
  knownAsset(albumId: string, path: string, size: number, modified: number | null): Promise<string | null>
  remember(entry: { albumId: string; path: string; size: number; modified: number | null; contentHash: string; assetId: string }): Promise<void>
  uploadOpened(uploadId: string): Promise<void>
  uploadEnded(uploadId: string): Promise<void>
  /** Upload sessions opened and not ended: a crash left them open. */
  openUploads(): Promise<string[]>
}

/** A file found by a walk. */
export interface Candidate {
  /** Relative to the folder backed up, "/" between names: the name stored in the metadata. */
  readonly path: string
  readonly size: number
  readonly modified: number | null
  source(): Promise<FileSource>
  /** Capture time, dimensions and derivatives (node/media.ts); only asked for a file that is sent. */
  describe?(): Promise<MediaFacts>
}

/** `deleted`: the album holds this content as an asset deleted since (`coffer-photos rm`): not stored again, so that a backup does not undo a deletion. */
export type FileOutcome = 'stored' | 'present' | 'unchanged' | 'deleted' | 'failed'

export type BackupEvent =
  | { readonly type: 'start'; readonly files: number; readonly bytes: number; readonly abortedUploads: number }
  | { readonly type: 'file'; readonly path: string; readonly outcome: FileOutcome; readonly size: number; readonly sentBytes: number; readonly assetId: string | null; readonly error?: string }
  | { readonly type: 'retry'; readonly path: string; readonly attempt: number; readonly error: string }

export interface BackupSummary {
  readonly files: number
  readonly bytes: number
  readonly stored: number
  readonly present: number
  readonly unchanged: number
  /** Files whose content the album holds as a deleted asset: not stored again. */
  readonly deleted: number
  readonly failed: number
  readonly sentBytes: number
  /** True when the signal stopped the run before every file was seen. */
  readonly stopped: boolean
  readonly failures: readonly { readonly path: string; readonly error: string }[]
}

export interface BackupRun {
  readonly target: BackupTarget
  readonly state: SyncState
  /** Files in flight at once; 4 unless given. */
  readonly concurrency?: number
  /** Tries per file when the network or the server fails (transient); 3 unless given. */
  readonly attempts?: number
  readonly signal?: AbortSignal
  readonly onEvent?: (event: BackupEvent) => void
  /** The totals for progress, from a quick first walk; the run does not need them. */
  readonly totals?: { readonly files: number; readonly bytes: number }
}

/** A failure worth trying the file again for: the network, or the server (5xx, 429). */
function transient(error: unknown): boolean {
  for (let at: unknown = error, depth = 0; at instanceof Error && depth < 5; at = at.cause, depth++) {
    const status = (at as { status?: unknown }).status
    if (typeof status === 'number') return status >= 500 || status === 429
    if (at instanceof TypeError) return true
  }
  return false
}

/** A failure that every other file would meet too (the session ended, the account is suspended, over quota): stop the run. */
export function fatal(error: unknown): boolean {
  for (let at: unknown = error, depth = 0; at instanceof Error && depth < 5; at = at.cause, depth++) {
    const status = (at as { status?: unknown }).status
    if (typeof status === 'number') return status === 401 || status === 403 || status === 507
  }
  return false
}

/** The error in `error`'s cause chain that carries the server's status (the CofferProblem a FileTransferError wraps). */
export function statusError(error: unknown): unknown {
  for (let at: unknown = error, depth = 0; at instanceof Error && depth < 5; at = at.cause, depth++) {
    if (typeof (at as { status?: unknown }).status === 'number') return at
  }
  return error
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Backs up every candidate into the run's album; see the top of this file. */
export async function backupAll(run: BackupRun, candidates: AsyncIterable<Candidate> | Iterable<Candidate>): Promise<BackupSummary> {
  const { target, state } = run
  const emit = run.onEvent ?? (() => {})
  let abortedUploads = 0
  for (const uploadId of await state.openUploads()) {
    await target.client.abortUploadSession(uploadId).catch(() => {}) // already ended or expired: the same for us
    await state.uploadEnded(uploadId)
    abortedUploads++
  }
  // Each asset's latest action: live ones are not sent again, deleted ones not brought back.
  const live = new Set<string>()
  const deleted = new Set<string>()
  for await (const entry of feedEntries(target.client, target.albumId)) {
    if (entry.action === 'delete') {
      live.delete(entry.asset_id)
      deleted.add(entry.asset_id)
    } else {
      deleted.delete(entry.asset_id)
      live.add(entry.asset_id)
    }
  }
  emit({ type: 'start', files: run.totals?.files ?? 0, bytes: run.totals?.bytes ?? 0, abortedUploads })
  const totals = { files: 0, bytes: 0, stored: 0, present: 0, unchanged: 0, deleted: 0, failed: 0, sentBytes: 0 }
  const failures: { path: string; error: string }[] = []
  let fatalError: unknown = null
  const iterator = (Symbol.asyncIterator in candidates ? candidates[Symbol.asyncIterator]() : candidates[Symbol.iterator]()) as AsyncIterator<Candidate> | Iterator<Candidate>

  const finish = (candidate: Candidate, outcome: FileOutcome, assetId: string | null, sentBytes: number, error?: string): void => {
    totals.files++
    totals.bytes += candidate.size
    totals[outcome]++
    totals.sentBytes += sentBytes
    if (error !== undefined) failures.push({ path: candidate.path, error })
    emit({ type: 'file', path: candidate.path, outcome, size: candidate.size, sentBytes, assetId, ...(error === undefined ? {} : { error }) })
  }

  const one = async (candidate: Candidate): Promise<void> => {
    const known = await state.knownAsset(target.albumId, candidate.path, candidate.size, candidate.modified)
    if (known !== null && live.has(known)) return finish(candidate, 'unchanged', known, 0)
    if (known !== null && deleted.has(known)) return finish(candidate, 'deleted', known, 0)
    const attempts = run.attempts ?? 3
    for (let attempt = 1; ; attempt++) {
      let uploadId: string | null = null
      try {
        const result = await backupFile(target, await candidate.source(), {
          isStored: (assetId) => live.has(assetId) || deleted.has(assetId),
          ...(candidate.describe === undefined ? {} : { describe: () => candidate.describe!() }),
          onUploadOpened: async (id) => {
            uploadId = id
            await state.uploadOpened(id)
          },
        })
        if (uploadId !== null) await state.uploadEnded(uploadId)
        await state.remember({ albumId: target.albumId, path: candidate.path, size: candidate.size, modified: candidate.modified, contentHash: result.contentHash, assetId: result.assetId })
        live.add(result.assetId)
        return finish(candidate, result.status === 'present' && deleted.has(result.assetId) ? 'deleted' : result.status, result.assetId, result.sentBytes)
      } catch (error) {
        if (uploadId !== null) await state.uploadEnded(uploadId) // backupFile aborted it
        if (fatal(error)) {
          fatalError ??= statusError(error)
          return
        }
        const message = (error as Error)?.message ?? String(error)
        if (!transient(error) || attempt >= attempts || run.signal?.aborted === true) {
          return finish(candidate, 'failed', error instanceof FileTransferError ? error.assetId : null, 0, message)
        }
        emit({ type: 'retry', path: candidate.path, attempt, error: message })
        await pause(Math.min(30_000, 1000 * 2 ** (attempt - 1)))
      }
    }
  }

  const worker = async (): Promise<void> => {
    while (run.signal?.aborted !== true && fatalError === null) {
      const next = await iterator.next()
      if (next.done === true) return
      await one(next.value)
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, run.concurrency ?? 4) }, worker))
  if (fatalError !== null) throw fatalError
  const stopped = run.signal?.aborted === true && (await iterator.next()).done !== true
  return { ...totals, stopped, failures }
}
