// `coffer-photos backup <folder> [--album NAME]`: the folder's photos and videos into an album,
// encrypted, several at a time, each photo read once; a rerun (after Ctrl-C, a crash, or new
// photos) reads only what the local index does not know and sends only what the album lacks
// (src/client/sync.ts).
import { readFileSync } from 'node:fs'
import { stat } from 'node:fs/promises'
import path from 'node:path'
import { describeMedia, findVideoTools } from '../../client/node/media.ts'
import { inMemoryMaxFor } from '../../client/node/files.ts'
import { filtered, PatternError, pathFilter, type PathFilter } from '../../client/node/path-patterns.ts'
import { candidateOf, walkMedia, type SkippedFile, type UnreadableFolder, type WalkedFile, type WalkReport } from '../../client/node/walk.ts'
import { changedFiles, watchFolder, type FolderWatch } from '../../client/node/watch.ts'
import { uploadFraction } from '../../client/files.ts'
import { albumView, backupAll, type BackupSummary } from '../../client/sync.ts'
import { bytesText } from '../progress.ts'
import { commandClientOptions, openAccount } from './account.ts'
import { EXIT, FFMPEG_SWITCH, UsageError, type Command, type Invocation } from './command.ts'
import { dryRunBackup } from './backup-dry-run.ts'
import { openBackupTarget, countOption, libraryOf } from './library.ts'
import { VERBOSITY_OPTIONS, verbosityOf } from './output.ts'
import { transferProgress } from './transfer-progress.ts'
import { reportFileEvent, reportRetry } from './file-events.ts'

/** How long the folder must be quiet before a --watch batch is backed up: a copy or an editor's save has ended. */
const WATCH_QUIET_MS = 1000

/**
 * Bytes this process has read so far through read system calls (Linux's /proc/self/io rchar:
 * files, and also sockets and pipes), or null where the platform does not tell: the summary
 * reports how much a backup read against the size of what it stored (one pass per file).
 */
function bytesReadByProcess(): number | null {
  let io: string
  try {
    io = readFileSync('/proc/self/io', 'latin1')
  } catch {
    return null
  }
  const rchar = /^rchar:\s*(\d+)$/m.exec(io)?.[1]
  return rchar === undefined ? null : Number(rchar)
}

/** The files --include and --exclude keep. */
function patternsOf(values: Invocation['values']): PathFilter {
  const list = (value: Invocation['values'][string]): readonly string[] => (Array.isArray(value) ? value : [])
  try {
    return pathFilter(list(values.include), list(values.exclude))
  } catch (error) {
    if (error instanceof PatternError) throw new UsageError(`--include, --exclude: ${error.message}`)
    throw error
  }
}

/** What a walk left out: subfolders it could not list (a failure), files not backed up by what they are (not one). */
interface LeftOut {
  readonly unreadable: UnreadableFolder[]
  readonly skipped: SkippedFile[]
}

