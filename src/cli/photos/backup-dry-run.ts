// `coffer-photos backup --dry-run`: what a backup of the folder would do with each file, from the
// local index and the album's feed (src/client/backup-plan.ts): no file is read, nothing is sent
// to the server (not even the album, when it does not exist yet) and nothing is written here.
import { existsSync } from 'node:fs'
import { findAlbum, type Library } from '../../client/albums.ts'
import { plannedOutcome, type PlannedOutcome } from '../../client/backup-plan.ts'
import { albumName } from '../../client/format/ids.ts'
import { openSyncState } from '../../client/node/state.ts'
import type { WalkedFile } from '../../client/node/walk.ts'
import { albumView } from '../../client/sync.ts'
import { bytesText } from '../progress.ts'
import type { Output, Verbosity } from './output.ts'

/** What each outcome says on its file's line, and whether it is listed without --verbose (what would be sent). */
const OUTCOME: Record<PlannedOutcome, { readonly text: string; readonly listed: boolean }> = {
  new: { text: 'would upload', listed: true },
  changed: { text: 'would upload as a new version', listed: true },
  unchanged: { text: 'unchanged, skipped', listed: false },
  deleted: { text: 'deleted from the album, skipped', listed: false },
  kept: { text: 'the album holds a newer version written elsewhere, skipped', listed: false },
  conflict: { text: 'changed here and in the album: would be compared, nothing sent', listed: true },
}

export async function dryRunBackup(options: {
  readonly library: Library
  /** The album's name as given (it may not exist yet). */
  readonly album: string
  readonly files: AsyncIterable<WalkedFile>
  /** The local index, state.sqlite: read only when it exists. */
  readonly stateFile: string
  readonly out: Output
  readonly verbosity: Verbosity
}): Promise<void> {
  const { library, out, verbosity } = options
  const album = await findAlbum(library, options.album)
  const name = album?.name ?? albumName(options.album)
  const view = albumView(album?.albumId ?? '')
  if (album !== null) await view.catchUp(library.client)
  const index = album !== null && existsSync(options.stateFile) ? openSyncState(options.stateFile) : null
  const counts: Record<PlannedOutcome, { files: number; bytes: number }> = {
    new: { files: 0, bytes: 0 },
    changed: { files: 0, bytes: 0 },
    unchanged: { files: 0, bytes: 0 },
    deleted: { files: 0, bytes: 0 },
    kept: { files: 0, bytes: 0 },
    conflict: { files: 0, bytes: 0 },
  }
  try {
    if (verbosity !== 'quiet') out.say(`dry run: nothing is sent or written; album "${name}"${album === null ? ' (would be made)' : ''}`)
    for await (const file of options.files) {
      const outcome = await plannedOutcome(index, view, file)
      counts[outcome].files++
      counts[outcome].bytes += file.size
      out.event('file', { path: file.path, size: file.size, outcome })
      if (verbosity === 'verbose' || (verbosity === 'normal' && OUTCOME[outcome].listed))
        out.say(`${OUTCOME[outcome].text}  ${file.path}  (${bytesText(file.size)})`)
    }
  } finally {
    index?.close()
  }
  const { new: fresh, changed, unchanged, deleted, kept, conflict } = counts
  out.event('summary', {
    dry_run: true,
    album: name,
    album_exists: album !== null,
    upload: fresh.files,
    upload_bytes: fresh.bytes,
    replace: changed.files,
    replace_bytes: changed.bytes,
    unchanged: unchanged.files,
    deleted: deleted.files,
    kept: kept.files,
    conflict: conflict.files,
  })
  out.say(
    `dry run: would upload ${fresh.files + changed.files} files (${bytesText(fresh.bytes + changed.bytes)}; ${changed.files} of them as new versions, ` +
      `new ones not sent when the album already holds their content), skip ${unchanged.files} unchanged and ${deleted.files} deleted from the album` +
      `${kept.files + conflict.files > 0 ? `; ${kept.files + conflict.files} hold a newer version in the album, written elsewhere (nothing sent)` : ''}`,
  )
}
