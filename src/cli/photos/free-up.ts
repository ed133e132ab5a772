// `coffer-photos free-up <folder> [--album NAME] [--yes]`: deletes the local originals the album
// holds safely (src/client/node/free-up.ts says what "safely" takes); a dry run unless --yes.
// Every freed file is appended to freed.log in the config folder.
import { stat } from 'node:fs/promises'
import path from 'node:path'
import { findAlbum } from '../../client/albums.ts'
import { albumName } from '../../client/format/ids.ts'
import { freeFile, KEEP_TEXT, openFreedLog, planFreeUp, type FreeUpFile, type KeepReason } from '../../client/node/free-up.ts'
import { openSyncState } from '../../client/node/state.ts'
import { bytesText } from '../progress.ts'
import { commandClientOptions, openAccount } from './account.ts'
import { EXIT, UsageError, type Command } from './command.ts'
import { checkHistory, countOption, libraryOf } from './library.ts'

/** The log of freed files, in the config folder. */
export const FREED_LOG = 'freed.log'

/** Kept for a reason that says something is wrong with the backup: exit 1. */
const FAILING: ReadonlySet<KeepReason> = new Set(['corrupt', 'not_durable', 'receipt', 'not_in_album'])

const plural = (count: number, word: string): string => `${count} ${word}${count === 1 ? '' : 's'}`