export const backup: Command = {
  usage: `usage: coffer-photos backup <folder> [--album NAME] [--include GLOB]... [--exclude GLOB]... [--dry-run]
                            [--concurrency N] [--location] [--watch] [--quiet | --verbose] [--json]

  Walks <folder> and its subfolders for photos and videos (JPEG, HEIC, PNG, WebP, GIF, AVIF,
  TIFF, camera RAW such as DNG, NEF, CR2, ARW; MP4, MOV, M4V, AVI, MKV, WebM; hidden files are
  skipped, any other file is named as not backed up), encrypts each with a thumbnail and
  a preview (a video's made from a frame 1 s in, with its length, by ffmpeg and ffprobe when
  they are on the PATH, unless COFFER_FFMPEG=off), and stores it in the album, reading each
  new photo once. What the album already holds is not sent again, nor the photos another
  album holds (only their thumbnails and names); files unchanged since the last run (same path, size, mtime and inode) are not even
  read; a file whose content changed is stored as a new version of the same photo, unless the
  album holds a newer version written elsewhere (then it is kept, or named as a conflict). Ctrl-C stops after the files in flight; run the same command
  again to continue.

  --album NAME       the album (made when it does not exist); default: the folder's name
  --include GLOB     back up only the files that match (repeatable: any of them); a GLOB
                     with a "/" is matched against the path in <folder> ("2024/**"), one
                     without against the file's name at any depth ("*.heic"); * ? [] {} **
  --exclude GLOB     leave out the files that match (repeatable), as --include; it wins over it
  --dry-run          say what would be uploaded and what skipped (from the local index and the
                     album), reading no file and sending or writing nothing
  --concurrency N    files in flight at once (1-64, default 4)
  --location         keep the GPS position from the photos' EXIF (encrypted like the rest); off by default
  --watch            after the backup, keep watching the folder: new and changed photos are
                     backed up as they appear (once the folder has been quiet for a second);
                     Ctrl-C stops (exit 130, as for any command stopped so)
  -q, --quiet        print only the summary line and what went wrong (no progress)
  -v, --verbose      also print one line per file (what was done with it)
  --json             one JSON object per line on stdout: start, file (one per file), summary;
                     with --watch, watching, then start, file and summary again for each batch;
                     with --dry-run, file (path, size, outcome) and summary`,
  options: {
    album: { type: 'string' },
    include: { type: 'string', multiple: true },
    exclude: { type: 'string', multiple: true },
    'dry-run': { type: 'boolean' },
    concurrency: { type: 'string' },
    location: { type: 'boolean' },
    watch: { type: 'boolean' },
    ...VERBOSITY_OPTIONS,
  },
  async run({ positionals, values, out, signal, home, resolvePath, ffmpeg, zone }) {
    const [folder, ...extra] = positionals
    if (folder === undefined || extra.length > 0) throw new UsageError('backup takes one folder')
    const root = resolvePath(folder)
    if (!(await stat(root).catch(() => null))?.isDirectory()) throw new UsageError(`${folder} is not a folder`)
    const concurrency = countOption(values.concurrency, 'concurrency', 4)
    const location = values.location === true
    const verbosity = verbosityOf(values)
    const wanted = patternsOf(values)
    if (values['dry-run'] === true && values.watch === true) throw new UsageError('--dry-run and --watch do not go together')
    /** The folder's files the patterns take; what the walk leaves out is told to `report` (an unlistable subfolder: skipped). */
    const walk = (report: WalkReport = { onUnreadable: () => {} }): AsyncIterable<WalkedFile> => filtered(walkMedia(root, '', report), wanted)
    const account = await openAccount(home, commandClientOptions(out, signal))
    const library = libraryOf(account)
    const albumGiven = typeof values.album === 'string' ? values.album : path.basename(root)
    if (values['dry-run'] === true) {
      await dryRunBackup({ library, album: albumGiven, files: walk(), stateFile: path.join(account.home, 'state.sqlite'), out, verbosity })
      return EXIT.ok
    }
    const { album, target, state } = await openBackupTarget(account, albumGiven)
    let watcher: FolderWatch | null = null
    const view = albumView(album.albumId)
    const inMemoryMax = inMemoryMaxFor(concurrency)
    /**
     * One backup run over `files` (`totals` counts them), reported as a `start`, a `file` per file
     * and a `summary`; `leftOut` fills with what the walk of `files` left out, which the summary names.
     */
    const pass = async (
      files: AsyncIterable<WalkedFile> | Iterable<WalkedFile>,
      totals: { files: number; bytes: number },
      leftOut: LeftOut = { unreadable: [], skipped: [] },
    ): Promise<BackupSummary> => {
      const progress = transferProgress(out, totals, { verbosity })
      const started = Date.now()
      // Described (to be stored) without ffprobe and ffmpeg, by path (candidateOf gives a video's): no poster, no length.
      const videosWithoutFfmpeg = new Set<string | Uint8Array>()
      const describe = async (at: string | Uint8Array, type: string) => {
        if (type.startsWith('video/') && (!ffmpeg || (await findVideoTools()) === null)) videosWithoutFfmpeg.add(at)
        return describeMedia(at, type, { location, ffmpeg, zone })
      }
      const readBefore = bytesReadByProcess()
      try {
        const summary = await backupAll(
          {
            target,
            state,
            view,
            concurrency,
            signal,
            totals,
            onEvent: (event) => {
              if (event.type === 'start') {
                out.event('start', {
                  album: album.name,
                  album_id: album.albumId,
                  files: event.files,
                  bytes: event.bytes,
                  aborted_uploads: event.abortedUploads,
                })
              } else if (event.type === 'file') {
                reportFileEvent(out, progress, verbosity, event, {
                  skipped: event.outcome === 'unchanged' || event.outcome === 'kept' || event.outcome === 'deleted',
                })
              } else reportRetry(out, event)
            },
            // The bar moves within each file as the library reads and sends it.
            onProgress: (path, upload) => progress.moving(path, uploadFraction(upload) * upload.size),
          },
          (async function* () {
            for await (const file of files) yield candidateOf(file, { describe, inMemoryMax })
          })(),
        )
        progress.stop()
        const seconds = (Date.now() - started) / 1000
        const readAfter = bytesReadByProcess()
        const readBytes = readBefore === null || readAfter === null ? null : readAfter - readBefore
        const { sentBytes, resumedBytes, ...counts } = summary
        const { unreadable, skipped } = leftOut
        out.event('summary', { ...counts, unreadable, skipped, sent_bytes: sentBytes, resumed_bytes: resumedBytes, read_bytes: readBytes, seconds })
        out.say(
          `${summary.stopped ? 'stopped: ' : ''}${summary.files} of ${totals.files} files (${bytesText(summary.bytes)}) in ${seconds.toFixed(1)} s: ` +
            `${summary.stored} stored (${bytesText(summary.sentBytes)} sent${summary.deduplicated > 0 ? `; ${summary.deduplicated} already stored (in another album or at another path), their originals not sent again` : ''}` +
            `${summary.resumed > 0 ? `; ${summary.resumed} continued where an interrupted upload stopped, ${bytesText(summary.resumedBytes)} not sent again` : ''}), ` +
            `${summary.replaced > 0 ? `${summary.replaced} changed (stored as new versions), ` : ''}${summary.present} already in the album, ${summary.unchanged} unchanged, ` +
            `${summary.kept > 0 ? `${summary.kept} kept as the album has them (a newer version written elsewhere), ` : ''}` +
            `${summary.conflict > 0 ? `${summary.conflict} in conflict (not sent), ` : ''}` +
            `${summary.deleted > 0 ? `${summary.deleted} deleted from the album (not stored again), ` : ''}${summary.failed} failed` +
            `${readBytes === null ? '' : `; ${bytesText(readBytes)} read`}`,
        )
        if (videosWithoutFfmpeg.size > 0 && verbosity !== 'quiet') {
          out.say(
            `${videosWithoutFfmpeg.size} video${videosWithoutFfmpeg.size === 1 ? '' : 's'} stored without a poster frame or length: ` +
              (ffmpeg ? 'ffmpeg and ffprobe are not on the PATH (Debian and Ubuntu: apt install ffmpeg)' : `${FFMPEG_SWITCH} is off`),
          )
        }
        for (const failure of summary.failures) out.warn(`failed: ${failure.path}: ${failure.error}`)
        for (const conflict of summary.conflicts) out.warn(`conflict: ${conflict.path}: ${conflict.reason}`)
        for (const folder of unreadable) out.warn(`not backed up: ${folder.path}/: the folder cannot be read: ${folder.error}`)
        for (const file of skipped) out.warn(`not backed up: ${file.path}: ${file.reason}`)
        return summary
      } finally {
        progress.stop()
      }
    }
    try {
      // Watching starts before the first pass, so that nothing written during it is missed; inside
      // the try, so that whatever fails after it leaves no watch keeping the process up.
      if (values.watch === true) watcher = watchFolder(root, { quietMs: WATCH_QUIET_MS, signal })
      // Walked twice, not held: a first walk (names and sizes only) counts for the progress; the
      // second names the subfolders it cannot list, which are skipped (the rest is backed up).
      const totals = { files: 0, bytes: 0 }
      for await (const file of walk()) {
        totals.files++
        totals.bytes += file.size
      }
      if (verbosity !== 'quiet') out.say(`backing up ${totals.files} files (${bytesText(totals.bytes)}) from ${root} to album "${album.name}"`)
      const leftOut: LeftOut = { unreadable: [], skipped: [] }
      let summary = await pass(
        walk({ onUnreadable: (folder) => leftOut.unreadable.push(folder), onSkipped: (file) => void (wanted(file.path) && leftOut.skipped.push(file)) }),
        totals,
        leftOut,
      )
      if (watcher !== null && !summary.stopped) {
        out.say(`watching ${root} for new and changed photos; Ctrl-C to stop`)
        out.event('watching', { folder: root })
        for (let paths = await watcher.next(); paths !== null; paths = await watcher.next()) {
          const changed: WalkedFile[] = []
          for await (const file of filtered(changedFiles(root, paths), wanted)) changed.push(file)
          if (changed.length === 0) continue
          summary = await pass(changed, { files: changed.length, bytes: changed.reduce((sum, file) => sum + file.size, 0) })
          if (summary.stopped) break
        }
      }
      if (summary.stopped) out.warn('coffer-photos: stopped; run the same command again to continue')
      return summary.stopped ? EXIT.interrupted : summary.failed > 0 || summary.conflict > 0 || leftOut.unreadable.length > 0 ? EXIT.failed : EXIT.ok
    } finally {
      watcher?.close()
      state.close()
    }
  },
}
