// The album's grid (docs/decisions/0032-grid-of-a-million.md): the photos grouped by month, each
// month a heading then rows of square tiles, as many columns as the width holds, and a date
// scrubber beside it. The layout is computed in a worker (lib/layout.ts); the page's thread only
// maps the scroll position to rows, and only the rows on screen and a few around exist. The
// grid's scroll space is never taller than SCROLL_CAP (Chromium caps an element at 16,777,216
// px): past it the window's scroll maps onto the grid scaled, while the wheel and the keys over
// the grid still move it pixel for pixel. Each tile loads its thumbnail when it appears
// (lib/album.ts, in batches), showing a small placeholder at once until the thumbnail is drawn.
import * as Comlink from 'comlink'
import { memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react'
import { linkTo } from '../../app/router.ts'
import type { Tile } from '../../lib/album.ts'
import { durationText } from '#photos/media.ts'
import { isVideo } from '../../lib/video.ts'
import { sentenceFor } from '../../lib/errors.ts'
import { heightOf, isHeading, itemsOf, NO_DAY, rowAt, rowOfItem, rowsOf, startsMonth, type Layout, type Sizes } from '../../lib/layout.ts'
import { dayText, monthShortText, monthText, yearOf } from '../../lib/format.ts'
import type { LayoutWorker } from '../../workers/layout.worker.ts'

/** Smallest tile edge, in CSS pixels: three columns at phone width, eight at 1280. */
const MIN_TILE = 120
const GAP = 4
/** A month's heading row (a day's, grouped by day). */
const HEADING = 40
/** Grouped by day, a month's first day: the month's heading above the day's. */
const MONTH_AND_DAY = 76
/** The tallest the grid's scroll space gets: well under Chromium's 16,777,216 px, with room for the page around it. */
export const SCROLL_CAP = 8_000_000
/** Rows drawn beyond the screen on each side. */
const OVERSCAN = 2
/**
 * Rows are placed from a base pixel, moved only when the screen is this far from it: while it
 * holds, a scroll that brings new rows adds them and leaves the others' styles alone.
 */
const REBASE = 100_000
/** What an arrow key or a wheel's line moves, as the browser's own scrolling does. */
const LINE = 40
/** What Page Up and Page Down move: most of a screen, a little kept for context. */
const PAGE = 0.875
/** The scrubber's labels at least this far apart, in CSS pixels. */
const LABEL_GAP = 22
/** A touch held this long on a tile selects it (as a phone's gallery does), rather than opening it. */
const LONG_PRESS_MS = 500
/** The corner of a tile, in CSS pixels, where the check shown under the pointer is (styles.css .tile::before): a click there selects. */
const CHECK_CORNER = 36

/** What the grid reads of an album: AlbumModel, the Photos screen's timeline (lib/timeline.ts), or the grid lab's synthetic source (web/src/lab). */
export interface TileSource {
  readonly albumId: string
  tile(assetId: string): Tile
  watch(assetId: string, listener: (tile: Tile) => void, ahead?: boolean): () => void
  /** Where a tile leads; the album's photo view (#/albums/<album>/<photo>) unless given. */
  hrefOf?(assetId: string): string
}

/** The width of a classic vertical scrollbar here (0 where scrollbars overlay the page), measured once. */
let scrollbarWidth: number | undefined
function measuredScrollbarWidth(): number {
  if (scrollbarWidth === undefined) {
    const probe = document.createElement('div')
    Object.assign(probe.style, { position: 'absolute', top: '-999px', width: '100px', height: '100px', overflow: 'scroll' })
    document.body.append(probe)
    scrollbarWidth = probe.offsetWidth - probe.clientWidth
    probe.remove()
  }
  return scrollbarWidth
}

/**
 * The element's width, and the width its columns are counted for: as if the page's scrollbar
 * showed, so that the grid growing past the screen (the scrollbar appearing) never changes the
 * number of columns and lays every tile out again under the person's eyes.
 */
function useWidth(ref: React.RefObject<HTMLElement | null>): { width: number; forColumns: number } {
  const [width, setWidth] = useState({ width: 0, forColumns: 0 })
  useLayoutEffect(() => {
    const element = ref.current
    if (element === null) return
    const measure = () => {
      const scrollbarShows = innerWidth > document.documentElement.clientWidth
      const width = element.clientWidth
      const forColumns = scrollbarShows ? width : width - measuredScrollbarWidth()
      setWidth((was) => (was.width === width && was.forColumns === forColumns ? was : { width, forColumns }))
    }
    measure()
    const observer = new ResizeObserver(measure)
    observer.observe(element)
    return () => observer.disconnect()
  }, [ref])
  return width
}

function useViewportHeight(): number {
  const [height, setHeight] = useState(innerHeight)
  useEffect(() => {
    const resized = () => setHeight(innerHeight)
    addEventListener('resize', resized)
    return () => removeEventListener('resize', resized)
  }, [])
  return height
}

/** The tile the grid gives the focus back to once the photo view (open at `assetId`, or null) closed: the photo it showed last. */
export function useReturnTo(assetId: string | null): { readonly assetId: string } | null {
  const [returnTo, setReturnTo] = useState<{ readonly assetId: string } | null>(null)
  const viewed = useRef<string | null>(null)
  useEffect(() => {
    if (assetId !== null) viewed.current = assetId
    else if (viewed.current !== null) {
      setReturnTo({ assetId: viewed.current })
      viewed.current = null
    }
  }, [assetId])
  return returnTo
}

let layoutWorker: Comlink.Remote<LayoutWorker> | null = null

/** The layout of `months` (and `days`) at `sizes`, from the layout worker (its own: a layout never waits behind a decryption); the last one until the next arrives. */
function useLayout(months: Int32Array, days: Int32Array | undefined, { columns, rowHeight, headingHeight, monthHeadingHeight }: Sizes): Layout | null {
  const [layout, setLayout] = useState<Layout | null>(null)
  useEffect(() => {
    let current = true
    layoutWorker ??= Comlink.wrap<LayoutWorker>(new Worker(new URL('../../workers/layout.worker.ts', import.meta.url), { type: 'module', name: 'layout' }))
    void layoutWorker
      .layout(months, { columns, rowHeight, headingHeight, ...(monthHeadingHeight === undefined ? {} : { monthHeadingHeight }) }, days)
      .then((next) => {
        if (current) setLayout(next)
      })
    return () => {
      current = false
    }
  }, [months, days, columns, rowHeight, headingHeight, monthHeadingHeight])
  return layout
}

export function useTile(source: TileSource, assetId: string, ahead: boolean): Tile {
  const [tile, setTile] = useState(() => source.tile(assetId))
  useEffect(() => {
    setTile(source.tile(assetId))
    return source.watch(assetId, setTile, ahead)
  }, [source, assetId, ahead])
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
    case 'ready': {
      const { metadata } = tile.asset
      // A video without a poster (made where it could not be decoded) shows the generic one: a play mark over its name.
      const face =
        tile.thumbnail === null ? (
          <span className={isVideo(metadata.type) ? 'tile-note tile-name tile-video-poster' : 'tile-note tile-name'}>{metadata.name}</span>
        ) : (
          <img src={tile.thumbnail} alt={metadata.name} draggable={false} />
        )
      // The generic poster says it is a video already; a length, when known, still goes in the corner.
      if (!isVideo(metadata.type) || (tile.thumbnail === null && metadata.duration === undefined)) return face
      return (
        <>
          {face}
          <span className="tile-video" data-duration={metadata.duration ?? ''}>
            <span aria-hidden="true">▶</span>
            {metadata.duration === undefined ? <span className="visually-hidden">Video</span> : ` ${durationText(metadata.duration)}`}
          </span>
        </>
      )
    }
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
  readonly source: TileSource
  readonly assetId: string
  /** Where the tile leads: given by the grid, so that a source whose links change (the Search screen's, with its query) draws them again. */
  readonly href: string
  /** In a row drawn ahead of a scroll, off screen: loaded after those on screen. */
  readonly ahead: boolean
  readonly selecting: boolean
  readonly selected: boolean
  /** Selects or unselects the tile; `range`: everything from the tile clicked last to this one (shift-click). */
  readonly onSelect: (assetId: string, range: boolean) => void
}

// Memoized: the rows are drawn again at every step of a scroll, and a tile already on screen has nothing new to draw.
const TileView = memo(function TileView({ source, assetId, href, ahead, selecting, selected, onSelect }: TileProps) {
  const tile = useTile(source, assetId, ahead)
  const className = `tile tile-${tile.kind}${selected ? ' selected' : ''}`
  // Why a tile cannot be opened, on hover: the tile itself has room only for "Cannot be opened".
  const reason = tile.kind === 'failed' ? sentenceFor(tile.error) : undefined
  /** A touch held on the tile: its timer, then whether it selected (the click that follows opens nothing). */
  const press = useRef<{ timer: ReturnType<typeof setTimeout> | null; selected: boolean }>({ timer: null, selected: false })
  const endPress = () => {
    if (press.current.timer !== null) clearTimeout(press.current.timer)
    press.current.timer = null
  }
  if (selecting) {
    const name = tile.kind === 'ready' || tile.kind === 'opened' ? tile.asset.metadata.name : labelOf(tile)
    return (
      <button
        type="button"
        className={className}
        title={reason}
        aria-pressed={selected}
        aria-label={`Select ${name}`}
        data-asset={assetId}
        onClick={(event) => onSelect(assetId, event.shiftKey)}
      >
        <TileFace tile={tile} />
      </button>
    )
  }
  return (
    <a
      className={className}
      title={reason}
      href={href}
      aria-label={labelOf(tile)}
      data-asset={assetId}
      onPointerDown={(event) => {
        press.current.selected = false
        if (event.pointerType !== 'touch') return
        press.current.timer = setTimeout(() => {
          press.current = { timer: null, selected: true }
          onSelect(assetId, false)
        }, LONG_PRESS_MS)
      }}
      onPointerUp={endPress}
      onPointerCancel={endPress}
      onPointerLeave={endPress}
      onContextMenu={(event) => {
        if (press.current.selected) event.preventDefault()
      }}
      onClick={(event) => {
        // A long press selected; a click on the check in the corner selects (from the keyboard, Space: Grid's keys).
        const box = event.currentTarget.getBoundingClientRect()
        const onCheck = event.clientX > box.right - CHECK_CORNER && event.clientY < box.top + CHECK_CORNER
        if (press.current.selected || onCheck) {
          event.preventDefault()
          if (!press.current.selected) onSelect(assetId, false)
          press.current.selected = false
        }
      }}
    >
      <TileFace tile={tile} />
    </a>
  )
})

/**
 * Where the grid is: the layout, its height, the scroll space it takes in the page (`space`, at
 * most SCROLL_CAP) and the scale from that space to the grid (1 below the cap).
 */
interface Geometry {
  readonly layout: Layout
  readonly height: number
  readonly space: number
  readonly scale: number
  /** The screen's height. */
  readonly screen: number
}

function geometryOf(layout: Layout, screen: number): Geometry {
  const height = heightOf(layout)
  const space = Math.min(height, SCROLL_CAP)
  return { layout, height, space, scale: height > space ? (height - screen) / (space - screen) : 1, screen }
}

/** The furthest the grid's top row can be from its top: its end on the screen's last line. */
const lastTop = (g: Geometry): number => Math.max(0, g.height - g.screen)

/** The rows drawn: those on screen and OVERSCAN around them; `top` is the base pixel they were placed from. */
interface Drawn {
  readonly layout: Layout | null
  readonly first: number
  readonly last: number
  readonly onScreenFirst: number
  readonly onScreenLast: number
  readonly top: number
}

const NOTHING_DRAWN: Drawn = { layout: null, first: 0, last: -1, onScreenFirst: 0, onScreenLast: -1, top: 0 }

/** The rows to draw with the grid's pixel `at` at the screen's top, placed from `drawn`'s base pixel while that is of this layout and near. */
function drawnAt(g: Geometry, at: number, drawn: Drawn): Drawn {
  const onScreenFirst = rowAt(g.layout, at)
  const onScreenLast = rowAt(g.layout, at + g.screen)
  return {
    layout: g.layout,
    first: Math.max(0, onScreenFirst - OVERSCAN),
    last: Math.min(rowsOf(g.layout) - 1, onScreenLast + OVERSCAN),
    onScreenFirst,
    onScreenLast,
    top: drawn.layout === g.layout && Math.abs(at - drawn.top) < REBASE ? drawn.top : at,
  }
}

export function Grid({
  source,
  ids,
  months,
  days,
  selecting,
  selected,
  onSelect,
  onSelectItems,
  returnTo,
}: {
  source: TileSource
  ids: readonly string[]
  months: Int32Array
  /** Each photo's day (lib/format.ts dayOf): grouped by day under month headings; by month when absent. */
  days?: Int32Array
  /** Select mode: a click on a tile selects it rather than opening it. */
  selecting: boolean
  selected: ReadonlySet<string>
  onSelect: (assetId: string, range: boolean) => void
  /** A heading's check: selects the photos ids[from, to), or unselects them when all are selected. */
  onSelectItems: (from: number, to: number) => void
  /** The photo whose tile takes the focus back (the photo view closed over it); a new object each time. */
  returnTo: { readonly assetId: string } | null
}) {
  const space = useRef<HTMLDivElement>(null)
  const layer = useRef<HTMLDivElement>(null)
  const { width, forColumns } = useWidth(space)
  const screen = useViewportHeight()
  const columns = Math.max(3, Math.floor((forColumns + GAP) / (MIN_TILE + GAP)))
  const edge = width > 0 ? (width - GAP * (columns - 1)) / columns : MIN_TILE
  const layout = useLayout(months, days, { columns, rowHeight: edge + GAP, headingHeight: HEADING, monthHeadingHeight: MONTH_AND_DAY })
  const geometry = useMemo(() => (layout === null ? null : geometryOf(layout, screen)), [layout, screen])
  const [drawn, setDrawn] = useState(NOTHING_DRAWN)
  /** The grid's pixel at the screen's top, as of the last scroll. */
  const top = useRef(0)
  /**
   * The pixel a jump asked for and the window's scroll it made: scaled, a scroll lands on whole
   * pixels, a few grid pixels off (above a month's heading, say), so while the window stays
   * there the grid stays at the pixel asked for.
   */
  const jumped = useRef<{ scrollY: number; top: number } | null>(null)
  const now = useRef({ geometry, drawn, ids })
  now.current = { geometry, drawn, ids }
  /** The tile to focus once it is drawn (returnTo). */
  const focusing = useRef<string | null>(null)

  /** Where the grid's space begins in the page. */
  const spaceTop = useCallback((): number => (space.current?.getBoundingClientRect().top ?? 0) + scrollY, [])

  /** Maps the window's scroll to the grid's top pixel, moves the drawn rows there, and draws others when the screen shows other rows. */
  const scrolled = useCallback(() => {
    const { geometry: g, drawn: d } = now.current
    if (g === null) return
    const into = Math.min(Math.max(scrollY - spaceTop(), 0), Math.max(0, g.space - g.screen))
    if (jumped.current?.scrollY !== scrollY) jumped.current = null
    top.current = Math.min(jumped.current?.top ?? into * g.scale, lastTop(g))
    // At once, in this frame: React draws new rows a moment later.
    if (layer.current !== null) layer.current.style.transform = `translateY(${d.top - top.current}px)`
    const next = drawnAt(g, top.current, d)
    if (d.layout !== g.layout || next.first !== d.first || next.last !== d.last) setDrawn(next)
  }, [spaceTop])

  /** Scrolls the window so that the grid's pixel `to` is at the screen's top. */
  const scrollToTop = useCallback(
    (to: number) => {
      const g = now.current.geometry
      if (g === null) return
      const clamped = Math.min(Math.max(to, 0), lastTop(g))
      scrollTo({ top: spaceTop() + clamped / g.scale, behavior: 'instant' })
      jumped.current = { scrollY, top: clamped }
      scrolled()
    },
    [scrolled, spaceTop],
  )

  // A new layout (more photos, another width): the photo at the screen's top stays there.
  const previous = useRef<Geometry | null>(null)
  useLayoutEffect(() => {
    const before = previous.current
    previous.current = geometry
    if (geometry === null) return
    if (before !== null && before.layout !== geometry.layout && top.current > 0) {
      const row = rowAt(before.layout, top.current)
      const within = top.current - before.layout.rowTop[row]!
      const item = before.layout.rowItem[row]!
      scrollToTop(geometry.layout.rowTop[rowOfItem(geometry.layout, item)]! + within)
    } else scrolled()
  }, [geometry, scrolled, scrollToTop])

  useEffect(() => {
    addEventListener('scroll', scrolled, { passive: true })
    return () => removeEventListener('scroll', scrolled)
  }, [scrolled])

  // Scaled (past SCROLL_CAP), the browser's own steps would move the grid `scale` times too far:
  // the wheel over the grid and the keys are given back pixel for pixel.
  useEffect(() => {
    const element = space.current
    const scale = geometry?.scale ?? 1
    if (element === null || scale === 1) return
    const wheel = (event: WheelEvent) => {
      if (event.ctrlKey) return // a pinch or Ctrl+wheel zooms
      event.preventDefault()
      const unit = event.deltaMode === WheelEvent.DOM_DELTA_LINE ? LINE : event.deltaMode === WheelEvent.DOM_DELTA_PAGE ? innerHeight : 1
      scrollBy({ top: (event.deltaY * unit) / scale, behavior: 'instant' })
    }
    const keys = (event: KeyboardEvent) => {
      const target = event.target
      if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return
      if (!(target === document.body || (target instanceof Node && element.contains(target)))) return
      const page = innerHeight * PAGE
      const step = { PageDown: page, PageUp: -page, ' ': event.shiftKey ? -page : page, ArrowDown: LINE, ArrowUp: -LINE }[event.key]
      if (step === undefined) return
      event.preventDefault()
      scrollBy({ top: step / scale, behavior: 'instant' })
    }
    element.addEventListener('wheel', wheel, { passive: false })
    addEventListener('keydown', keys)
    return () => {
      element.removeEventListener('wheel', wheel)
      removeEventListener('keydown', keys)
    }
  }, [geometry?.scale])

  /** Scrolls the least that brings `row` on screen (above: with the heading over it). */
  const showRow = useCallback(
    (row: number) => {
      const g = now.current.geometry
      if (g === null) return
      const rowTop = g.layout.rowTop[row]!
      const rowBottom = g.layout.rowTop[row + 1]!
      if (rowTop < top.current) scrollToTop(rowTop - HEADING)
      else if (rowBottom > top.current + g.screen) scrollToTop(rowBottom - g.screen)
    },
    [scrollToTop],
  )

  /** A tile reached with Tab (not a click) is scrolled into view: the rows drawn off screen are clipped. */
  const focused = (event: React.FocusEvent) => {
    const row =
      event.target instanceof HTMLElement && event.target.matches(':focus-visible') ? Number(event.target.closest<HTMLElement>('[data-row]')?.dataset.row) : NaN
    if (Number.isInteger(row)) showRow(row)
  }

  /** Focuses the tile of a drawn photo, or the one `focusing` names once it is drawn. */
  const focusDrawn = useCallback((assetId: string | null): void => {
    const tile = assetId === null ? null : layer.current?.querySelector<HTMLElement>(`[data-asset="${CSS.escape(assetId)}"]`)
    if (tile === null || tile === undefined) return
    focusing.current = null
    tile.focus({ preventScroll: true })
  }, [])

  /** Brings photo `item`'s row on screen and focuses its tile, now if drawn, else once drawn (below). */
  const focusItem = useCallback(
    (item: number): void => {
      const { geometry: g, ids: shownIds } = now.current
      const assetId = shownIds[item]
      if (g === null || assetId === undefined) return
      focusing.current = assetId
      showRow(rowOfItem(g.layout, item))
      focusDrawn(assetId)
    },
    [showRow, focusDrawn],
  )

  // The photo view closed: its photo's tile is brought on screen and focused.
  useLayoutEffect(() => {
    const item = returnTo === null ? -1 : now.current.ids.indexOf(returnTo.assetId)
    if (item >= 0) focusItem(item)
  }, [returnTo, focusItem])
  useLayoutEffect(() => focusDrawn(focusing.current))

  /**
   * The keys on a tile: the arrows move the focus to the next tile, or to the nearest one
   * across in the row above or below (headings skipped), scrolled into view; Space selects it
   * (Shift+Space: the range from the tile selected last). Enter opens it, as a link does.
   */
  const keys = (event: React.KeyboardEvent) => {
    const g = now.current.geometry
    const assetId = event.target instanceof HTMLElement ? event.target.dataset.asset : undefined
    if (g === null || assetId === undefined || event.altKey || event.ctrlKey || event.metaKey) return
    if (event.key === ' ') {
      event.preventDefault()
      onSelect(assetId, event.shiftKey)
      return
    }
    const item = now.current.ids.indexOf(assetId)
    const { layout } = g
    const across = (step: -1 | 1): number => {
      const row = rowOfItem(layout, item)
      let to = row + step
      while (to >= 0 && to < rowsOf(layout) && isHeading(layout, to)) to += step
      if (to < 0 || to >= rowsOf(layout)) return -1
      const [first, end] = itemsOf(layout, to)
      return Math.min(first + (item - layout.rowItem[row]!), end - 1)
    }
    const target = { ArrowLeft: item - 1, ArrowRight: item + 1, ArrowUp: across(-1), ArrowDown: across(1) }[event.key]
    if (target === undefined) return
    event.preventDefault()
    if (target >= 0 && target < layout.count) focusItem(target)
  }

  // A new layout (the same photos ordered again, more of them) draws at once the rows where the
  // screen is, rather than nothing until scrolled() runs: the tiles still on screen stay the same
  // elements (the focus stays on its tile; nothing is drawn twice).
  const shown = drawn.layout === layout ? drawn : geometry === null ? NOTHING_DRAWN : drawnAt(geometry, Math.min(top.current, lastTop(geometry)), NOTHING_DRAWN)
  // The layer is moved by scrolled() between draws, so its place is set here, not as a prop React would think unchanged.
  useLayoutEffect(() => {
    if (layer.current !== null) layer.current.style.transform = `translateY(${shown.top - top.current}px)`
  })
  const rows: React.ReactNode[] = []
  if (layout !== null) {
    for (let row = shown.first; row <= shown.last; row++) {
      const y = layout.rowTop[row]! - shown.top
      if (isHeading(layout, row)) {
        const section = layout.rowSection[row]!
        const day = layout.sectionDay[section]!
        const month = monthText(layout.sectionMonth[section]!)
        const from = layout.sectionItem[section]!
        const to = layout.sectionItem[section + 1]!
        let all = true
        for (let i = from; i < to && all; i++) all = selected.has(ids[i]!)
        const sectionName = day === NO_DAY ? month : dayText(day)
        const check = (
          <button
            type="button"
            className="section-check"
            aria-pressed={all}
            aria-label={`Select ${sectionName}`}
            title={all ? `Unselect ${sectionName}` : `Select ${sectionName}`}
            onClick={() => onSelectItems(from, to)}
          />
        )
        if (day === NO_DAY)
          rows.push(
            <h2
              key={row}
              className={selecting ? 'grid-month selecting' : 'grid-month'}
              data-row={row}
              style={{ transform: `translateY(${y}px)`, height: HEADING }}
            >
              {check}
              {month}
            </h2>,
          )
        else {
          const first = startsMonth(layout, section)
          rows.push(
            <div
              key={row}
              className={selecting ? 'grid-day selecting' : 'grid-day'}
              data-row={row}
              style={{ transform: `translateY(${y}px)`, height: first ? MONTH_AND_DAY : HEADING }}
            >
              {first && <h2 className="grid-month-title">{month}</h2>}
              <h3 className="grid-day-title" data-day={day}>
                {check}
                {dayText(day)}
              </h3>
            </div>,
          )
        }
        continue
      }
      const [from, to] = itemsOf(layout, row)
      const ahead = row < shown.onScreenFirst || row > shown.onScreenLast
      rows.push(
        <div
          key={row}
          className="grid-row"
          data-row={row}
          style={{ transform: `translateY(${y}px)`, gridTemplateColumns: `repeat(${columns}, 1fr)`, height: edge, gap: GAP }}
        >
          {ids.slice(from, Math.min(to, ids.length)).map((assetId) => (
            <TileView
              key={assetId}
              source={source}
              assetId={assetId}
              href={source.hrefOf?.(assetId) ?? linkTo('albums', source.albumId, assetId)}
              ahead={ahead}
              selecting={selecting}
              selected={selected.has(assetId)}
              onSelect={onSelect}
            />
          ))}
        </div>,
      )
    }
  }

  const pane = geometry === null ? 0 : Math.min(geometry.screen, geometry.space)
  return (
    <div className="grid-box">
      <div ref={space} className="grid" style={{ height: geometry?.space ?? 0 }}>
        {/* The photos, a region of the page: a photo that takes the keyboard's focus is scrolled into view. */}
        <section className="grid-pane" aria-label="Photos" style={{ height: pane }} onFocus={focused} onKeyDown={keys}>
          <div ref={layer} className="grid-layer">
            {rows}
          </div>
        </section>
      </div>
      <div className="scrubber-column">
        {geometry !== null && geometry.height > 2 * geometry.screen && <Scrubber geometry={geometry} top={shown.top} height={pane} scrollToTop={scrollToTop} />}
      </div>
    </div>
  )
}

/** A label of the scrubber: a year, or a month when the album spans one year. */
interface Label {
  readonly text: string
  /** From the track's top, as a fraction of it. */
  readonly at: number
}

/** The sections that start a month (every section, grouped by month; a month's first day, grouped by day). */
function monthStartsOf(layout: Layout): Int32Array {
  const starts: number[] = []
  for (let s = 0; s < layout.sectionMonth.length; s++) if (startsMonth(layout, s)) starts.push(s)
  return Int32Array.from(starts)
}

function labelsOf(g: Geometry, track: number, monthStarts: Int32Array): Label[] {
  const { layout } = g
  const months = layout.sectionMonth
  const end = lastTop(g)
  if (months.length === 0 || end === 0) return []
  const years = yearOf(months[0]!) !== yearOf(months[months.length - 1]!)
  const labels: Label[] = []
  let lastAt = -Infinity
  for (let m = 0; m < monthStarts.length; m++) {
    const section = monthStarts[m]!
    if (years && m > 0 && yearOf(months[section]!) === yearOf(months[monthStarts[m - 1]!]!)) continue
    const at = Math.min(1, layout.rowTop[layout.sectionRow[section]!]! / end)
    if ((at - lastAt) * track < LABEL_GAP) continue
    labels.push({ text: years ? String(yearOf(months[section]!)) : monthShortText(months[section]!), at })
    lastAt = at
  }
  return labels
}

/**
 * The date scrubber: a slider over the album's months. A click or a drag on it jumps to that
 * point of the album; the arrow keys go a month back or on, Page Up and Page Down a year, Home
 * and End to either end.
 */
function Scrubber({ geometry: g, top, height, scrollToTop }: { geometry: Geometry; top: number; height: number; scrollToTop: (to: number) => void }) {
  const { layout } = g
  const end = lastTop(g)
  const monthStarts = useMemo(() => monthStartsOf(layout), [layout])
  const labels = useMemo(() => labelsOf(g, height, monthStarts), [g, height, monthStarts])
  // The scrubber goes by month: `section` is the index of the month at the screen's top among monthStarts.
  const sections = monthStarts.length
  const atTop = layout.rowSection[rowAt(layout, top)] ?? 0
  let section = 0
  while (section + 1 < sections && monthStarts[section + 1]! <= atTop) section++
  const month = layout.sectionMonth[monthStarts[section] ?? 0] ?? -1
  const monthOfStart = (s: number): number => layout.sectionMonth[monthStarts[s]!]!
  const [dragging, setDragging] = useState(false)

  const sectionTop = (s: number): number => layout.rowTop[layout.sectionRow[monthStarts[s]!]!]!
  const toPoint = (event: React.PointerEvent) => {
    const box = event.currentTarget.getBoundingClientRect()
    scrollToTop((Math.min(Math.max(event.clientY - box.top, 0), box.height) / box.height) * end)
  }
  const keys = (event: React.KeyboardEvent) => {
    const yearStart = (from: number, step: -1 | 1): number => {
      let s = from
      do s += step
      while (s > 0 && s < sections - 1 && yearOf(monthOfStart(s)) === yearOf(monthOfStart(s - 1)))
      return Math.min(Math.max(s, 0), sections - 1)
    }
    /** Where a key takes the grid: the next or previous month, year, the start or the end. */
    const destination = (key: string): number | null => {
      switch (key) {
        case 'ArrowDown':
        case 'ArrowRight':
          return sectionTop(Math.min(section + 1, sections - 1))
        case 'ArrowUp':
        case 'ArrowLeft':
          return sectionTop(top > sectionTop(section) ? section : Math.max(section - 1, 0))
        case 'PageDown':
          return sectionTop(yearStart(section, 1))
        case 'PageUp':
          return sectionTop(yearStart(section, -1))
        case 'Home':
          return 0
        case 'End':
          return end
        default:
          return null
      }
    }
    const to = destination(event.key)
    if (to === null) return
    event.preventDefault()
    scrollToTop(to)
  }

  return (
    <div
      className={dragging ? 'scrubber dragging' : 'scrubber'}
      style={{ height }}
      role="slider"
      tabIndex={0}
      aria-label="Jump to a month"
      aria-orientation="vertical"
      aria-valuemin={1}
      aria-valuemax={sections}
      aria-valuenow={section + 1}
      aria-valuetext={monthText(month)}
      onKeyDown={keys}
      onPointerDown={(event) => {
        event.currentTarget.setPointerCapture(event.pointerId)
        setDragging(true)
        toPoint(event)
      }}
      onPointerMove={(event) => {
        if (event.currentTarget.hasPointerCapture(event.pointerId)) toPoint(event)
      }}
      onPointerUp={() => setDragging(false)}
      onPointerCancel={() => setDragging(false)}
    >
      {labels.map((label) => (
        <span key={label.text} className="scrubber-label" style={{ top: `${label.at * 100}%` }} aria-hidden="true">
          {label.text}
        </span>
      ))}
      <span className="scrubber-thumb" style={{ top: `${(end === 0 ? 0 : top / end) * 100}%` }} aria-hidden="true">
        <span className="scrubber-month">{monthText(month)}</span>
      </span>
    </div>
  )
}