export const freeUp: Command = {
  usage: `usage: coffer-photos free-up <folder> [--album NAME] [--yes] [--download] [--concurrency N] [--json]

  Lists the photos and videos of <folder> that can be deleted here because the album holds them
  safely, and with --yes deletes them. A file is freed only when all of these hold:
    - this device backed it up to the album, and it has not changed since (same size and
      modification time, and its bytes, read again now, hash to what was backed up);
    - the server holds every blob of it (original, thumbnails, metadata, manifest) stored,
      indexed and retrievable;
    - its custody receipts verify here (signature, chain, one for every blob);
    - its bytes were checked: the server's deep check re-read every blob and found it intact,
      or \`verify --deep\` (or --download) downloaded and checked it here, in this run or in
      the last 24 hours; or, in a folder of more than 64 files, a random sample of 64 of them
      was so checked, all intact, and nothing was found corrupt. The server checks a limited
      amount per hour; what neither it nor the sample reached yet is kept: run again later.
  Every other file is kept, with the reason. Symbolic links are not followed, nothing outside
  <folder> is touched, and a file is checked again right before it is deleted. Each deleted
  file is recorded in freed.log in the config folder. \`coffer-photos restore\` gets them back.

  --album NAME       the album (default: the folder's name, as for backup)
  --yes              delete the files listed as freeable (without it, nothing is deleted)
  --download         also download and decrypt every blob here before deleting its file
  --concurrency N    files checked at once (1-64, default 4)
  --json             one JSON object per line on stdout: file (one per file), freed, summary

  Exit status 0 when the run went through (files kept because they are not backed up, changed,
  or not checked yet included); 1 when a file is kept because something is wrong with its
  backup (not in the album, not durable, a blob corrupt, a receipt missing or invalid) or a
  file could not be deleted.`,
  options: { album: { type: 'string' }, yes: { type: 'boolean' }, download: { type: 'boolean' }, concurrency: { type: 'string' } },
  async run({ positionals, values, out, signal, home, resolvePath }) {
    const [folder, ...extra] = positionals
    if (folder === undefined || extra.length > 0) throw new UsageError('free-up takes one folder')
    const root = resolvePath(folder)
    if (!(await stat(root).catch(() => null))?.isDirectory()) throw new UsageError(`${folder} is not a folder`)
    const concurrency = countOption(values.concurrency, 'concurrency', 4)
    const act = values.yes === true
    const account = await openAccount(home, commandClientOptions(out, signal))
    const library = libraryOf(account)
    const name = typeof values.album === 'string' ? values.album : path.basename(root)
    const album = await findAlbum(library, name)
    if (album === null) throw new UsageError(`there is no album "${albumName(name)}" (\`coffer-photos albums\` lists them; name it with --album)`)
    // An album in doubt frees nothing: its history is checked before any file is looked at (AlbumTamperedError exits EXIT.untrusted).
    await checkHistory(library, album)
    const state = openSyncState(path.join(account.home, 'state.sqlite'))
    try {
      out.say(
        `checking ${root} against album "${album.name}" (every blob not checked in the last day is re-read by the server, or a random sample of them: this can take a while)`,
      )
      const plan = await planFreeUp({ library, albumId: album.albumId, folder: root, state, concurrency, signal, download: values.download === true })
      if (signal.aborted) return EXIT.interrupted
      const freeable = plan.files.filter((f) => f.reason === null)
      const kept = plan.files.filter((f) => f.reason !== null)
      const fileEvent = (file: FreeUpFile, reason: KeepReason | null, details: readonly string[]): void =>
        out.event('file', {
          path: file.path,
          size: file.size,
          asset_id: file.assetId,
          freeable: reason === null,
          checked_by: reason === null ? file.checkedBy : null,
          reason,
          reason_text: reason === null ? null : KEEP_TEXT[reason],
          details,
        })
      for (const file of plan.files) fileEvent(file, file.reason, file.details)
      for (const file of kept) {
        out.say(`kept  ${file.path}: ${KEEP_TEXT[file.reason!]}`)
        for (const detail of file.details) out.say(`        ${detail}`)
      }
      const freeableBytes = freeable.reduce((sum, f) => sum + f.size, 0)
      const onSample = freeable.filter((f) => f.checkedBy === 'sample').length
      const sampleLine = onSample > 0 ? ` (${onSample} of them on the random sample checked for them)` : ''
      const failing = kept.filter((f) => FAILING.has(f.reason!)).length
      const counts = Object.fromEntries([...new Set(kept.map((f) => f.reason!))].map((reason) => [reason, kept.filter((f) => f.reason === reason).length]))
      const keptLine =
        kept.length === 0
          ? ''
          : `; ${plural(kept.length, 'file')} kept (${Object.entries(counts)
              .map(([reason, count]) => `${count} ${KEEP_TEXT[reason as KeepReason]}`)
              .join(', ')})`
      if (!act) {
        for (const file of freeable) out.say(`free  ${file.path} (${bytesText(file.size)})`)
        out.event('summary', {
          dry_run: true,
          files: plan.files.length,
          freeable: freeable.length,
          freeable_bytes: freeableBytes,
          freeable_on_sample: onSample,
          freed: 0,
          freed_bytes: 0,
          kept: kept.length,
          kept_by_reason: counts,
        })
        out.say(`dry run: ${plural(freeable.length, 'file')} (${bytesText(freeableBytes)}) can be freed from ${plan.root}${sampleLine}${keptLine}`)
        if (freeable.length > 0) out.say('run again with --yes to delete them')
        return failing > 0 ? EXIT.failed : EXIT.ok
      }

      let freed = 0
      let freedBytes = 0
      let failed = 0
      let changed = 0
      const log = freeable.length > 0 ? await openFreedLog(path.join(account.home, FREED_LOG)) : null
      try {
        for (const file of freeable) {
          if (signal.aborted) break
          const outcome = await freeFile(plan, file)
          if (outcome.freed) {
            await log!.append({
              time: new Date().toISOString(),
              album: album.name,
              album_id: album.albumId,
              folder: plan.root,
              path: file.path,
              size: file.size,
              content_hash: file.contentHash,
              asset_id: file.assetId,
            })
            freed++
            freedBytes += file.size
            out.event('freed', { path: file.path, size: file.size, asset_id: file.assetId })
            out.say(`freed ${file.path} (${bytesText(file.size)})`)
          } else {
            if (outcome.reason === 'failed') failed++
            else changed++
            out.event('file', {
              path: file.path,
              size: file.size,
              asset_id: file.assetId,
              freeable: false,
              reason: outcome.reason === 'failed' ? 'delete_failed' : 'changed',
              reason_text: outcome.detail,
              details: [outcome.detail],
            })
            if (outcome.reason === 'failed') out.warn(`coffer-photos: could not delete ${file.path}: ${outcome.detail}`)
            else out.say(`kept  ${file.path}: ${outcome.detail}`)
          }
        }
      } finally {
        await log?.close()
      }
      out.event('summary', {
        dry_run: false,
        files: plan.files.length,
        freeable: freeable.length,
        freeable_bytes: freeableBytes,
        freeable_on_sample: onSample,
        freed,
        freed_bytes: freedBytes,
        kept: kept.length + changed + failed,
        kept_by_reason: counts,
        failed,
        stopped: signal.aborted,
      })
      out.say(
        `${signal.aborted ? 'stopped: ' : ''}freed ${plural(freed, 'file')} (${bytesText(freedBytes)}) from ${plan.root}${keptLine}${changed > 0 ? `; ${changed} changed during the run, kept` : ''}${failed > 0 ? `; ${failed} could not be deleted` : ''}`,
      )
      if (freed > 0) out.say(`recorded in ${path.join(account.home, FREED_LOG)}`)
      if (signal.aborted) return EXIT.interrupted
      return failing > 0 || failed > 0 ? EXIT.failed : EXIT.ok
    } finally {
      state.close()
    }
  },
}
