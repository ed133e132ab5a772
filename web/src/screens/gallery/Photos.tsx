// The Photos screen (#/photos, the first screen): every photo of every album, newest first by
// date taken, grouped by day under month headings, with the date scrubber (lib/timeline.ts,
// Grid.tsx). A photo opens over it (#/photos/<album>/<photo>) in the album's photo view; closed,
// the focus is back on its tile.
import { useCallback, useEffect, useMemo, useRef, useState, useSyncExternalStore } from 'react'
import type { CofferClient } from '#sdk/client.ts'
import { linkTo } from '../../app/router.ts'
import { ErrorLine, Heading } from '../../app/ui.tsx'
import { countText, numberText } from '../../lib/format.ts'
import { libraryOf } from '../../lib/library.ts'
import type { SavedKeys } from '../../lib/store.ts'
import { Timeline } from '../../lib/timeline.ts'
import { Grid } from './Grid.tsx'
import { PhotoView, type PhotoPlace } from './PhotoView.tsx'

/** How often the Photos screen asks for what other devices added. */
const POLL_MS = 20_000

const NO_SELECTION: ReadonlySet<string> = new Set()
const noToggle = (): void => {}

function useTimeline(client: CofferClient, keys: SavedKeys): Timeline {
  const library = useMemo(() => libraryOf(client, keys), [client, keys])
  const timeline = useMemo(() => new Timeline(library), [library])
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

export function Photos({ client, keys, albumId, assetId }: { client: CofferClient; keys: SavedKeys; albumId: string | null; assetId: string | null }) {
  const timeline = useTimeline(client, keys)
  const subscribe = useCallback((listener: () => void) => timeline.subscribe(listener), [timeline])
  const ids = useSyncExternalStore(subscribe, () => timeline.ids)
  const progress = useSyncExternalStore(subscribe, () => timeline.progress)
  const opened = useSyncExternalStore(subscribe, () => timeline.opened)
  const done = useSyncExternalStore(subscribe, () => timeline.done)
  const error = useSyncExternalStore(subscribe, () => timeline.error)

  // The photo view closed: the focus goes back to the tile of the photo it showed last.
  const [returnTo, setReturnTo] = useState<{ readonly assetId: string } | null>(null)
  const viewed = useRef<string | null>(null)
  useEffect(() => {
    if (assetId !== null) viewed.current = assetId
    else if (viewed.current !== null) {
      setReturnTo({ assetId: viewed.current })
      viewed.current = null
    }
  }, [assetId])

  const place = useMemo<PhotoPlace>(
    () => ({
      back: linkTo('photos'),
      backLabel: 'Back to Photos',
      linkOf: (id) => timeline.hrefOf(id),
      neighbour: (id, step) => timeline.neighbour(id, step),
    }),
    [timeline],
  )
  const model = albumId === null ? undefined : timeline.modelOf(albumId)

  const reading = progress.toRead > progress.read && !done
  return (
    <main className="album timeline">
      <Heading>Photos</Heading>
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
      {done && ids.length === 0 && error === null && (
        <p className="empty">
          No photos yet. <a href={linkTo('albums')}>Add photos in an album</a>.
        </p>
      )}
      <Grid
        source={timeline}
        ids={ids}
        months={timeline.months}
        days={timeline.days}
        selecting={false}
        selected={NO_SELECTION}
        onToggle={noToggle}
        returnTo={returnTo}
      />
      {assetId !== null && model !== undefined && <PhotoView key={`${assetId}@${model.positionOf(assetId)}`} model={model} assetId={assetId} place={place} />}
    </main>
  )
}
