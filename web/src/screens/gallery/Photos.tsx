// The Photos screen (#/photos, the first screen): every photo of every album, newest first by
// date taken, grouped by day under month headings, with the date scrubber (lib/timeline.ts,
// Grid.tsx). A photo opens over it (#/photos/<album>/<photo>) in the album's photo view; closed,
// the focus is back on its tile. Photos are selected as in an album (Selection.tsx), across
// albums: downloaded as one zip, added or moved to an album, marked favourites, or deleted each in
// its album. Upload (a button, or files and folders dropped on the screen) asks for the album
// first (UploadChooser.tsx; decision 0058). The Favourites screen (#/favourites; decision 0061)
// is this screen over the favourite photos only.
import { useCallback, useEffect, useMemo, useState, useSyncExternalStore, type DragEvent } from 'react'
import type { Library } from '#photos/albums.ts'
import type { CofferClient } from '#sdk/client.ts'
import { linkTo } from '../../app/router.ts'
import { ErrorLine, Heading } from '../../app/ui.tsx'
import { countText, numberText } from '../../lib/format.ts'
import { libraryOf } from '../../lib/library.ts'
import { dropOf, droppedItems, dropIsEmpty, type Picked } from '../../lib/picked.ts'
import type { SavedKeys } from '../../lib/store.ts'
import { Timeline } from '../../lib/timeline.ts'
import { Grid, useReturnTo } from './Grid.tsx'
import { PhotoView, type PhotoPlace } from './PhotoView.tsx'
import { useOrganiseSelection } from './OrganiseSelection.tsx'
import { deletion, SelectionBar, useSelectMode, useZipSave, ZipStatus } from './Selection.tsx'
import { UndoToast, useUndoable } from './Undo.tsx'
import { UploadChooser } from './UploadChooser.tsx'

/** How often the Photos screen asks for what other devices added. */
const POLL_MS = 20_000

function useTimeline(library: Library, favourites: boolean): Timeline {
  const timeline = useMemo(() => new Timeline(library, { favourites }), [library, favourites])
  useEffect(() => {
    void timeline.open()
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible' && timeline.done) void timeline.refresh()
    }, POLL_MS)
    return () => {
      clearInterval(timer)
      timeline.close()
    }
  }, [timeline])
  return timeline
}

