// `coffer-photos backup <folder> [--album NAME]`: the folder's photos and videos into an album,
// encrypted, several at a time; a rerun (after Ctrl-C, a crash, or new photos) sends only what
// the album lacks (src/client/sync.ts).
import { stat } from 'node:fs/promises'
import path from 'node:path'
import { openAlbum } from '../../client/albums.ts'
import { describeMedia } from '../../client/node/media.ts'
import { openSyncState } from '../../client/node/state.ts'
import { candidateOf, walkMedia } from '../../client/node/walk.ts'
import { backupAll } from '../../client/sync.ts'
import { bytesText } from '../progress.ts'
import { commandClientOptions, openAccount } from './account.ts'
import { EXIT, UsageError, type Command } from './command.ts'
import { countOption, libraryOf } from './library.ts'
import { transferProgress } from './transfer-progress.ts'

export const backup: Command = {
  name: 'backup',
  summary: 'back up a folder of photos and videos into an album (resumable)',
  usage: `usage: coffer-photos backup <folder> [--album NAME] [--concurrency N] [--location] [--json]

  Walks <folder> and its subfolders for photos and videos (JPEG, HEIC, PNG, WebP, GIF, AVIF,
  TIFF, DNG, MP4, MOV; hidden and empty files are skipped), encrypts each with a thumbnail and
  a preview, and stores it in the album. What the album already holds is not sent again; files
  unchanged since the last run are not even read. Ctrl-C stops after the files in flight; run
  the same command again to continue.

  --album NAME       the album (made when it does not exist); default: the folder's name
  --concurrency N    files in flight at once (1-64, default 4)
  --location         keep the GPS position from the photos' EXIF (encrypted like the rest); off by default
  --json             one JSON object per line on stdout: start, file (one per file), summary`,
  options: { album: { type: 'string' }, concurrency: { type: 'string' }, location: { type: 'boolean' } },
  async run({ positionals, values, out, signal }) {
    const [folder, ...extra] = positionals
    if (folder === undefined || extra.length > 0) throw new UsageError('backup takes one folder')
    const root = path.resolve(folder)
    if (!(await stat(root).catch(() => null))?.isDirectory()) throw new UsageError(`${folder} is not a folder`)
    const concurrency = countOption(values.concurrency, 'concurrency', 4)
    const location = values.location === true
    const account = await openAccount(commandClientOptions(out, signal))
    const library = libraryOf(account)
    const album = await openAlbum(library, typeof values.album === 'string' ? values.album : path.basename(root))
    const totals = { files: 0, bytes: 0 }
    for await (const file of walkMedia(root)) {
      totals.files++
      totals.bytes += file.size
    }
    out.say(`backing up ${totals.files} files (${bytesText(totals.bytes)}) from ${root} to album "${album.name}"`)
    const state = openSyncState(path.join(account.home, 'state.sqlite'))
    const progress = transferProgress(out, totals)
    const started = Date.now()
    try {
      const summary = await backupAll(
        {
          target: { ...library, albumId: album.albumId, protocolVersion: album.protocolVersion },
          state,
          concurrency,
          signal,
          totals,
          onEvent: (event) => {
            if (event.type === 'start') {
              out.event('start', { album: album.name, album_id: album.albumId, files: event.files, bytes: event.bytes, aborted_uploads: event.abortedUploads })
            } else if (event.type === 'file') {
              progress.advance(event.size, event.outcome === 'failed' ? `failed: ${event.path}` : event.path)
              out.event('file', { path: event.path, outcome: event.outcome, size: event.size, sent_bytes: event.sentBytes, asset_id: event.assetId, ...(event.error === undefined ? {} : { error: event.error }) })
              if (event.outcome === 'failed') progress.note(`coffer-photos: ${event.error}`)
            } else progress.note(`coffer-photos: ${event.path}: ${event.error}; trying again (attempt ${event.attempt + 1})`)
          },
        },
        (async function* () {
          for await (const file of walkMedia(root)) yield candidateOf(file, (at, type) => describeMedia(at, type, { location }))
        })(),
      )
      progress.stop()
      const seconds = (Date.now() - started) / 1000
      const { sentBytes, ...counts } = summary
      out.event('summary', { ...counts, sent_bytes: sentBytes, seconds })
      out.say(
        `${summary.stopped ? 'stopped: ' : ''}${summary.files} of ${totals.files} files (${bytesText(summary.bytes)}) in ${seconds.toFixed(1)} s: ` +
          `${summary.stored} stored (${bytesText(summary.sentBytes)} sent), ${summary.present} already in the album, ${summary.unchanged} unchanged, ${summary.deleted > 0 ? `${summary.deleted} deleted from the album (not stored again), ` : ''}${summary.failed} failed`,
      )
      for (const failure of summary.failures) out.warn(`failed: ${failure.path}: ${failure.error}`)
      if (summary.stopped) out.warn('coffer-photos: stopped; run the same command again to continue')
      return summary.stopped ? EXIT.interrupted : summary.failed > 0 ? EXIT.failed : EXIT.ok
    } finally {
      progress.stop()
      state.close()
    }
  },
}
