// `coffer-photos verify [<album>] [--deep] [--against <folder>]`: the server's storage
// verification of every asset and every custody receipt checked here (src/client/verify.ts);
// with --against, a sample of the album's files (or all) decrypted and compared byte for byte
// with the local originals (src/client/compare.ts). Exit 1 when anything is not durable, not
// verified, or differs. What --deep found intact (re-hashed by the server, or downloaded and
// checked here) is remembered in the local state, and counts for free-up for a day.
import { stat } from 'node:fs/promises'
import path from 'node:path'
import { findAlbum, namedAlbums, planAlbum, type NamedAlbum } from '../../client/albums.ts'
import { compareWithLocal, type ComparedFile, type ComparisonOutcome } from '../../client/compare.ts'
import { albumName } from '../../client/format/ids.ts'
import { localFiles } from '../../client/node/compare.ts'
import { openSyncState } from '../../client/node/state.ts'
import { verifyAlbum, type AssetReport } from '../../client/verify.ts'
import { commandClientOptions, openAccount } from './account.ts'
import { EXIT, UsageError, type Command } from './command.ts'
import { AlbumTamperedError, TAMPERING } from '../../client/tampering.ts'
import { countOption, historyOf, libraryOf, namedAlbum } from './library.ts'
import { transferProgress, type TransferProgress } from './transfer-progress.ts'

/**
 * Files compared with --against unless told (decision 0033): a fixed number, not a share, so
 * that a run costs the same on any library; a random 20 catch a fault in 14% of the files with
 * a chance of 95%, and --all reads everything.
 */
const DEFAULT_SAMPLE = 20
const SAMPLE_MAX = 1_000_000

/** How a compared file that is not identical is shown; a match is not listed. */
const SHOWN: Partial<Record<ComparedFile['outcome'], (file: ComparedFile, where: string, folder: string) => string>> = {
  differs: (file, where) => `DIFFERS       ${where}: ${file.detail}`,
  failed: (file, where) => `NOT COMPARED  ${where}: ${file.detail}`,
  changed: (file, where) => `CHANGED HERE  ${where}: changed here since the backup, not compared (${file.detail})`,
  missing: (_, where, folder) => `MISSING HERE  ${where}: not in ${folder}`,
}

const plural = (count: number, word: string): string => `${count} ${word}${count === 1 ? '' : 's'}`

/** The outcomes of a pair compared byte for byte (the progress counts them). */
const COMPARED: ReadonlySet<ComparisonOutcome> = new Set(['match', 'differs', 'failed'])

/** Remembers the blobs a deep verification found intact, for free-up (src/client/node/free-up.ts). */
function rememberDeepChecks(home: string, reports: readonly AssetReport[], at: number): void {
  const state = openSyncState(path.join(home, 'state.sqlite'))
  try {
    for (const report of reports) state.rememberDeepCheck([...report.intact, ...report.checkedHere], at)
  } finally {
    state.close()
  }
}

