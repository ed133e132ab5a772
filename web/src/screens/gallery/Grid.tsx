// The album's grid: rows of square tiles, as many columns as the width holds, virtualized
// (@tanstack/react-virtual over the rows, the window scrolling) so that only the rows on screen
// and a few around exist; each tile loads its thumbnail when it appears (lib/album.ts, in
// batches), showing a small placeholder at once until the thumbnail is drawn.
import { useWindowVirtualizer } from '@tanstack/react-virtual'
import { memo, useEffect, useLayoutEffect, useRef, useState } from 'react'
import { linkTo } from '../../app/router.ts'
import type { AlbumModel, Tile } from '../../lib/album.ts'

/** Smallest tile edge, in CSS pixels: three columns at phone width, eight at 1280. */
const MIN_TILE = 120
const GAP = 4

function useWidth(ref: React.RefObject<HTMLElement | null>): number {
  const [width, setWidth] = useState(0)
  useLayoutEffect(() => {
    const element = ref.current
    if (element === null) return
    setWidth(element.clientWidth)
    const observer = new ResizeObserver(() => setWidth(element.clientWidth))
    observer.observe(element)
    return () => observer.disconnect()
  }, [ref])
  return width
}

function useTile(model: AlbumModel, assetId: string, ahead: boolean): Tile {
  const [tile, setTile] = useState(() => model.tile(assetId))
  useEffect(() => {
    setTile(model.tile(assetId))
    return model.watch(assetId, setTile, ahead)
  }, [model, assetId, ahead])
  return tile
}

function TileFace({ tile }: { tile: Tile }) {
  switch (tile.kind) {
    case 'loading':
    case 'opened':
      // The tile's label says it is loading (labelOf): the placeholder is only a picture.
      return <span className="tile-placeholder" aria-hidden="true" />
    case 'withheld':
      return <span className="tile-note">Withheld by the operator</span>
    case 'failed':
      return <span className="tile-note">Cannot be opened</span>
    case 'ready':
      return tile.thumbnail === null ? <span className="tile-note tile-name">{tile.asset.metadata.name}</span> : <img src={tile.thumbnail} alt={tile.asset.metadata.name} draggable={false} />
  }
}

const labelOf = (tile: Tile): string | undefined => {
  switch (tile.kind) {
    case 'ready':
      return undefined
    case 'opened':
      return `${tile.asset.metadata.name}, loading`
    case 'withheld':
      return 'Photo withheld by the operator'
    case 'failed':
      return 'Photo that cannot be opened'
    case 'loading':
      return 'Photo, loading'
  }
}

interface TileProps {
  readonly model: AlbumModel
  readonly assetId: string
  /** In a row drawn ahead of a scroll, off screen: loaded after those on screen. */
  readonly ahead: boolean
  readonly selecting: boolean
  readonly selected: boolean
  readonly onToggle: (assetId: string) => void
}

// Memoized: the grid draws again at every scroll step, and a tile already on screen has nothing new to draw.
const TileView = memo(function TileView({ model, assetId, ahead, selecting, selected, onToggle }: TileProps) {
  const tile = useTile(model, assetId, ahead)
  const className = `tile tile-${tile.kind}${selected ? ' selected' : ''}`
  if (selecting) {
    const name = tile.kind === 'ready' || tile.kind === 'opened' ? tile.asset.metadata.name : labelOf(tile)
    return (
      <button type="button" className={className} aria-pressed={selected} aria-label={`Select ${name}`} onClick={() => onToggle(assetId)}>
        <TileFace tile={tile} />
      </button>
    )
  }
  return (
    <a className={className} href={linkTo('albums', model.albumId, assetId)} aria-label={labelOf(tile)} data-asset={assetId}>
      <TileFace tile={tile} />
    </a>
  )
})

export function Grid({ model, ids, selecting, selected, onToggle }: { model: AlbumModel; ids: readonly string[]; selecting: boolean; selected: ReadonlySet<string>; onToggle: (assetId: string) => void }) {
  const ref = useRef<HTMLDivElement>(null)
  const width = useWidth(ref)
  const columns = Math.max(3, Math.floor((width + GAP) / (MIN_TILE + GAP)))
  const edge = width > 0 ? (width - GAP * (columns - 1)) / columns : MIN_TILE
  const rows = Math.ceil(ids.length / columns)
  const virtualizer = useWindowVirtualizer({
    count: rows,
    estimateSize: () => edge + GAP,
    overscan: 2,
    scrollMargin: ref.current?.offsetTop ?? 0,
    // Scroll steps are drawn in React's own batches, not each forced at once inside its event:
    // a fast wheel would otherwise draw the grid several times a frame.
    useFlushSync: false,
  })
  useEffect(() => virtualizer.measure(), [virtualizer, edge])
  const onScreen = virtualizer.range

  return (
    <div ref={ref} className="grid" style={{ height: virtualizer.getTotalSize() }}>
      {virtualizer.getVirtualItems().map((row) => (
        <div
          key={row.key}
          className="grid-row"
          style={{ transform: `translateY(${row.start - virtualizer.options.scrollMargin}px)`, gridTemplateColumns: `repeat(${columns}, 1fr)`, height: edge, gap: GAP }}
        >
          {ids.slice(row.index * columns, row.index * columns + columns).map((assetId) => (
            <TileView
              key={assetId}
              model={model}
              assetId={assetId}
              ahead={onScreen !== null && (row.index < onScreen.startIndex || row.index > onScreen.endIndex)}
              selecting={selecting}
              selected={selected.has(assetId)}
              onToggle={onToggle}
            />
          ))}
        </div>
      ))}
    </div>
  )
}
