// A backup engine's events as the photo commands that store files report them (backup, import
// takeout, import folder): a stored file's progress, verbose line, JSON event and failure
// warning, and a retry's warning. Each command adds what it knows of the file.
import type { BackupEvent } from '../../client/sync.ts'
import { bytesText } from '../progress.ts'
import type { Output, Verbosity } from './output.ts'
import type { TransferProgress } from './transfer-progress.ts'

export type FileEvent = Extract<BackupEvent, { readonly type: 'file' }>
export type RetryEvent = Extract<BackupEvent, { readonly type: 'retry' }>

export interface FileReport {
  /** Whether the progress counts the file as skipped (nothing sent, nothing failed). */
  readonly skipped: boolean
  /** How the verbose line names the file (default: its path in the album). */
  readonly shown?: string
  /** Said after the verbose line's size. */
  readonly note?: string
  /** The JSON event's fields beyond the engine's; a `path` given here names the file as the person gave it. */
  readonly fields?: Readonly<Record<string, unknown>>
  /** Names the file before a failure's error in its warning (default: the error alone, which names it). */
  readonly failedName?: string
}

export function reportFileEvent(out: Output, progress: TransferProgress, verbosity: Verbosity, event: FileEvent, report: FileReport): void {
  progress.advance(event.size, event.outcome === 'failed' ? `failed: ${event.path}` : event.path, { path: event.path, skipped: report.skipped })
  if (verbosity === 'verbose') out.say(`${event.outcome}  ${report.shown ?? event.path}  (${bytesText(event.size)})${report.note ?? ''}`)
  out.event('file', {
    path: event.path,
    outcome: event.outcome,
    size: event.size,
    sent_bytes: event.sentBytes,
    asset_id: event.assetId,
    ...report.fields,
    ...(event.error === undefined ? {} : { error: event.error }),
    ...(event.reason === undefined ? {} : { reason: event.reason }),
  })
  if (event.outcome === 'failed') out.warn(`coffer-photos: ${report.failedName === undefined ? '' : `${report.failedName}: `}${event.error}`)
}

export function reportRetry(out: Output, event: RetryEvent): void {
  out.warn(`coffer-photos: ${event.path}: ${event.error}; trying again (attempt ${event.attempt + 1})`)
}
