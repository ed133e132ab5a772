// `coffer-photos import folder <folder>`: a backup of a folder (the same walk and sync engine as
// `backup`, so resumable, with the same outcomes) where each photo's XMP sidecar (`IMG_1.jpg.xmp`,
// `IMG_1.xmp`) brings its date taken, place and caption, and the favourite marks of Apple's
// privacy export of iCloud Photos (`Photo Details.csv`) come with its photos (decision 0071, "The
// folder import"; docs/photos.md, "Importing a folder with sidecars"). The rules are
// src/client/folder-import.ts's and src/client/xmp.ts's; this file lists the folders, reads the
// sidecars as each photo is stored, and reports.
//
// The walker (node/walk.ts) streams the folder depth first and skips what is not a photo or a
// video, sidecars among them; so each folder's names are listed here once when the walk enters
// it, and let go when the walk has left it (memory: the folders on the current path). A sidecar is
// read only for a photo that is sent: a rerun reads nothing it stored before.
import { opendir, readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { uploadFraction } from '../../client/files.ts'
import { favouritesOf, folderFacts, isPhotoDetailsName, parsePhotoDetails, PHOTO_DETAILS_MAX_LENGTH, PhotoDetailsError } from '../../client/folder-import.ts'
import { describeMedia } from '../../client/node/media.ts'
import { inMemoryMaxFor } from '../../client/node/files.ts'
import { candidateOf, walkMedia, type SkippedFile, type UnreadableFolder, type WalkedFile } from '../../client/node/walk.ts'
import { albumView, backupAll, type Candidate } from '../../client/sync.ts'
import { parseXmpSidecar, XMP_MAX_LENGTH, xmpSidecarFor, XmpError, type XmpFacts } from '../../client/xmp.ts'
import { bytesText } from '../progress.ts'
import { commandClientOptions, openAccount } from './account.ts'
import { EXIT, UsageError, type ExitCode, type Invocation } from './command.ts'
import { openBackupTarget, countOption } from './library.ts'
import { verbosityOf } from './output.ts'
import { transferProgress } from './transfer-progress.ts'
import { reportFileEvent, reportRetry } from './file-events.ts'

/** A folder of the walk, as listed when the walk entered it. */
interface Folder {
  /** Relative to the root, "/" between names; "" for the root. */
  readonly path: string
  /** Its files' names (hidden ones left out, as the walker leaves them). */
  readonly names: ReadonlySet<string>
  /** Its XMP sidecars' names, and those a photo took. */
  readonly sidecars: readonly string[]
  readonly claimed: Set<string>
  /** Its Photo Details files' names (Apple's privacy export). */
  readonly details: readonly string[]
  /** The names its Photo Details mark as favourites, read when a photo of the folder is first stored. */
  favourites?: Promise<ReadonlySet<string>>
}

const isXmp = (name: string): boolean => /\.xmp$/i.test(name)
const folderOf = (relative: string): string => relative.slice(0, Math.max(relative.lastIndexOf('/'), 0))
const join = (folder: string, name: string): string => (folder === '' ? name : `${folder}/${name}`)
/** Whether `folder` is `other` or holds it (relative paths, "" the root). */
const holds = (folder: string, other: string): boolean => folder === '' || other === folder || other.startsWith(`${folder}/`)

/** What happened to a photo's sidecar, for its `file` event and the summary. */
interface SidecarState {
  /** The sidecar's path in the folder, or null when the photo has none. */
  readonly sidecar: string | null
  /** Why it could not be read (it was not used). */
  error?: string
  /** Apple's Photo Details mark it a favourite. */
  favourite?: boolean
}

/** The facts of one sidecar, or why it is not read: at most XMP_MAX_LENGTH bytes, parsed by xmp.ts. */
async function readXmp(file: string): Promise<{ readonly facts: XmpFacts } | { readonly error: string }> {
  try {
    const info = await stat(file)
    if (info.size > XMP_MAX_LENGTH) return { error: `larger than ${XMP_MAX_LENGTH} bytes, not a sidecar` }
    return { facts: parseXmpSidecar(await readFile(file)) }
  } catch (error) {
    if (error instanceof XmpError) return { error: error.message.replace(/^sidecar: /, '') }
    if ((error as NodeJS.ErrnoException).code !== undefined) return { error: (error as Error).message }
    throw error
  }
}

export async function importFolder(invocation: Invocation, given: readonly string[]): Promise<ExitCode> {
  const { values, out, signal, home, resolvePath, ffmpeg, zone } = invocation
  if (given.length !== 1) throw new UsageError('import folder takes one folder')
  const root = resolvePath(given[0]!)
  if (!(await stat(root).catch(() => null))?.isDirectory()) throw new UsageError(`${given[0]} is not a folder`)
  const concurrency = countOption(values.concurrency, 'concurrency', 4)
  const location = values['no-location'] !== true
  const verbosity = verbosityOf(values)
  const albumName = typeof values.album === 'string' ? values.album : path.basename(root)
  const inMemoryMax = inMemoryMaxFor(concurrency)

  // A first walk counts, for the progress (names and sizes only), as backup's does.
  const totals = { files: 0, bytes: 0 }
  for await (const file of walkMedia(root, '', { onUnreadable: () => {} })) {
    totals.files++
    totals.bytes += file.size
  }

  const account = await openAccount(home, commandClientOptions(out, signal))
  const { album, target, state } = await openBackupTarget(account, albumName)
  if (verbosity !== 'quiet')
    out.say(`importing ${totals.files} file${totals.files === 1 ? '' : 's'} (${bytesText(totals.bytes)}) from ${root} into album "${album.name}"`)

  const unreadable: UnreadableFolder[] = []
  const skipped: SkippedFile[] = []
  const unmatched: string[] = []
  const detailsUnread: { path: string; error: string }[] = []
  let detailsFiles = 0
  const sidecars = new Map<string, SidecarState>()
  const counts = { withSidecar: 0, withoutSidecar: 0, unreadableSidecars: 0, favourites: 0 }

  // The folders on the walk's current path, by path; one the walk has left names its sidecars no photo took.
  const open = new Map<string, Folder>()
  const leave = (folder: Folder) => {
    open.delete(folder.path)
    for (const name of folder.sidecars) if (!folder.claimed.has(name)) unmatched.push(join(folder.path, name))
  }
  const enter = async (relative: string): Promise<Folder> => {
    for (const folder of open.values()) if (!holds(folder.path, relative)) leave(folder)
    const known = open.get(relative)
    if (known !== undefined) return known
    const names = new Set<string>()
    try {
      for await (const entry of await opendir(path.join(root, ...relative.split('/')))) if (!entry.name.startsWith('.') && entry.isFile()) names.add(entry.name)
    } catch {
      // Listed by the walk a moment ago; gone since: its photos are not read either.
    }
    const details = [...names].filter(isPhotoDetailsName).sort()
    detailsFiles += details.length
    const folder: Folder = { path: relative, names, sidecars: [...names].filter(isXmp).sort(), claimed: new Set(), details }
    open.set(relative, folder)
    return folder
  }
  const favouritesIn = (folder: Folder): Promise<ReadonlySet<string>> =>
    (folder.favourites ??= (async () => {
      const read = []
      for (const name of folder.details) {
        const file = path.join(root, ...join(folder.path, name).split('/'))
        try {
          if ((await stat(file)).size > PHOTO_DETAILS_MAX_LENGTH) throw new PhotoDetailsError('too-large', `larger than ${PHOTO_DETAILS_MAX_LENGTH} bytes`)
          read.push(parsePhotoDetails(await readFile(file, 'utf8')))
        } catch (error) {
          if (!(error instanceof PhotoDetailsError) && (error as NodeJS.ErrnoException).code === undefined) throw error
          detailsUnread.push({ path: join(folder.path, name), error: (error as Error).message })
          out.warn(`coffer-photos: ${join(folder.path, name)}: not read: ${(error as Error).message}`)
        }
      }
      return favouritesOf(read)
    })())

  /** The walk's photos as the sync engine's candidates, each describing itself with its sidecar; what the walk leaves out is noted. */
  const candidates = async function* (): AsyncGenerator<Candidate> {
    const passed: SkippedFile[] = [] // told by the walk between two photos: taken in order, so that folders are entered and left in the walk's order
    const take = async () => {
      for (const file of passed.splice(0)) {
        const name = file.path.slice(file.path.lastIndexOf('/') + 1)
        if (isXmp(name) || isPhotoDetailsName(name)) await enter(folderOf(file.path))
        else skipped.push(file)
      }
    }
    for await (const walked of walkMedia(root, '', { onUnreadable: (folder) => unreadable.push(folder), onSkipped: (file) => passed.push(file) })) {
      await take()
      const folder = await enter(folderOf(walked.path))
      const name = walked.path.slice(walked.path.lastIndexOf('/') + 1)
      const sidecar = xmpSidecarFor(name, folder.names)
      if (sidecar !== null) folder.claimed.add(sidecar)
      const sidecarPath = sidecar === null ? null : join(folder.path, sidecar)
      const status: SidecarState = { sidecar: sidecarPath }
      sidecars.set(walked.path, status)
      yield photoCandidate(walked, folder, name, status)
    }
    await take()
    for (const folder of [...open.values()]) leave(folder)
  }
  const photoCandidate = (walked: WalkedFile, folder: Folder, name: string, status: SidecarState): Candidate => {
    let reading: Promise<XmpFacts | null> | undefined
    // Once per photo: a retry describes it again from the same reading.
    const sidecarFacts = (): Promise<XmpFacts | null> =>
      (reading ??= (async () => {
        if (status.sidecar === null) return null
        const read = await readXmp(path.join(root, ...status.sidecar.split('/')))
        if ('facts' in read) return read.facts
        status.error = read.error
        counts.unreadableSidecars++
        out.warn(`coffer-photos: ${status.sidecar}: sidecar not read: ${read.error}; ${walked.path} is stored with its own dates`)
        return null
      })())
    return candidateOf(walked, {
      inMemoryMax,
      describe: async (input, type) => {
        const media = await describeMedia(input, type, { location, ffmpeg, zone })
        const sidecar = await sidecarFacts()
        const favourite = folder.details.length > 0 && (await favouritesIn(folder)).has(name.normalize('NFC'))
        if (favourite) status.favourite = true
        return folderFacts(media, { sidecar, favourite }, { location, name: walked.path })
      },
    })
  }

  const progress = transferProgress(out, totals, { verbosity, skippedWord: 'already stored' })
  const started = Date.now()
  let summary: Awaited<ReturnType<typeof backupAll>>
  try {
    summary = await backupAll(
      {
        target,
        state,
        view: albumView(album.albumId),
        concurrency,
        signal,
        totals,
        onEvent: (event) => {
          if (event.type === 'start') {
            out.event('start', { album: album.name, album_id: album.albumId, files: event.files, bytes: event.bytes, aborted_uploads: event.abortedUploads })
          } else if (event.type === 'file') {
            const status = sidecars.get(event.path) ?? { sidecar: null }
            sidecars.delete(event.path)
            counts[status.sidecar === null ? 'withoutSidecar' : 'withSidecar']++
            const sent = event.outcome === 'stored' || event.outcome === 'replaced'
            if (sent && status.favourite === true) counts.favourites++
            reportFileEvent(out, progress, verbosity, event, {
              skipped: !sent && event.outcome !== 'failed',
              note: status.sidecar === null ? '' : `  with ${status.sidecar}${status.error === undefined ? '' : ' (not read)'}`,
              fields: { sidecar: status.sidecar, ...(status.error === undefined ? {} : { sidecar_error: status.error }) },
            })
          } else reportRetry(out, event)
        },
        onProgress: (name, upload) => progress.moving(name, uploadFraction(upload) * upload.size),
      },
      candidates(),
    )
  } finally {
    progress.stop()
    state.close()
  }

  const seconds = (Date.now() - started) / 1000
  const { sentBytes, resumedBytes, ...outcomes } = summary
  const alreadyStored = summary.present + summary.unchanged + summary.kept
  out.event('summary', {
    ...outcomes,
    unreadable,
    skipped,
    sent_bytes: sentBytes,
    resumed_bytes: resumedBytes,
    with_sidecar: counts.withSidecar,
    without_sidecar: counts.withoutSidecar,
    sidecar_unreadable: counts.unreadableSidecars,
    unmatched,
    photo_details: { files: detailsFiles, favourites: counts.favourites, unreadable: detailsUnread },
    seconds,
  })
  out.say(
    `${summary.stopped ? 'stopped: ' : ''}${summary.files} of ${totals.files} file${totals.files === 1 ? '' : 's'} in ${seconds.toFixed(1)} s: ` +
      `${summary.stored} imported (${bytesText(sentBytes)} sent${summary.deduplicated > 0 ? `; ${summary.deduplicated} already in another album, their originals not sent again` : ''}), ` +
      `${summary.replaced > 0 ? `${summary.replaced} changed (stored as new versions), ` : ''}${alreadyStored} already stored, ` +
      `${summary.conflict > 0 ? `${summary.conflict} in conflict (not sent), ` : ''}` +
      `${summary.deleted > 0 ? `${summary.deleted} deleted from the album (not stored again), ` : ''}${summary.failed} failed`,
  )
  out.say(
    `sidecars: ${counts.withSidecar} with an XMP sidecar, ${counts.withoutSidecar} without${counts.unreadableSidecars > 0 ? `, ${counts.unreadableSidecars} unreadable` : ''}; ` +
      `${unmatched.length} XMP file${unmatched.length === 1 ? '' : 's'} no photo took` +
      (detailsFiles > 0
        ? `; Apple's Photo Details: ${detailsFiles} file${detailsFiles === 1 ? '' : 's'}, ${counts.favourites} favourite${counts.favourites === 1 ? '' : 's'} stored`
        : ''),
  )
  if (verbosity === 'verbose') for (const sidecar of unmatched) out.say(`no photo took: ${sidecar}`)
  for (const failure of summary.failures) out.warn(`failed: ${failure.path}: ${failure.error}`)
  for (const conflict of summary.conflicts) out.warn(`conflict: ${conflict.path}: ${conflict.reason}`)
  for (const folder of unreadable) out.warn(`not imported: ${folder.path}/: the folder cannot be read: ${folder.error}`)
  for (const file of skipped) out.warn(`not imported: ${file.path}: ${file.reason}`)
  if (summary.stopped || signal?.aborted === true) {
    out.warn('coffer-photos: stopped; run the same command again to continue')
    return EXIT.interrupted
  }
  return summary.failed > 0 || summary.conflict > 0 || unreadable.length > 0 ? EXIT.failed : EXIT.ok
}