export function Photos({
  client,
  keys,
  albumId,
  assetId,
  favourites = false,
}: {
  client: CofferClient
  keys: SavedKeys
  albumId: string | null
  assetId: string | null
  favourites?: boolean
}) {
  const library = useMemo(() => libraryOf(client, keys), [client, keys])
  const timeline = useTimeline(library, favourites)
  const subscribe = useCallback((listener: () => void) => timeline.subscribe(listener), [timeline])
  const ids = useSyncExternalStore(subscribe, () => timeline.ids)
  const progress = useSyncExternalStore(subscribe, () => timeline.progress)
  const opened = useSyncExternalStore(subscribe, () => timeline.opened)
  const done = useSyncExternalStore(subscribe, () => timeline.done)
  const error = useSyncExternalStore(subscribe, () => timeline.error)

  const returnTo = useReturnTo(assetId)
  const { selected, select, selectItems, selectAll, selecting, startSelecting, endSelection } = useSelectMode(ids)
  const zip = useZipSave()
  const { toast, startReversible, undo, dismiss } = useUndoable()
  const organise = useOrganiseSelection(
    library,
    () => chosen(),
    () => {
      endSelection()
      void timeline.refresh()
    },
  )
  /** The selected photos in the timeline's order, each with its album (those whose album is gone left out). */
  const chosen = () =>
    ids.flatMap((id) => {
      const album = selected.has(id) ? timeline.albumOf(id) : undefined
      const of = album === undefined ? undefined : timeline.modelOf(album)
      return of === undefined ? [] : [{ model: of, assetId: id }]
    })

  const place = useMemo<PhotoPlace>(
    () => ({
      back: linkTo(timeline.route),
      backLabel: favourites ? 'Back to Favourites' : 'Back to Photos',
      linkOf: (id) => timeline.hrefOf(id),
      neighbour: (id, step) => timeline.neighbour(id, step),
    }),
    [timeline, favourites],
  )
  const model = albumId === null ? undefined : timeline.modelOf(albumId)

  // The upload chooser: open from the button (no files yet), or over files dropped here.
  const [uploading, setUploading] = useState<{ readonly dropped: AsyncIterable<Picked> | null } | null>(null)
  const [dropping, setDropping] = useState(false)
  const dragOver = (event: DragEvent) => {
    if (!event.dataTransfer.types.includes('Files')) return
    event.preventDefault()
    event.dataTransfer.dropEffect = 'copy'
    setDropping(true)
  }
  const drop = (event: DragEvent) => {
    event.preventDefault()
    setDropping(false)
    // The drop's entries are taken now (they cannot be later); its folders are read once the album is chosen.
    const dropped = dropOf(event.dataTransfer)
    if (!dropIsEmpty(dropped)) setUploading({ dropped: droppedItems(dropped.entries, dropped.loose) })
  }

  const reading = progress.toRead > progress.read && !done
  return (
    <main className={dropping ? 'album timeline dropping' : 'album timeline'} onDragOver={dragOver} onDragLeave={() => setDropping(false)} onDrop={drop}>
      <div className="title-row">
        <Heading>{favourites ? 'Favourites' : 'Photos'}</Heading>
        <button type="button" className="secondary" aria-pressed={selecting} onClick={() => (selecting ? endSelection() : startSelecting())}>
          {selecting ? 'Cancel selection' : 'Select'}
        </button>
        {/* While selecting, the bar's actions stand in for it (a phone's title row has room for one button). */}
        {!selecting && !favourites && (
          <button type="button" onClick={() => setUploading({ dropped: null })}>
            Upload
          </button>
        )}
      </div>
      {uploading !== null && <UploadChooser library={library} dropped={uploading.dropped} onCancel={() => setUploading(null)} />}
      {!opened && error === null && (
        <p className="loading" role="status">
          Opening your photos…
        </p>
      )}
      <p className="hint reading-dates" role="status">
        {reading
          ? `Reading dates: ${numberText(progress.read)} of ${numberText(progress.toRead)}`
          : opened && ids.length > 0
            ? `${countText(ids.length, 'photo')}${done ? '' : ' so far…'}`
            : ''}
      </p>
      <ErrorLine error={error} />
      <ZipStatus busy={zip.busy} error={zip.error} note={zip.note} />
      {selecting && (
        <SelectionBar
          count={selected.size}
          total={ids.length}
          onSelectAll={selectAll}
          onClear={endSelection}
          actions={[
            { label: 'Download', busy: zip.busy, run: () => zip.save(favourites ? 'Favourites.zip' : 'Photos.zip', chosen()) },
            ...organise.actions,
            {
              label: 'Delete',
              danger: true,
              run: () => {
                const photos = chosen()
                endSelection()
                startReversible(deletion(photos, { hide: (hiding, hidden) => timeline.hide(hiding, hidden), refresh: () => timeline.refresh() }))
              },
            },
          ]}
        />
      )}
      {organise.shown}
      {done && ids.length === 0 && error === null && favourites && (
        <p className="empty">No favourites yet. Open a photo and press its heart (or f) to add it here.</p>
      )}
      {done && ids.length === 0 && error === null && !favourites && (
        <p className="empty">
          No photos yet. Upload some with the button above, drop them here, or <a href={linkTo('albums')}>add photos in an album</a>.
        </p>
      )}
      <Grid
        source={timeline}
        ids={ids}
        months={timeline.months}
        days={timeline.days}
        selecting={selecting}
        selected={selected}
        onSelect={select}
        onSelectItems={selectItems}
        returnTo={returnTo}
      />
      {assetId !== null && model !== undefined && (
        <PhotoView
          key={`${assetId}@${model.positionOf(assetId)}`}
          model={model}
          assetId={assetId}
          place={place}
          albumIds={timeline.albumsOf(assetId)}
          onChanged={() => void timeline.refresh()}
        />
      )}
      <UndoToast toast={toast} undo={undo} dismiss={dismiss} />
    </main>
  )
}
