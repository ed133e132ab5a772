// `coffer-photos import takeout <zip files or folder>...`: a Google Takeout export brought in as
// it is (decision 0071). Every archive's entries are listed first (a sidecar may be in another
// archive than its photo), matched with their sidecars and grouped (one photo, however many of
// its folders hold a copy); each photo is then stored once, with the date, place, caption and
// favourite mark its sidecar gives, in the library's album (its year folder's) or its first
// album, and copied into its other albums without being sent again (organise.ts copyToAlbum).
// The same engine as `backup` (sync.ts), so a rerun after Ctrl-C or a kill sends only what is
// not stored yet.
import path from 'node:path'
import { assetIdFor } from '../../client/format/ids.ts'
import { uploadFraction } from '../../client/files.ts'
import { exportCandidate, openExport, openStaging } from '../../client/node/export-files.ts'
import { describeMedia } from '../../client/node/media.ts'
import { inMemoryMaxFor } from '../../client/node/files.ts'
import { openSyncState } from '../../client/node/state.ts'
import { copyToAlbum } from '../../client/organise.ts'
import { liveEntriesOf } from '../../client/verify.ts'
import type { Feed } from '../../sdk/client.ts'
import { albumView, backupAll, type AlbumView, type BackupSummary, type Candidate } from '../../client/sync.ts'
import { planTakeout, readSidecar, SKIPPED_TRASHED, storedName, TAKEOUT_LIBRARY_ALBUM, takeoutFacts, type TakeoutPhoto } from '../../client/takeout-import.ts'
import { fromHex } from '../../sdk/bytes.ts'
import { bytesText } from '../progress.ts'
import { commandClientOptions, openAccount } from './account.ts'
import { importFolder } from './import-folder.ts'
import { EXIT, UsageError, type Command } from './command.ts'
import { backupTargetOf, countOption } from './library.ts'
import { VERBOSITY_OPTIONS, verbosityOf } from './output.ts'
import { transferProgress } from './transfer-progress.ts'
import { reportFileEvent, reportRetry } from './file-events.ts'

/** How a photo met its sidecar, for the report. */
type SidecarOutcome = 'own' | 'edited' | 'live' | 'none' | 'unreadable'

