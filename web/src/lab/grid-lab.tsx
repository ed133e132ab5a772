// The grid lab (docs/web.md, "The grid lab"): the album's grid alone, over a synthetic album of
// `?items=` photos (a million unless told) spread evenly over the 240 months of 2006 to 2025,
// each tile a placeholder whose data-asset names its place (photo-0000000...); its button adds
// 100 more in the last month (the grid laid out again). Built beside the
// app but served by no route of the server and linked from nowhere: test/browser/grid-lab.test.ts
// serves it to Chromium to measure the grid at a million photos.
import { StrictMode, useMemo, useState } from 'react'
import { createRoot } from 'react-dom/client'
import type { Tile } from '../lib/album.ts'
import { countText } from '../lib/format.ts'
import { Grid, type TileSource } from '../screens/gallery/Grid.tsx'
import { useSelection } from '../screens/gallery/Selection.tsx'
import '../styles.css'

const FIRST_MONTH = 2006 * 12
const MONTHS = 240
const LOADING: Tile = { kind: 'loading' }

const START = Number(new URLSearchParams(location.search).get('items') ?? 1_000_000)
/** Photos added at the end by the lab's button: the grid laid out again over more photos, as a timeline that reads more does. */
const ADDED = 100
const source: TileSource = { albumId: 'lab', tile: () => LOADING, watch: () => () => {} }

function album(count: number): { ids: string[]; months: Int32Array } {
  return {
    ids: Array.from({ length: count }, (_, i) => `photo-${String(i).padStart(7, '0')}`),
    months: Int32Array.from({ length: count }, (_, i) => FIRST_MONTH + Math.min(MONTHS - 1, Math.floor((i * MONTHS) / START))),
  }
}

/** The grid with its selection, as the app's screens have it: the bench measures both. */
function Lab() {
  const [count, setCount] = useState(START)
  const { ids, months } = useMemo(() => album(count), [count])
  const { selected, select, selectItems } = useSelection(ids)
  return (
    <main>
      <h1>Grid lab</h1>
      <p className="hint">
        {countText(count, 'synthetic photo')}.{' '}
        <button type="button" className="secondary" onClick={() => setCount((n) => n + ADDED)}>
          Add {ADDED}
        </button>
      </p>
      <Grid
        source={source}
        ids={ids}
        months={months}
        selecting={selected.size > 0}
        selected={selected}
        onSelect={select}
        onSelectItems={selectItems}
        returnTo={null}
      />
    </main>
  )
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <Lab />
  </StrictMode>,
)
