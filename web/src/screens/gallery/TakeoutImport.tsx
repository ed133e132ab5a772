// #/import: a Google Takeout export of Google Photos brought in from its zip files (issue 42,
// decision 0071; docs/web.md, "Importing from Google Takeout"). The person chooses every zip of
// the export; the screen lists them, reads them (their directories and each photo's sidecar, not
// the photos) and shows the plan: how many photos and videos, into which albums, what is left
// out. Imported, each photo's progress is the upload panel's, and the end is a report like
// coffer-photos': imported, already here, failed; matched with a sidecar or not; albums and
// copies; left out, and why. The import belongs to the page (lib/takeout-import.ts): the person
// may look at other screens meanwhile and come back to it.
import { useId, useMemo, useRef, useState, useSyncExternalStore, type FormEvent } from 'react'
import type { Library } from '#photos/albums.ts'
import type { CofferClient } from '#sdk/client.ts'
import { linkTo } from '../../app/router.ts'
import { ErrorLine, Heading, useAction } from '../../app/ui.tsx'
import { countText, numberText, sizeText } from '../../lib/format.ts'
import { SKIPPED_TRASHED, TAKEOUT_LIBRARY_ALBUM } from '#photos/takeout-import.ts'
import { libraryOf } from '../../lib/library.ts'
import type { SavedKeys } from '../../lib/store.ts'
import {
  currentTakeoutImport,
  forgetTakeoutImport,
  readTakeout,
  startTakeoutImport,
  summaryOf,
  type ReadingProgress,
  type SidecarOutcome,
  type TakeoutArchive,
  type TakeoutImport as RunningImport,
  type TakeoutReading,
  type TakeoutSummary,
} from '../../lib/takeout-import.ts'
import { sentenceFor } from '../../lib/errors.ts'
import { UploadPanel } from './UploadPanel.tsx'

export function TakeoutImport({ client, keys }: { client: CofferClient; keys: SavedKeys }) {
  const library = useMemo(() => libraryOf(client, keys), [client, keys])
  const [running, setRunning] = useState(currentTakeoutImport)
  return (
    <main className="takeout">
      <Heading>Import from Google Takeout</Heading>
      {running === null ? (
        <Planning library={library} onStarted={setRunning} />
      ) : (
        <Importing
          running={running}
          onAnother={() => {
            forgetTakeoutImport()
            setRunning(null)
          }}
        />
      )}
    </main>
  )
}

/** The zips as chosen: each by its name and size. */
function Archives({ archives }: { archives: readonly TakeoutArchive[] }) {
  return (
    <ul className="takeout-archives" aria-label="Zip files">
      {archives.map((archive, index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the list never changes while shown, and two zips may share a name
        <li key={index}>
          <span className="upload-name">{archive.name}</span> <span className="hint">{sizeText(archive.size)}</span>
        </li>
      ))}
    </ul>
  )
}

function readingText(progress: ReadingProgress | null): string {
  if (progress === null) return 'Opening the zip files…'
  if (progress.step === 'listing') return `Listing ${progress.archive}…`
  return `Reading the Google Photos details: ${numberText(progress.read)} of ${numberText(progress.total)}`
}

/** The files left out, by reason, as one sentence's parts: "10 not a photo or video (by its name)". */
const skippedParts = (skipped: ReadonlyMap<string, number>): string[] => [...skipped].map(([reason, count]) => `${numberText(count)} ${reason}`)