export const verify: Command = {
  usage: `usage: coffer-photos verify [<album>] [--deep] [--against <folder> [--all | --sample N]] [--concurrency N] [--json]

  For every file of the album (of every album when none is named): asks the server whether
  each of its blobs is stored, indexed and retrievable, and checks each custody receipt here
  against the server's attestation keys (signature, chain links, and that it names a blob of
  the file with its hash and size). Exit status 1 when anything is not durable or not verified.

  --deep             also have the server re-hash the bytes, and download and decrypt every
                     blob here (reads everything: slow for a large album)
  --against <folder> also compare the album with the folder it was backed up from: its
                     files are paired by their path in the folder, and a random ${DEFAULT_SAMPLE} of
                     them (--sample N, --all) are downloaded, decrypted and compared byte for
                     byte with the local file. The album: the one named, else the folder's
                     name (as for backup). Listed: a file that differs (at which byte) or
                     could not be compared (exit 1); changed here since the backup (its size
                     or modification time is not the one backed up: not compared); missing
                     here. The folder's files not in the album are counted.
  --all              with --against, compare every file
  --sample N         with --against, compare N files picked at random (default ${DEFAULT_SAMPLE})
  --concurrency N    files checked at once (1-64, default 4)
  --json             one JSON object per line on stdout: start, asset (one per file), summary`,
  options: { deep: { type: 'boolean' }, concurrency: { type: 'string' }, against: { type: 'string' }, all: { type: 'boolean' }, sample: { type: 'string' } },
  async run({ positionals, values, out, signal, home, resolvePath }) {
    if (positionals.length > 1) throw new UsageError('verify takes at most one album name')
    const concurrency = countOption(values.concurrency, 'concurrency', 4)
    const all = values.all === true
    if (typeof values.against !== 'string' && (all || values.sample !== undefined)) throw new UsageError('--all and --sample go with --against <folder>')
    if (all && values.sample !== undefined) throw new UsageError('--all and --sample do not go together')
    const sample = all ? undefined : countOption(values.sample, 'sample', DEFAULT_SAMPLE, SAMPLE_MAX)
    const against = typeof values.against === 'string' ? resolvePath(values.against) : null
    if (against !== null && !(await stat(against).catch(() => null))?.isDirectory()) throw new UsageError(`${values.against} is not a folder`)
    const account = await openAccount(home, commandClientOptions(out, signal))
    const library = libraryOf(account)
    const folderAlbum = async (folder: string): Promise<NamedAlbum> => {
      const album = await findAlbum(library, path.basename(folder))
      if (album === null)
        throw new UsageError(
          `there is no album "${albumName(path.basename(folder))}" (\`coffer-photos albums\` lists them; name it: verify <album> --against <folder>)`,
        )
      return album
    }
    const albums =
      positionals.length === 1 ? [await namedAlbum(library, positionals[0])] : against !== null ? [await folderAlbum(against)] : await namedAlbums(library)
    const deep = values.deep === true
    out.event('start', { albums: albums.length, deep, against, sample: against === null ? null : (sample ?? null), all })
    let files = 0
    let bad = 0
    let blobs = 0
    let receiptsChecked = 0
    let deepPending = 0
    let compareFailed = 0
    let comparedFiles = 0
    let stopped = false
    const untrusted: AlbumTamperedError[] = []
    let historySeconds = 0
    for (const album of albums) {
      const label = album.name ?? album.albumId
      // The album's history first: a server that rewrote it is named, and its files are not vouched for.
      const checkStarted = performance.now()
      const history = await historyOf(library, album)
      const seconds = Math.round(performance.now() - checkStarted) / 1000
      historySeconds += seconds
      if (history instanceof AlbumTamperedError) {
        untrusted.push(history)
        out.event('history', { album: album.name, album_id: album.albumId, ok: false, kind: history.kind, seq: history.seq, detail: history.detail, seconds })
        out.say(`NOT TRUSTWORTHY  ${label}: ${TAMPERING[history.kind]} (${history.detail})`)
        continue
      }
      out.event('history', { album: album.name, album_id: album.albumId, ok: true, entries: history.count, seq: history.seq, seconds })
      // --deep downloads every file: its progress is drawn as it goes, against the album's files and bytes (from its feed).
      const deepProgress = deep ? transferProgress(out, await planAlbum(library, album.albumId)) : null
      const started = Date.now()
      let reports: AssetReport[]
      try {
        reports = await verifyAlbum(library, album.albumId, {
          deep,
          concurrency,
          ...(deepProgress === null
            ? {}
            : { onDownloaded: (file: { assetId: string; name: string }, bytes: number) => deepProgress.moving(file.assetId, bytes, file.name) }),
          onAsset: (report: AssetReport) => {
            if (!report.record) deepProgress?.advance(report.size ?? 0, report.name ?? `asset ${report.assetId}`, { path: report.assetId })
            out.event('asset', {
              album: album.name,
              asset_id: report.assetId,
              name: report.name,
              record: report.record,
              blobs: report.blobs,
              receipts: report.receipts,
              ok: report.problems.length === 0,
              problems: report.problems,
              deep_pending: report.deepPending,
            })
            for (const problem of report.problems)
              out.say(`NOT VERIFIED  ${label}/${report.record ? '(album record)' : (report.name ?? `asset ${report.assetId}`)}: ${problem}`)
          },
        })
      } finally {
        deepProgress?.stop() // also when it fails: the error's line then starts on a clean line
      }
      if (deep) rememberDeepChecks(account.home, reports, started)
      const failing = reports.filter((r) => r.problems.length > 0).length
      const receipts = reports.reduce((sum, r) => sum + r.receipts, 0)
      const photos = reports.filter((r) => !r.record)
      const recordOk = reports.some((r) => r.record && r.problems.length === 0)
      const pending = reports.reduce((sum, r) => sum + r.deepPending, 0)
      files += reports.length
      bad += failing
      blobs += reports.reduce((sum, r) => sum + r.blobs, 0)
      receiptsChecked += receipts
      deepPending += pending
      out.say(
        `${label}: ${photos.filter((r) => r.problems.length === 0).length} of ${photos.length} file${photos.length === 1 ? '' : 's'} verified${recordOk ? " (and the album's record)" : ''}` +
          `${deep ? ', deep' : ''}; ${receipts} receipts checked${failing > 0 ? `; ${failing} NOT verified` : ''}`,
      )
      if (pending > 0)
        out.say(
          `${label}: ${pending} blob${pending === 1 ? '' : 's'} not re-hashed by the server yet (its deep-check budget is spent); each was downloaded and checked here`,
        )
      if (against === null) continue

      const compareProgress: { bar: TransferProgress | null } = { bar: null }
      let compared: Awaited<ReturnType<typeof compareWithLocal>>
      try {
        compared = await compareWithLocal(library, album.albumId, reports, localFiles(against), {
          ...(sample === undefined ? {} : { sample }),
          concurrency,
          signal,
          onPicked: (files, bytes) => {
            compareProgress.bar = transferProgress(out, { files, bytes })
          },
          onCompared: (file, bytes) => compareProgress.bar?.moving(file.assetId, bytes, file.name),
          onFile: (file) => {
            if (COMPARED.has(file.outcome) && file.assetId !== null) compareProgress.bar?.advance(file.size, file.path, { path: file.assetId })
            out.event('file', {
              album: album.name,
              path: file.path,
              asset_id: file.assetId,
              outcome: file.outcome,
              size: file.size,
              ...(file.offset === undefined ? {} : { offset: file.offset }),
              ...(file.detail === undefined ? {} : { detail: file.detail }),
            })
            const shown = SHOWN[file.outcome]
            if (shown !== undefined) out.say(shown(file, `${label}/${file.path}`, against))
          },
        })
      } finally {
        compareProgress.bar?.stop()
      }
      out.event('comparison', {
        album: album.name,
        folder: against,
        sample: sample ?? null,
        album_files: compared.albumFiles,
        local_files: compared.localFiles,
        comparable: compared.comparable,
        compared: compared.compared,
        matched: compared.matched,
        differs: compared.differs,
        failed: compared.failed,
        changed: compared.changed,
        missing: compared.missing,
        not_in_album: compared.notInAlbum,
        bytes: compared.bytes,
        stopped: compared.stopped,
      })
      const sampled = compared.compared < compared.comparable && !compared.stopped ? ' (picked at random; --all compares every one)' : ''
      out.say(
        `${label} against ${against}: ${compared.compared} of ${plural(compared.comparable, 'file')} compared byte for byte${sampled}, ${compared.matched} identical` +
          `${compared.differs > 0 ? `, ${compared.differs} DIFFER` : ''}${compared.failed > 0 ? `, ${compared.failed} could not be compared` : ''}; ` +
          `${compared.changed} changed here since the backup, ${compared.missing} missing here, ${plural(compared.notInAlbum, 'file')} here not in the album`,
      )
      compareFailed += compared.differs + compared.failed
      comparedFiles += compared.compared
      stopped = compared.stopped
    }
    out.event('summary', {
      albums: albums.length,
      untrusted: untrusted.length,
      history_seconds: Math.round(historySeconds * 1000) / 1000,
      assets: files,
      failed: bad,
      deep,
      blobs,
      receipts: receiptsChecked,
      deep_pending: deepPending,
      ...(against === null ? {} : { compare_failed: compareFailed }),
    })
    if (bad > 0) out.warn(`coffer-photos: ${bad} of ${files} files not verified (listed above)`)
    if (compareFailed > 0)
      out.warn(`coffer-photos: ${compareFailed} of ${plural(comparedFiles, 'file')} compared not identical to the local original (listed above)`)
    if (stopped) {
      out.warn('coffer-photos: stopped before every file was compared')
      return EXIT.interrupted
    }
    if (untrusted.length > 0) {
      for (const error of untrusted) out.warn(`coffer-photos: the server is not trustworthy: ${error.message}`)
      out.warn('coffer-photos: nothing of these albums is freed until the server serves them as they were written')
      return EXIT.untrusted
    }
    return bad > 0 || compareFailed > 0 ? EXIT.failed : EXIT.ok
  },
}
