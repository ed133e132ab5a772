// An album: its grid of photos, the uploads (file and folder pickers, drag-and-drop of files and
// folders, and what the Photos screen's chooser handed over), the multi-select
// to delete, and the photo view when the route names a photo (#/albums/<album>/<asset>), drawn
// over the grid so that going back keeps the place.
import { useCallback, useEffect, useMemo, useState, useSyncExternalStore, type DragEvent } from 'react'
import type { Library } from '#photos/albums.ts'
import { deleteFile } from '#photos/edits.ts'
import type { CofferClient } from '#sdk/client.ts'
import { linkTo } from '../../app/router.ts'
import { useSession } from '../../app/session.tsx'
import { ErrorLine, Heading } from '../../app/ui.tsx'
import { AlbumModel } from '../../lib/album.ts'
import { problemOf } from '../../lib/errors.ts'
import { countText } from '../../lib/format.ts'
import { libraryOf } from '../../lib/library.ts'
import type { SavedKeys } from '../../lib/store.ts'
import { dropOf, droppedItems, type Picked } from '../../lib/picked.ts'
import { takeHandedOver } from '../../lib/upload-handoff.ts'
import { replacePhoto, Uploads } from '../../lib/uploads.ts'
import { Grid, useReturnTo } from './Grid.tsx'
import { Pickers } from './Pickers.tsx'
import { PhotoView } from './PhotoView.tsx'
import { UndoToast, useUndoable } from './Undo.tsx'
import { UploadPanel } from './UploadPanel.tsx'

/** How often an open album asks for what other devices added. */
const POLL_MS = 20_000

function useAlbum(library: Library, albumId: string): { model: AlbumModel; uploads: Uploads } | null {
  const [opened, setOpened] = useState<{ model: AlbumModel; uploads: Uploads } | null>(null)
  useEffect(() => {
    const model = new AlbumModel(library, albumId)
    const uploads = new Uploads(model)
    setOpened({ model, uploads })
    // The album first (isStored needs its assets), then what an earlier visit left to upload,
    // and what the Photos screen's upload chooser handed over for this album.
    let closed = false
    void model.refresh().then(() => {
      if (closed) return
      void uploads.resume()
      for (const files of takeHandedOver(albumId)) void uploads.add(files)
    })
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') void model.refresh()
    }, POLL_MS)
    return () => {
      closed = true
      clearInterval(timer)
      uploads.close()
      model.close()
    }
  }, [library, albumId])
  return opened?.model.albumId === albumId ? opened : null
}

const photos = (n: number): string => countText(n, 'photo')

export function Album({ client, keys, albumId, assetId }: { client: CofferClient; keys: SavedKeys; albumId: string; assetId: string | null }) {
  const library = useMemo(() => libraryOf(client, keys), [client, keys])
  const opened = useAlbum(library, albumId)
  if (opened === null)
    return (
      <p className="loading" role="status">
        Opening the album…
      </p>
    )
  return <OpenAlbum model={opened.model} uploads={opened.uploads} assetId={assetId} />
}

