// `coffer-photos restore <album> <dest>`: every file of the album back into a folder, each
// decrypted, checked against its hash and written under its name (and subfolder; or, with
// --layout date, in a YYYY/MM folder of the date it was taken) only once whole and verified
// (src/client/node/files.ts writeRestored). Resumable: a file already there
// with the same size and modification time is kept as it is; what a crash left half-written
// is removed.
import { mkdir, opendir, unlink } from 'node:fs/promises'
import path from 'node:path'
import { planAlbum } from '../../client/albums.ts'
import { PARTIAL_SUFFIX, restoreInto } from '../../client/node/files.ts'
import type { RestoredFile } from '../../client/files.ts'
import { datedName, restoreAll } from '../../client/restore.ts'
import { bytesText } from '../progress.ts'
import { commandClientOptions, openAccount } from './account.ts'
import { EXIT, UsageError, type Command } from './command.ts'
import { albumByName, checkHistory, countOption, outsideTrash } from './library.ts'
import { VERBOSITY_OPTIONS, verbosityOf } from './output.ts'
import { transferProgress } from './transfer-progress.ts'

/** Files restored at once unless --concurrency says otherwise. */
const RESTORE_CONCURRENCY = 8

/** `bytes` as they pass, the count so far told to `tell` after each piece. */
async function* counted(bytes: AsyncIterable<Uint8Array>, tell: (soFar: number) => void): AsyncGenerator<Uint8Array> {
  let soFar = 0
  for await (const piece of bytes) {
    soFar += piece.length
    tell(soFar)
    yield piece
  }
}

/** Removes the partial files an interrupted restore left (hidden, ending in PARTIAL_SUFFIX). */
async function removePartials(folder: string): Promise<number> {
  let removed = 0
  for await (const entry of await opendir(folder)) {
    const at = path.join(folder, entry.name)
    if (entry.isDirectory()) removed += await removePartials(at)
    else if (entry.isFile() && entry.name.startsWith('.') && entry.name.endsWith(PARTIAL_SUFFIX)) {
      await unlink(at)
      removed++
    }
  }
  return removed
}

export const restore: Command = {
  usage: `usage: coffer-photos restore <album> <dest> [--layout path|date] [--overwrite] [--concurrency N] [--quiet | --verbose] [--json]

  Downloads every file of the album, checks its hash, decrypts it and writes it into <dest>
  under its name and subfolder with its modification time. A file appears under its name only
  once whole and verified; a tampered or damaged file is refused, named, and nothing is left
  in its place. Run it again to continue: files already there with the same size and
  modification time are kept, and files the album gained since the last run are restored.

  --layout L         where each file goes: \`path\` (default), under its name and subfolder as
                     backed up; \`date\`, into a YYYY/MM folder of the date it was taken (the
                     clock where it was taken, as \`ls\` shows it) under its name without its subfolder
  --overwrite        replace a different file already at a file's name (by default it is kept
                     and that file is reported as not restored)
  --concurrency N    files in flight at once (1-64, default 8)
  -q, --quiet        print only the summary line and what went wrong (no progress)
  -v, --verbose      also print one line per file (what was done with it)
  --json             one JSON object per line on stdout: start, file (one per file), summary`,
  options: { layout: { type: 'string' }, overwrite: { type: 'boolean' }, concurrency: { type: 'string' }, ...VERBOSITY_OPTIONS },
  async run({ positionals, values, out, signal, home, resolvePath, zone }) {
    if (positionals.length !== 2) throw new UsageError('restore takes an album name and a destination folder')
    // Eight, not backup's four: a restored file waits on its fsync, not on the CPU (12 MP photos
    // restored 15-20% faster than with four, for about 30 MiB more; decision 0064).
    const concurrency = countOption(values.concurrency, 'concurrency', RESTORE_CONCURRENCY)
    const layout = values.layout ?? 'path'
    if (layout !== 'path' && layout !== 'date') throw new UsageError('--layout takes path or date')
    const verbosity = verbosityOf(values)
    const dest = resolvePath(positionals[1]!)
    const { album, library } = await albumByName(await openAccount(home, commandClientOptions(out, signal)), positionals[0])
    await checkHistory(library, album)
    await mkdir(dest, { recursive: true })
    const partials = await removePartials(dest)
    if (partials > 0) out.warn(`coffer-photos: removed ${partials} partial file${partials === 1 ? '' : 's'} an interrupted restore left`)

    // Planned from the feed (no file opened), then opened a window at a time: memory holds the
    // window, not the album (src/client/restore.ts). Files the album gains meanwhile wait for the next run.
    const plan = await planAlbum(library, album.albumId, await outsideTrash(library, out))
    if (verbosity !== 'quiet') out.say(`restoring ${plan.files} files (${bytesText(plan.bytes)}) from album "${album.name}" into ${dest}`)
    out.event('start', { album: album.name, album_id: album.albumId, files: plan.files, bytes: plan.bytes })
    const progress = transferProgress(out, plan, { verbosity, skippedWord: 'already there' })
    const writer = restoreInto(dest, { overwrite: values.overwrite === true })
    try {
      const summary = await restoreAll({
        library,
        plan,
        // The bar moves with each chunk written, not only when a file ends.
        write: (file, name) => {
          const bytes = counted(file.bytes, (written) => progress.moving(name, written))
          return writer({ ...file, bytes, derivative: (kind) => file.derivative(kind) }, name)
        },
        concurrency,
        signal,
        ...(layout === 'date' ? { nameOf: (file: RestoredFile) => datedName(file, { zone }) } : {}),
        onEvent: ({ name, assetId, outcome, size, error }) => {
          if (error !== undefined) out.warn(`coffer-photos: ${error}`)
          if (outcome === 'kept' && name !== null)
            out.warn(
              `coffer-photos: kept your file ${path.join(dest, name)}: it differs from the album's; the album's is not restored (--overwrite replaces it)`,
            )
          progress.advance(size, name ?? `asset ${assetId}`, { skipped: outcome === 'unchanged' || outcome === 'kept' })
          if (verbosity === 'verbose') out.say(`${outcome}  ${name ?? `asset ${assetId}`}  (${bytesText(size)})`)
          out.event('file', { path: name, outcome, size, asset_id: assetId, ...(error === undefined ? {} : { error }) })
        },
      })
      progress.stop()
      const { restored, unchanged, kept, failed, stopped } = summary
      out.event('summary', { restored, unchanged, kept, failed, files: plan.files, stopped })
      out.say(
        `${stopped ? 'stopped: ' : ''}${restored} restored, ${unchanged} already there, ` +
          `${kept > 0 ? `${kept} not restored: a different file of yours is at its name and was kept (--overwrite replaces them), ` : ''}` +
          `${failed} failed, of ${plan.files} files`,
      )
      for (const failure of summary.failures) out.warn(`failed: ${failure.error}`)
      return stopped ? EXIT.interrupted : failed > 0 || kept > 0 ? EXIT.failed : EXIT.ok
    } finally {
      progress.stop()
    }
  },
}
