// The selection bar's Add to album, Move to album and Favourite (decisions 0061 and 0062): the
// same operations as the photo view's, over every selected photo (lib/organise.ts: nothing is
// uploaded again), with the album chooser they open and a sentence of what was done.
import { useState, type ReactNode } from 'react'
import type { Library } from '#photos/albums.ts'
import { ErrorLine, useAction } from '../../app/ui.tsx'
import { countText } from '../../lib/format.ts'
import { addToAlbum, moveToAlbum, setFavourites, type OrganiseOutcome, type PhotoRef } from '../../lib/organise.ts'
import type { ZipItem } from '../../lib/zip-download.ts'
import { AlbumChooser } from './AlbumChooser.tsx'
import type { SelectionAction } from './Selection.tsx'

/** What a bulk operation did, in words; its first failure thrown (the others are counted). */
function outcomeText(outcome: OrganiseOutcome, done: string): string {
  const first = outcome.failures[0]
  if (first !== undefined && outcome.done.length === 0) throw first.error
  const failed = outcome.failures.length === 0 ? '' : `; ${countText(outcome.failures.length, 'photo')} could not be: try them again`
  return `${done} ${countText(outcome.done.length, 'photo')}${failed}.`
}

export function useOrganiseSelection(
  library: Library,
  /** The selected photos, in order. */
  chosen: () => readonly ZipItem[],
  /** After an operation: the selection ends and the lists are read again. */
  finished: () => void,
  /** The album the photos are all in (an album page), left out of the chooser. */
  exclude?: string,
): { readonly actions: readonly SelectionAction[]; readonly shown: ReactNode } {
  const [choosing, setChoosing] = useState<{ readonly mode: 'add' | 'move'; readonly photos: readonly PhotoRef[] } | null>(null)
  const [said, setSaid] = useState<string | null>(null)
  const work = useAction()
  const refs = (): PhotoRef[] => chosen().map(({ model, assetId }) => ({ albumId: model.albumId, assetId }))

  const favourite = () =>
    void work.run(async () => {
      setSaid(null)
      const photos = refs()
      try {
        setSaid(outcomeText(await setFavourites(library, photos, true), 'Added to Favourites:'))
      } finally {
        finished()
      }
    })

  const chosenAlbum = async (to: { readonly albumId: string; readonly name: string }) => {
    if (choosing === null) return
    const { mode, photos } = choosing
    try {
      const outcome = mode === 'move' ? await moveToAlbum(library, photos, to.albumId) : await addToAlbum(library, photos, to.albumId)
      setSaid(outcomeText(outcome, mode === 'move' ? `Moved to ${to.name}:` : `Added to ${to.name}:`))
      setChoosing(null)
    } finally {
      finished()
    }
  }

  const actions: SelectionAction[] = [
    { label: 'Add to album', run: () => setChoosing({ mode: 'add', photos: refs() }) },
    { label: 'Move to album', run: () => setChoosing({ mode: 'move', photos: refs() }) },
    { label: 'Favourite', busy: work.busy, run: favourite },
  ]
  const shown = (
    <>
      <ErrorLine error={work.error} />
      {said !== null && (
        <p className="hint" role="status">
          {said}
        </p>
      )}
      {choosing !== null && (
        <AlbumChooser
          library={library}
          title={`${choosing.mode === 'add' ? 'Add' : 'Move'} ${countText(choosing.photos.length, 'photo')} to which album?`}
          submitLabel={choosing.mode === 'add' ? 'Add' : 'Move'}
          busyLabel={choosing.mode === 'add' ? 'Adding…' : 'Moving…'}
          {...(exclude === undefined ? {} : { exclude })}
          onChosen={chosenAlbum}
          onCancel={() => setChoosing(null)}
        />
      )}
    </>
  )
  return { actions, shown }
}