/** What the import will do, in lines. */
function Plan({ summary }: { summary: TakeoutSummary }) {
  const leftOut = [...summary.skipped.values()].reduce((sum, count) => sum + count, 0)
  return (
    <ul className="takeout-plan">
      <li>
        <strong>{countText(summary.photos, 'photo or video', 'photos and videos')}</strong> ({sizeText(summary.bytes)}) into{' '}
        {countText(summary.albums.length, 'album')}
      </li>
      <li>
        {numberText(summary.withSidecar)} with the date, place, description and favourite mark Google Photos had
        {summary.withoutSidecar > 0 && `; ${numberText(summary.withoutSidecar)} without (dated by their own EXIF)`}
        {summary.unreadableSidecars > 0 && `; ${numberText(summary.unreadableSidecars)} whose details could not be read (dated by their own EXIF)`}
      </li>
      {summary.trashed > 0 && <li>{numberText(summary.trashed)} in Google Photos' trash, left out</li>}
      {leftOut > 0 && (
        <li>
          {countText(leftOut, 'other file')} left out: {skippedParts(summary.skipped).join('; ')}
        </li>
      )}
      {summary.unmatched > 0 && (
        <li>{countText(summary.unmatched, 'JSON file')} matched no photo: if your export has more zip files, choose them all together</li>
      )}
    </ul>
  )
}

/** Choosing the zips, reading them, and the plan with its options, until the import starts. */
function Planning({ library, onStarted }: { library: Library; onStarted: (running: RunningImport) => void }) {
  const input = useRef<HTMLInputElement>(null)
  const [zips, setZips] = useState<readonly TakeoutArchive[] | null>(null)
  const [progress, setProgress] = useState<ReadingProgress | null>(null)
  const [reading, setReading] = useState<TakeoutReading | null>(null)
  const [libraryAlbum, setLibraryAlbum] = useState(TAKEOUT_LIBRARY_ALBUM)
  const [location, setLocation] = useState(true)
  const read = useAction()
  const albumId = useId()
  const locationHint = useId()

  const chosen = (list: File[]) => {
    setZips(list.map((zip) => ({ name: zip.name, size: zip.size })))
    setReading(null)
    setProgress(null)
    void read.run(async () => setReading(await readTakeout(list, setProgress)))
  }
  const choose = (
    <>
      <button type="button" className={zips === null ? '' : 'secondary'} disabled={read.busy} onClick={() => input.current?.click()}>
        {zips === null ? 'Choose the zip files' : 'Choose other zip files'}
      </button>
      <input
        ref={input}
        type="file"
        multiple
        accept=".zip,application/zip"
        className="hidden-input"
        aria-label="Zip files of the export"
        tabIndex={-1}
        onChange={(event) => {
          const list = [...(event.target.files ?? [])]
          event.target.value = ''
          if (list.length > 0) chosen(list)
        }}
      />
    </>
  )
  const start = (event: FormEvent) => {
    event.preventDefault()
    if (reading !== null) onStarted(startTakeoutImport(library, reading, { libraryAlbum: libraryAlbum.trim(), location }))
  }
  const summary = reading === null ? null : summaryOf(reading, libraryAlbum.trim() || TAKEOUT_LIBRARY_ALBUM)

  return (
    <>
      {zips === null && (
        <>
          <p>
            Bring your Google Photos library here. At takeout.google.com, export Google Photos, download every zip file of the export, then choose them all here
            at once.
          </p>
          <p>
            Each photo and video keeps the date, the place, the description and the favourite mark it had in Google Photos, and each of your Google Photos
            albums becomes an album here. The zip files are read where they are, a photo at a time, and nothing is unpacked; each photo is encrypted on this
            device before it is sent.
          </p>
          <div className="actions">{choose}</div>
        </>
      )}
      {zips !== null && <Archives archives={zips} />}
      {read.busy && (
        <p className="loading" role="status">
          {readingText(progress)}
        </p>
      )}
      <ErrorLine error={read.error} />
      {zips !== null && read.error !== null && <div className="actions">{choose}</div>}
      {summary !== null && (
        <form onSubmit={start}>
          <h2>What will be imported</h2>
          <Plan summary={summary} />
          {summary.albums.length > 0 && (
            <details className="takeout-albums">
              <summary>The {countText(summary.albums.length, 'album')}</summary>
              <ul>
                {summary.albums.map((name) => (
                  <li key={name}>{name}</li>
                ))}
              </ul>
            </details>
          )}
          {summary.photos === 0 ? (
            <p role="status">Nothing to import: these zip files hold no photos or videos of Google Photos. Choose the zip files of a Google Photos export.</p>
          ) : (
            <>
              <label htmlFor={albumId}>
                Album for your library
                <input id={albumId} required maxLength={200} value={libraryAlbum} onChange={(event) => setLibraryAlbum(event.target.value)} />
                <span className="hint">
                  The photos of your Google Photos library go here; each Google Photos album becomes an album of its own name. An album of the same name already
                  here is added to.
                </span>
              </label>
              <label className="check">
                <input type="checkbox" checked={location} aria-describedby={locationHint} onChange={(event) => setLocation(event.target.checked)} /> Keep where
                photos were taken
              </label>
              <p className="hint" id={locationHint}>
                The place Google Photos had for each photo, kept encrypted like the rest. Unchecked, no photo of this import gets a place.
              </p>
            </>
          )}
          <div className="actions">
            {summary.photos > 0 && <button type="submit">Import {countText(summary.photos, 'photo or video', 'photos and videos')}</button>}
            {choose}
          </div>
        </form>
      )}
    </>
  )
}

/** The import going (or done): the zips, the photos' progress, stop or go on, and the report. */
function Importing({ running, onAnother }: { running: RunningImport; onAnother: () => void }) {
  const subscribe = useMemo(() => running.subscribe.bind(running), [running])
  const items = useSyncExternalStore(subscribe, () => running.items)
  const progress = useSyncExternalStore(subscribe, () => running.progress)
  const { summary, options } = running
  const over = progress.state === 'stopped' || progress.state === 'done'
  return (
    <>
      <Archives archives={running.reading.archives} />
      <p>
        {countText(summary.photos, 'photo or video', 'photos and videos')} ({sizeText(summary.bytes)}) into {countText(summary.albums.length, 'album')}; places{' '}
        {options.location ? 'kept' : 'left out'}.
      </p>
      <p role="status" className={over ? '' : 'hint'}>
        {progress.state === 'importing'
          ? 'Keep this tab open: the photos are read from the zip files on this device. You can look at your photos meanwhile.'
          : progress.state === 'stopping'
            ? 'Stopping after the photos on their way…'
            : progress.state === 'stopped'
              ? 'Stopped. Go on from here, or choose the same zip files again later: nothing stored is sent again.'
              : 'Done: the photos are in Photos and in their albums.'}
      </p>
      {progress.state === 'importing' && (
        <div className="actions">
          <button type="button" className="secondary" onClick={() => running.stop()}>
            Stop
          </button>
        </div>
      )}
      {progress.state === 'stopped' && (
        <div className="actions">
          <button type="button" onClick={() => running.resume()}>
            Go on
          </button>
        </div>
      )}
      {over && (
        <>
          <Report running={running} />
          <div className="actions">
            <a href={linkTo('photos')}>See your photos</a>
            <a href={linkTo('albums')}>See your albums</a>
            <button type="button" className="secondary" onClick={onAnother}>
              Import other zip files
            </button>
          </div>
        </>
      )}
      <UploadPanel uploads={running} items={items} suspended={false} stopped={progress.state === 'stopped'} title="Photos and videos" busyHint={null} />
    </>
  )
}

/** The end of an import, as coffer-photos reports it. */
function Report({ running }: { running: RunningImport }) {
  const { progress, summary } = running
  const sidecars = running.reading.sidecars
  const matched = (via: SidecarOutcome) => sidecars.filter((outcome) => outcome === via).length
  // How the sidecars were matched, the ways none was left out: "4 by name, 1 a Live Photo's".
  const matchedParts = (
    [
      ['own', 'by name'],
      ['edited', "an edited copy's original's"],
      ['live', "a Live Photo's"],
    ] as const
  ).flatMap(([via, words]) => (matched(via) > 0 ? [`${numberText(matched(via))} ${words}`] : []))
  const { copies } = progress
  const leftOut = [...(summary.trashed > 0 ? [`${numberText(summary.trashed)} ${SKIPPED_TRASHED}`] : []), ...skippedParts(summary.skipped)]
  return (
    <section aria-labelledby="takeout-report" className="takeout-report">
      <h2 id="takeout-report">Report</h2>
      <ul>
        <li>
          <strong>{numberText(progress.imported)} imported</strong> ({sizeText(progress.sentBytes)} sent), {numberText(progress.present)} already here,{' '}
          {numberText(progress.failed)} failed
          {progress.state === 'stopped' && `, ${numberText(summary.photos - progress.imported - progress.present - progress.failed)} not yet imported`}
        </li>
        <li>
          Google Photos details: {numberText(summary.withSidecar)} matched
          {matchedParts.length > 0 && ` (${matchedParts.join(', ')})`}, {numberText(summary.withoutSidecar)} without
          {summary.unreadableSidecars > 0 && `, ${numberText(summary.unreadableSidecars)} unreadable`}
        </li>
        <li>
          Albums: {numberText(summary.albums.length)}
          {copies.added > 0 && `; ${countText(copies.added, 'photo')} added to a further album`}
          {copies.present > 0 && `; ${countText(copies.present, 'photo')} in a further album already`}
          {copies.failed > 0 && `; ${countText(copies.failed, 'photo')} not added to a further album`}
        </li>
        {leftOut.length > 0 && <li>Left out: {leftOut.join('; ')}</li>}
      </ul>
      {progress.failedCopies.length > 0 && (
        <ul className="problems" aria-label="Not added to an album">
          {progress.failedCopies.map((copy) => (
            <li key={`${copy.name}/${copy.album}`} className="error">
              {copy.name}: not added to {copy.album}. {sentenceFor(copy.error)}
            </li>
          ))}
        </ul>
      )}
      {running.reading.plan.unmatched.length > 0 && (
        <details>
          <summary>{countText(running.reading.plan.unmatched.length, 'JSON file')} no photo claims</summary>
          <ul className="problems">
            {running.reading.plan.unmatched.map((path) => (
              <li key={path}>{path}</li>
            ))}
          </ul>
        </details>
      )}
    </section>
  )
}
