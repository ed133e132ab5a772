// The Photos screen (#/photos, the first screen): every photo of every album, newest first by
// date taken, grouped by day under month headings, with the date scrubber (lib/timeline.ts,
// Grid.tsx). A photo opens over it (#/photos/<album>/<photo>) in the album's photo view; closed,
// the focus is back on its tile. Photos are selected as in an album (Selection.tsx), across
// albums: downloaded as one zip, added or moved to an album, marked favourites, or deleted each in
// its album. Upload (a button, or files and folders dropped on the screen) asks for the album
// first (UploadChooser.tsx; decision 0058). The Favourites screen (#/favourites; decision 0061)
// is this screen over the favourite photos only. The Search screen (#/search/<query>; decision
// 0070) is this screen over the photos a search on this device found, with its search box.
import { useCallback, useEffect, useMemo, useState, useSyncExternalStore, type DragEvent } from 'react'
import type { Library } from '#photos/albums.ts'
import { describeQuery, search as searchIndex, suggest, type SearchResult, type Suggestion } from '#photos/search.ts'
import type { CofferClient } from '#sdk/client.ts'
import { linkTo } from '../../app/router.ts'
import { ErrorLine, Heading } from '../../app/ui.tsx'
import { countText, numberText } from '../../lib/format.ts'
import { libraryOf } from '../../lib/library.ts'
import { dropOf, droppedItems, dropIsEmpty, type Picked } from '../../lib/picked.ts'
import type { SavedKeys } from '../../lib/store.ts'
import { searchPlaces, TimelineSearch } from '../../lib/search-index.ts'
import { Timeline } from '../../lib/timeline.ts'
import { Grid, useReturnTo } from './Grid.tsx'
import { PhotoView, type PhotoPlace } from './PhotoView.tsx'
import { useOrganiseSelection } from './OrganiseSelection.tsx'
import { SearchBox } from './SearchBox.tsx'
import { deletion, SelectionBar, useSelectMode, useZipSave, ZipStatus } from './Selection.tsx'
import { UndoToast, useUndoable } from './Undo.tsx'
import { UploadChooser } from './UploadChooser.tsx'

/** How often the Photos screen asks for what other devices added. */
const POLL_MS = 20_000

/** A search's index is brought up to date at most this often while the timeline reads dates. */
const INDEX_MS = 300

function useTimeline(library: Library, favourites: boolean, search: boolean): Timeline {
  const timeline = useMemo(() => new Timeline(library, { favourites, search }), [library, favourites, search])
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

/**
 * The Search screen's answers for `text`: the photos found (the timeline then shows only them),
 * and the suggestions for the word being typed. The index is made from the timeline's dated
 * photos once the place names are loaded, then kept in step as the timeline reads more.
 */
function useSearch(timeline: Timeline, active: boolean, text: string): { result: SearchResult | null; suggestions: readonly Suggestion[] } {
  const [searching, setSearching] = useState<TimelineSearch | null>(null)
  const [version, setVersion] = useState(0)
  useEffect(() => {
    if (!active) return
    let live = true
    let made: TimelineSearch | null = null
    let timer: ReturnType<typeof setTimeout> | null = null
    void searchPlaces().then((places) => {
      if (!live) return
      made = new TimelineSearch(places)
      made.update(timeline)
      setSearching(made)
    })
    const unsubscribe = timeline.subscribe(() => {
      if (made === null || timer !== null) return
      timer = setTimeout(() => {
        timer = null
        if (live && made?.update(timeline) === true) setVersion((n) => n + 1)
      }, INDEX_MS)
    })
    return () => {
      live = false
      unsubscribe()
      if (timer !== null) clearTimeout(timer)
    }
  }, [timeline, active])
  // biome-ignore lint/correctness/useExhaustiveDependencies: version says the index changed
  const names = useMemo(() => timeline.albumNames(), [timeline, version, searching])
  // biome-ignore lint/correctness/useExhaustiveDependencies: version says the index changed
  const result = useMemo(() => (searching === null || text.trim() === '' ? null : searchIndex(searching.index, names, text)), [searching, names, text, version])
  // biome-ignore lint/correctness/useExhaustiveDependencies: version says the index changed
  const suggestions = useMemo(() => (searching === null ? [] : suggest(searching.index, names, text)), [searching, names, text, version])
  useEffect(() => {
    if (active) timeline.setFound(text.trim(), new Set(result?.hits.map((hit) => hit.assetId)))
  }, [timeline, active, text, result])
  return { result, suggestions }
}

export function Photos({
  client,
  keys,
  albumId,
  assetId,
  favourites = false,
  search = null,
}: {
  client: CofferClient
  keys: SavedKeys
  albumId: string | null
  assetId: string | null
  favourites?: boolean
  /** The Search screen's query (from its route); null on the other screens. */
  search?: string | null
}) {
  const library = useMemo(() => libraryOf(client, keys), [client, keys])
  const searchScreen = search !== null
  const timeline = useTimeline(library, favourites, searchScreen)
  const [text, setText] = useState(search ?? '')
  // Back or forward to another query's route.
  useEffect(() => {
    if (search !== null) setText(search)
  }, [search])
  const typed = (now: string) => {
    setText(now)
    // The query in the address (without a new history entry per letter): a reload or a copied link searches it again.
    history.replaceState(null, '', now.trim() === '' ? linkTo('search') : linkTo('search', now))
  }
  const found = useSearch(timeline, searchScreen, text)
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
      // Read when used: the Search screen's query changes as it is typed.
      get back() {
        return linkTo(...timeline.routeParts)
      },
      backLabel: searchScreen ? 'Back to the search' : favourites ? 'Back to Favourites' : 'Back to Photos',
      linkOf: (id) => timeline.hrefOf(id),
      neighbour: (id, step) => timeline.neighbour(id, step),
    }),
    [timeline, favourites, searchScreen],
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
        <Heading>{searchScreen ? 'Search' : favourites ? 'Favourites' : 'Photos'}</Heading>
        <button type="button" className="secondary" aria-pressed={selecting} onClick={() => (selecting ? endSelection() : startSelecting())}>
          {selecting ? 'Cancel selection' : 'Select'}
        </button>
        {/* While selecting, the bar's actions stand in for it (a phone's title row has room for one button). */}
        {!selecting && !favourites && !searchScreen && (
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
      {searchScreen && <SearchBox text={text} onText={typed} suggestions={found.suggestions} />}
      <p className="hint reading-dates" role="status">
        {reading
          ? `Reading dates: ${numberText(progress.read)} of ${numberText(progress.toRead)}`
          : searchScreen
            ? found.result === null
              ? ''
              : `${countText(found.result.total, 'photo')} found${describeQuery(found.result.query) === '' ? '' : `: ${describeQuery(found.result.query)}`}${done ? '' : ' so far…'}`
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
            { label: 'Download', busy: zip.busy, run: () => zip.save(searchScreen ? 'Search.zip' : favourites ? 'Favourites.zip' : 'Photos.zip', chosen()) },
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
      {done && ids.length === 0 && error === null && searchScreen && found.result !== null && (
        <p className="empty">Nothing found. Try fewer words, another date, or one of the suggestions.</p>
      )}
      {done && ids.length === 0 && error === null && !favourites && !searchScreen && (
        <p className="empty">
          No photos yet. Upload some with the button above, drop them here, <a href={linkTo('albums')}>add photos in an album</a>, or{' '}
          <a href={linkTo('import')}>import your Google Photos library</a>.
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
