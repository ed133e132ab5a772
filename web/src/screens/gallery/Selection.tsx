// Selecting photos in a grid (the Photos screen and an album; docs/decisions/0062-selection-and-zip-downloads.md):
// the selection is a Set of asset ids, so a grid of any size selects all in one step and a tile
// asks only whether it is in it; the bar above the grid (at the bottom on a phone) counts it and
// holds its actions, a list each screen gives (Download, Delete, and what comes next: Add to
// album, Move, Favourite are one entry each).
import { useCallback, useEffect, useRef, useState } from 'react'
import type { Library } from '#photos/albums.ts'
import { restoreFromTrash, trashFile } from '#photos/trash.ts'
import { ErrorLine, useAction } from '../../app/ui.tsx'
import { countText, numberText, sizeText } from '../../lib/format.ts'
import { trashChanged } from '../../lib/trash.ts'
import { saveZip, type ZipItem } from '../../lib/zip-download.ts'
import type { ReversibleAction } from './Undo.tsx'

const NOTHING: ReadonlySet<string> = new Set()

export interface Selection {
  readonly selected: ReadonlySet<string>
  /** A tile clicked (or Space on it): toggled, or with `range` the tiles from the one clicked last to it selected, in the grid's order. */
  readonly select: (assetId: string, range: boolean) => void
  /** A heading's check: ids[from, to) selected, or unselected when all already are. */
  readonly selectItems: (from: number, to: number) => void
  readonly selectAll: () => void
  readonly clear: () => void
}

/** The selection among `ids` (the grid's order). */
export function useSelection(ids: readonly string[]): Selection {
  const [selected, setSelected] = useState<ReadonlySet<string>>(NOTHING)
  /** The tile clicked last: where a shift-click's range starts. */
  const anchor = useRef<string | null>(null)
  const order = useRef(ids)
  order.current = ids
  const select = useCallback((assetId: string, range: boolean) => {
    const from = range && anchor.current !== null ? order.current.indexOf(anchor.current) : -1
    const to = order.current.indexOf(assetId)
    anchor.current = assetId
    setSelected((now) => {
      const next = new Set(now)
      if (from >= 0 && to >= 0) for (let i = Math.min(from, to); i <= Math.max(from, to); i++) next.add(order.current[i]!)
      else if (!next.delete(assetId)) next.add(assetId)
      return next
    })
  }, [])
  const selectItems = useCallback((from: number, to: number) => {
    const range = order.current.slice(from, to)
    setSelected((now) => {
      const next = new Set(now)
      if (range.every((id) => now.has(id))) for (const id of range) next.delete(id)
      else for (const id of range) next.add(id)
      return next
    })
  }, [])
  const selectAll = useCallback(() => setSelected(new Set(order.current)), [])
  const clear = useCallback(() => {
    anchor.current = null
    setSelected(NOTHING)
  }, [])
  return { selected, select, selectItems, selectAll, clear }
}

/** Escape clears the selection, unless something over the grid (the photo view, a dialog) takes it. */
function useEscapeClears(active: boolean, clear: () => void): void {
  useEffect(() => {
    if (!active) return
    const keys = (event: KeyboardEvent) => {
      if (event.key !== 'Escape' || event.defaultPrevented || document.querySelector('[aria-modal="true"]') !== null) return
      clear()
    }
    addEventListener('keydown', keys)
    return () => removeEventListener('keydown', keys)
  }, [active, clear])
}

/**
 * A screen's selecting: Select mode (the button) or a selection made without it (a shift-click,
 * a tile's check), either one `selecting`; `endSelection` leaves both, as Escape does.
 */
export function useSelectMode(ids: readonly string[]): Omit<Selection, 'clear'> & {
  readonly selecting: boolean
  readonly startSelecting: () => void
  readonly endSelection: () => void
} {
  const [selectMode, setSelectMode] = useState(false)
  const { selected, select, selectItems, selectAll, clear } = useSelection(ids)
  const selecting = selectMode || selected.size > 0
  const endSelection = useCallback(() => {
    setSelectMode(false)
    clear()
  }, [clear])
  useEscapeClears(selecting, endSelection)
  const startSelecting = useCallback(() => setSelectMode(true), [])
  return { selected, select, selectItems, selectAll, selecting, startSelecting, endSelection }
}