export const importCommand: Command = {
  usage: `usage: coffer-photos import takeout <zip file or folder>... [--album NAME] [--concurrency N]
                          [--no-location] [--quiet | --verbose] [--json]
       coffer-photos import folder <folder> [--album NAME] [--concurrency N]
                          [--no-location] [--quiet | --verbose] [--json]

  Brings in a Google Takeout export of Google Photos: give every zip archive of the export (or
  the folders holding them), or the one folder you unpacked it to. The archives are read as they
  are, nothing is unpacked. Each photo and video is matched with its JSON sidecar (whatever
  Takeout did to its name) and stored with the date taken, the place, the description and the
  favourite mark Google Photos had, encrypted like the rest. Photos of the year folders ("Photos
  from 2019") go to one album (--album); each Google Photos album becomes an album of its own
  name, and a photo in several albums is stored once and added to each without being sent again.
  Photos in Google Photos' trash are left out. Ctrl-C stops after the photos in flight; run the
  same command again to continue: nothing stored is sent again.

  import folder backs up <folder> and its subfolders into one album, as backup does, with what
  each photo's XMP sidecar says (IMG_1.jpg.xmp, else IMG_1.xmp: darktable, digiKam, Lightroom,
  Immich, Apple Photos' "Export IPTC as XMP"): the date taken (it wins over the file's own), the
  place and the description; and the favourites of Apple's iCloud Photos export (Photo
  Details.csv). Resumable the same way.

  --album NAME       the album for the photos of the year folders; default: "${TAKEOUT_LIBRARY_ALBUM}"
                     (import folder: the album for all; default: the folder's name)
  --concurrency N    photos in flight at once (1-64, default 4)
  --no-location      leave out where the photos were taken (kept by default: the export had it)
  -q, --quiet        print only the summary and what went wrong (no progress)
  -v, --verbose      also print one line per photo, and the JSON or XMP files no photo claims
  --json             one JSON object per line on stdout: plan, file (one per photo), copy (one
                     per album a photo is added to), summary; import folder: start, file (with
                     its sidecar), summary`,
  options: {
    album: { type: 'string' },
    concurrency: { type: 'string' },
    'no-location': { type: 'boolean' },
    ...VERBOSITY_OPTIONS,
  },
  async run(invocation) {
    const { positionals, values, out, signal, home, resolvePath, ffmpeg, zone } = invocation
    const [kind, ...given] = positionals
    if (kind === 'folder') return importFolder(invocation, given)
    if (kind !== 'takeout')
      throw new UsageError(
        'import takes the kind of export first: `coffer-photos import takeout <zip files or folder>` or `coffer-photos import folder <folder>`',
      )
    if (given.length === 0) throw new UsageError('import takeout takes the zip archives of the export, or the folder it was unpacked to')
    const concurrency = countOption(values.concurrency, 'concurrency', 4)
    const location = values['no-location'] !== true
    const verbosity = verbosityOf(values)
    const libraryAlbum = typeof values.album === 'string' ? values.album : TAKEOUT_LIBRARY_ALBUM
    const opened = await openExport(given.map(resolvePath))
    try {
      const plan = await planTakeout(opened.files)
      const homeOf = (photo: TakeoutPhoto): string => (photo.inLibrary ? libraryAlbum : photo.albums[0]!)
      const albums = [...new Set([...plan.photos.filter((photo) => photo.inLibrary).map(() => libraryAlbum), ...plan.albums])]
      const totals = { files: plan.photos.length, bytes: plan.photos.reduce((sum, photo) => sum + photo.file.size, 0) }
      out.event('plan', {
        archives: opened.archives,
        photos: totals.files,
        bytes: totals.bytes,
        albums,
        skipped: plan.skipped.length,
        unmatched: plan.unmatched.length,
      })
      if (verbosity !== 'quiet')
        out.say(
          `importing ${totals.files} file${totals.files === 1 ? '' : 's'} (${bytesText(totals.bytes)}) from ${opened.archives.length === 0 ? 'the folder' : `${opened.archives.length} archive${opened.archives.length === 1 ? '' : 's'}`}` +
            ` into ${albums.length} album${albums.length === 1 ? '' : 's'}`,
        )
      const account = await openAccount(home, commandClientOptions(out, signal))
      const state = openSyncState(path.join(account.home, 'state.sqlite'))
      const staging = await openStaging(path.join(account.home, 'import-staging'))
      const progress = transferProgress(out, totals, { verbosity, skippedWord: 'already stored' })
      const sidecars = new Map<TakeoutPhoto, SidecarOutcome>()
      const trashed = new Set<string>()
      const summaries: BackupSummary[] = []
      const copies = { added: 0, present: 0, failed: 0 }
      const targets = new Map<string, Awaited<ReturnType<typeof backupTargetOf>>>()
      const started = Date.now()
      let stopped = false
      try {
        const targetOf = async (name: string) => {
          let target = targets.get(name)
          if (target === undefined) {
            target = await backupTargetOf(account, name, state)
            targets.set(name, target)
          }
          return target
        }
        for (const albumName of albums) {
          if (signal?.aborted === true) break
          const photos = plan.photos.filter((photo) => homeOf(photo) === albumName)
          if (photos.length === 0) continue
          const { target } = await targetOf(albumName)
          const byName = new Map(photos.map((photo) => [storedName(photo), photo]))
          const candidates = async function* (): AsyncGenerator<Candidate> {
            for (const photo of photos) {
              const reading = await readSidecar(photo)
              const sidecar = reading !== null && 'sidecar' in reading ? reading.sidecar : null
              sidecars.set(photo, reading === null ? 'none' : sidecar === null ? 'unreadable' : photo.via!)
              if (reading !== null && 'error' in reading) out.warn(`coffer-photos: sidecar not read: ${reading.error}`)
              if (sidecar?.trashed === true) {
                trashed.add(photo.file.path)
                progress.advance(photo.file.size, photo.file.path, { skipped: true })
                continue
              }
              yield exportCandidate(photo.file, storedName(photo), {
                describe: async (input, type) => takeoutFacts(await describeMedia(input, type, { location, ffmpeg, zone }), sidecar, { location, zone }),
                inMemoryMax: inMemoryMaxFor(concurrency),
                staging,
              })
            }
          }
          const summary = await backupAll(
            {
              target,
              state,
              view: albumView(target.albumId),
              concurrency,
              signal,
              onEvent: (event) => {
                if (event.type === 'file') {
                  const photo = byName.get(event.path)!
                  staging
                    .release(photo.file)
                    .catch((error: unknown) =>
                      out.warn(`coffer-photos: the staged copy of ${photo.file.path} stays until the next import: ${(error as Error).message}`),
                    )
                  reportFileEvent(out, progress, verbosity, event, {
                    skipped: event.outcome !== 'stored' && event.outcome !== 'replaced' && event.outcome !== 'failed',
                    shown: `${albumName}/${event.path}`,
                    fields: { path: photo.file.path, album: albumName, name: event.path, sidecar: sidecars.get(photo) ?? 'none' },
                    failedName: photo.file.path,
                  })
                } else if (event.type === 'retry') reportRetry(out, event)
              },
              onProgress: (name, upload) => progress.moving(name, uploadFraction(upload) * upload.size),
            },
            candidates(),
          )
          summaries.push(summary)
          if (summary.stopped) {
            stopped = true
            break
          }
        }
        // Each photo into its other albums: named by its content, which the local index kept when it was stored.
        const views = new Map<string, AlbumView>()
        const viewOf = async (target: { readonly albumId: string; readonly client: Parameters<AlbumView['catchUp']>[0] }) => {
          let view = views.get(target.albumId)
          if (view === undefined) {
            view = albumView(target.albumId)
            await view.catchUp(target.client)
            views.set(target.albumId, view)
          }
          return view
        }
        if (!stopped) {
          const toCopy: { photo: TakeoutPhoto; from: string; assetId: string; content: Uint8Array; into: string[] }[] = []
          for (const photo of plan.photos) {
            const into = photo.albums.filter((album) => album !== homeOf(photo))
            const home = targets.get(homeOf(photo))
            if (into.length === 0 || home === undefined || trashed.has(photo.file.path)) continue
            const indexed = await state.lastBackedUp(home.target.albumId, storedName(photo))
            if (indexed === null) continue // not stored (it failed): said above
            toCopy.push({ photo, from: home.target.albumId, assetId: indexed.assetId, content: fromHex(indexed.contentHash), into })
          }
          // Each source's feed entry read once per album, in one pass over its feed (not a pass per copy).
          const sources = new Map<string, Feed['entries'][number]>()
          for (const from of new Set(toCopy.map((copy) => copy.from))) {
            const client = [...targets.values()].find((opened) => opened.target.albumId === from)!.target.client
            const wanted = toCopy.filter((copy) => copy.from === from).map((copy) => copy.assetId)
            for await (const entry of liveEntriesOf(client, from, wanted)) sources.set(entry.asset_id, entry)
          }
          for (const { photo, from, assetId, content, into: albumNames } of toCopy) {
            if (signal?.aborted === true) break
            for (const albumName of albumNames) {
              const to = await targetOf(albumName)
              // The album's protocol version goes with the write, as `cp` gives it.
              const into = { ...to.library, client: to.target.client, protocolVersion: to.album.protocolVersion }
              const entry = sources.get(assetId)
              const status = (await viewOf(to.target)).live.has(await assetIdFor(account.masterKey, to.target.albumId, content))
                ? 'present'
                : await copyToAlbum(into, from, assetId, to.target.albumId, { contentSha256: content, ...(entry === undefined ? {} : { entry }) }).then(
                    (copied) => copied.status,
                    (error: unknown) => {
                      out.warn(`coffer-photos: ${photo.file.path}: not added to album "${albumName}": ${(error as Error).message}`)
                      return 'failed' as const
                    },
                  )
              copies[status === 'stored' ? 'added' : status]++
              out.event('copy', { path: photo.file.path, album: albumName, status })
              if (verbosity === 'verbose' && status !== 'failed')
                out.say(`${status === 'stored' ? 'added to' : 'already in'}  ${albumName}: ${storedName(photo)}`)
            }
          }
        }
      } finally {
        progress.stop()
        await staging.close()
        state.close()
      }
      const total = (key: 'stored' | 'present' | 'unchanged' | 'failed' | 'deleted' | 'files' | 'sentBytes') =>
        summaries.reduce((sum, summary) => sum + summary[key], 0)
      const sidecarCount = (outcome: SidecarOutcome) => [...sidecars.values()].filter((value) => value === outcome).length
      const skippedByReason = new Map<string, number>()
      for (const { reason } of plan.skipped) skippedByReason.set(reason, (skippedByReason.get(reason) ?? 0) + 1)
      if (trashed.size > 0) skippedByReason.set(SKIPPED_TRASHED, trashed.size)
      const seconds = (Date.now() - started) / 1000
      const matched = { own: sidecarCount('own'), edited: sidecarCount('edited'), live: sidecarCount('live') }
      out.event('summary', {
        photos: totals.files,
        imported: total('stored'),
        already_stored: total('present') + total('unchanged'),
        failed: total('failed'),
        deleted: total('deleted'),
        with_sidecar: matched,
        without_sidecar: sidecarCount('none'),
        sidecar_unreadable: sidecarCount('unreadable'),
        skipped: Object.fromEntries(skippedByReason),
        unmatched: plan.unmatched,
        albums,
        copies,
        sent_bytes: total('sentBytes'),
        stopped,
        seconds,
      })
      out.say(
        `${stopped ? 'stopped: ' : ''}${total('files')} of ${totals.files} file${totals.files === 1 ? '' : 's'} in ${seconds.toFixed(1)} s: ${total('stored')} imported (${bytesText(total('sentBytes'))} sent), ` +
          `${total('present') + total('unchanged')} already stored, ${total('failed')} failed${total('deleted') > 0 ? `, ${total('deleted')} deleted since (not stored again)` : ''}`,
      )
      out.say(
        `sidecars: ${matched.own + matched.edited + matched.live} matched (${matched.own} by name, ${matched.edited} an edited copy's original's, ${matched.live} a Live Photo's), ` +
          `${sidecarCount('none')} without one${sidecarCount('unreadable') > 0 ? `, ${sidecarCount('unreadable')} unreadable` : ''}; ${plan.unmatched.length} JSON files no photo claims`,
      )
      out.say(
        `albums: ${albums.length}${copies.added + copies.present + copies.failed > 0 ? `; ${copies.added} photos added to a further album, ${copies.present} there already${copies.failed > 0 ? `, ${copies.failed} failed` : ''}` : ''}`,
      )
      for (const [reason, count] of skippedByReason) out.say(`skipped: ${count} ${count === 1 ? 'file' : 'files'} ${reason}`)
      if (verbosity === 'verbose') for (const json of plan.unmatched) out.say(`no photo claims: ${json}`)
      if (stopped || signal?.aborted === true) {
        out.warn('coffer-photos: stopped; run the same command again to continue')
        return EXIT.interrupted
      }
      return total('failed') > 0 || copies.failed > 0 ? EXIT.failed : EXIT.ok
    } finally {
      await opened.close()
    }
  },
}