function OpenAlbum({ model, uploads, assetId }: { model: AlbumModel; uploads: Uploads; assetId: string | null }) {
  const ids = useSyncExternalStore(
    useCallback((listener) => model.subscribe(listener), [model]),
    () => model.ids,
  )
  const subscribeUploads = useCallback((listener: () => void) => uploads.subscribe(listener), [uploads])
  const items = useSyncExternalStore(subscribeUploads, () => uploads.items)
  const adding = useSyncExternalStore(subscribeUploads, () => uploads.adding)
  const [selecting, setSelecting] = useState(false)
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set())
  const [dropping, setDropping] = useState(false)
  const { toast, start, undo, dismiss } = useUndoable()
  const { watch } = useSession()
  const suspended = watch.record?.standing === 'suspended'
  // An upload refused for a suspension the page did not know of yet: read the record now (the banner, the disabled button).
  const refusedAsSuspended = items.some((item) => item.state === 'failed' && problemOf(item.error)?.code === 'error.account.suspended')
  const refreshRecord = watch.refresh
  useEffect(() => {
    if (refusedAsSuspended) refreshRecord()
  }, [refusedAsSuspended, refreshRecord])
  const returnTo = useReturnTo(assetId)

  const toggle = useCallback((id: string) => {
    setSelected((now) => {
      const next = new Set(now)
      if (!next.delete(id)) next.add(id)
      return next
    })
  }, [])

  const remove = (assetIds: readonly string[]) => {
    model.hide(assetIds, true)
    setSelecting(false)
    setSelected(new Set())
    if (assetId !== null) location.hash = linkTo('albums', model.albumId)
    start({
      label: `Deleting ${photos(assetIds.length)}`,
      done: `Deleted ${photos(assetIds.length)}`,
      run: async () => {
        try {
          for (const id of assetIds) await deleteFile(model.library, model.albumId, id)
        } finally {
          await model.refresh()
          model.hide(assetIds, false)
        }
      },
      undone: () => model.hide(assetIds, false),
    })
  }

  const replace = (id: string, file: File) =>
    start({
      label: `Replacing the photo with ${file.name}`,
      done: `Replaced the photo with ${file.name}`,
      run: async () => {
        await replacePhoto(model, id, file)
        await model.refresh()
      },
      undone: () => {},
    })

  const add = (files: Iterable<Picked> | AsyncIterable<Picked>) => {
    if (!suspended) void uploads.add(files)
  }

  const dragOver = (event: DragEvent) => {
    if (!event.dataTransfer.types.includes('Files')) return
    event.preventDefault()
    event.dataTransfer.dropEffect = 'copy'
    setDropping(true)
  }
  const drop = (event: DragEvent) => {
    event.preventDefault()
    setDropping(false)
    // The drop's entries are taken now (they cannot be later); the folders in it are read as the upload goes.
    const { entries, loose } = dropOf(event.dataTransfer)
    add(droppedItems(entries, loose))
  }

  const name = model.name
  return (
    <main className={dropping ? 'album dropping' : 'album'} onDragOver={dragOver} onDragLeave={() => setDropping(false)} onDrop={drop}>
      <p className="crumbs">
        <a href={linkTo('albums')}>Albums</a>
      </p>
      <Heading>{name === undefined ? 'Album' : name === null ? 'Unnamed album' : name}</Heading>
      <div className="toolbar">
        <Pickers onPicked={add} disabled={suspended} describedBy={suspended ? 'adding-paused' : undefined} />
        <button
          type="button"
          className="secondary"
          aria-pressed={selecting}
          onClick={() => {
            setSelecting(!selecting)
            setSelected(new Set())
          }}
        >
          {selecting ? 'Cancel selection' : 'Select'}
        </button>
        {selecting && (
          <button type="button" className="danger" disabled={selected.size === 0} onClick={() => remove([...selected])}>
            Delete {photos(selected.size)}
          </button>
        )}
        <a href={linkTo('custody', model.albumId)}>Custody of this album</a>
      </div>
      {suspended && (
        <p id="adding-paused" className="notice">
          You cannot add photos while your account is suspended. <a href={linkTo('record')}>Your moderation record</a> says why; to ask about it, contact the
          operator of this server.
        </p>
      )}
      <p className="hint">
        {model.scanned ? `${photos(ids.length)}.` : `${photos(ids.length)} so far…`}
        {suspended ? '' : ' Drop photos or folders anywhere on this page to add them.'}
      </p>
      <ErrorLine error={model.scanError} />
      <UploadPanel uploads={uploads} items={items} suspended={suspended} adding={adding} />
      {model.scanned && ids.length === 0 && items.length === 0 && <p>This album is empty. Add photos with the button above or by dropping them here.</p>}
      <Grid source={model} ids={ids} months={model.months} selecting={selecting} selected={selected} onToggle={toggle} returnTo={returnTo} />
      {/* One view per version: a replace moves the asset to a new feed position, and the view opens the new version. */}
      {assetId !== null && (
        <PhotoView
          key={`${assetId}@${model.positionOf(assetId)}`}
          model={model}
          assetId={assetId}
          onDelete={remove}
          onReplace={replace}
          onChanged={() => void model.refresh()}
        />
      )}
      <UndoToast toast={toast} undo={undo} dismiss={dismiss} />
    </main>
  )
}