/** One action of the bar. */
export interface SelectionAction {
  readonly label: string
  readonly run: () => void
  readonly danger?: boolean
  readonly busy?: boolean
}

export function SelectionBar({
  count,
  total,
  actions,
  onSelectAll,
  onClear,
}: {
  count: number
  total: number
  actions: readonly SelectionAction[]
  onSelectAll: () => void
  onClear: () => void
}) {
  return (
    <section className="selection-bar" aria-label="Selection">
      <button type="button" className="selection-clear" onClick={onClear} aria-label="Clear the selection" title="Clear the selection (Escape)">
        ×
      </button>
      <p className="selection-count" role="status">
        {count === 0 ? 'Select photos' : `${numberText(count)} selected`}
      </p>
      {count < total && (
        <button type="button" className="secondary" onClick={onSelectAll}>
          Select all
        </button>
      )}
      <div className="selection-actions">
        {actions.map((action) => (
          <button
            key={action.label}
            type="button"
            className={action.danger === true ? 'danger' : 'secondary'}
            disabled={count === 0 || action.busy === true}
            onClick={action.run}
          >
            {action.label}
          </button>
        ))}
      </div>
    </section>
  )
}

/** Saving photos as a zip (lib/zip-download.ts), and what to say about it. Call `save` in the click's task: the save picker needs it. */
export function useZipSave(): { busy: boolean; error: unknown; note: string | null; save: (name: string, items: readonly ZipItem[]) => void } {
  const { busy, error, run } = useAction()
  const [note, setNote] = useState<string | null>(null)
  const save = (name: string, items: readonly ZipItem[]) =>
    void run(async () => {
      setNote(null)
      const saved = await saveZip(name, items)
      if (saved === null) return
      const where = saved.where === 'downloads' ? ' to your downloads' : ''
      const left = saved.skipped > 0 ? ` ${countText(saved.skipped, 'photo')} could not be included: withheld by the operator or gone.` : ''
      setNote(`Saved ${countText(saved.files, 'photo')} as ${name} (${sizeText(saved.bytes)})${where}.${left}`)
    })
  return { busy, error, note, save }
}

export function ZipStatus({ busy, error, note }: { busy: boolean; error: unknown; note: string | null }) {
  return (
    <>
      {(busy || note !== null) && (
        <p className="hint" role="status">
          {busy ? 'Decrypting and saving the zip…' : note}
        </p>
      )}
      <ErrorLine error={error} />
    </>
  )
}

/**
 * The delete the album's Select mode, its photo view and the Photos screen's selection share: the
 * photos hidden at once (`view.hide`) and moved to Recently deleted (decision 0059), then the
 * lists read again (`view.refresh`: the trash leaves them out); the toast's Undo restores them.
 */
export function deletion(
  photos: readonly ZipItem[],
  view: { readonly hide: (assetIds: readonly string[], hidden: boolean) => void; readonly refresh: () => Promise<void> },
): ReversibleAction {
  const assetIds = photos.map((photo) => photo.assetId)
  const what = countText(assetIds.length, 'photo')
  view.hide(assetIds, true)
  const each = (change: (library: Library, albumId: string, assetId: string) => Promise<unknown>) => async () => {
    try {
      for (const { model, assetId } of photos) await change(model.library, model.albumId, assetId)
    } finally {
      for (const library of new Set(photos.map((photo) => photo.model.library))) trashChanged(library)
      await view.refresh()
      view.hide(assetIds, false)
    }
  }
  return {
    label: `Moving ${what} to Recently deleted`,
    done: `Moved ${what} to Recently deleted`,
    run: each(trashFile),
    reverse: { label: `Restoring ${what}`, done: `Restored ${what}`, run: each(restoreFromTrash) },
  }
}
