// Recently deleted (#/trash; decision 0059): the photos deleted in the last 30 days, each with its
// thumbnail and the days left before the server deletes it for good; Restore and "Delete now"
// per photo, and "Empty trash" after a confirmation. The list is the checked one (lib/trash.ts):
// an entry the account did not sign is said so, and its photo stays in its album.
import { useCallback, useEffect, useMemo, useRef, useState } from 'react'
import type { Library } from '#photos/albums.ts'
import { deleteForGood, restoreFromTrash, type TrashedFile, type TrashList } from '#photos/trash.ts'
import type { CofferClient } from '#sdk/client.ts'
import { Confirm, ErrorLine, Heading } from '../../app/ui.tsx'
import { AlbumModel } from '../../lib/album.ts'
import { countText } from '../../lib/format.ts'
import { libraryOf } from '../../lib/library.ts'
import type { SavedKeys } from '../../lib/store.ts'
import { currentTrash, trashChanged } from '../../lib/trash.ts'

const DAY_MS = 86_400_000

/** "30 days left" (counted in started days), down to "1 day left"; then it goes at the server's next pass. */
function daysLeftText(purgeAt: number, now: number): string {
  const days = Math.ceil((purgeAt - now) / DAY_MS)
  return days < 1 ? 'Deleted for good soon' : `${countText(days, 'day')} left`
}

/** Each album's model, opened once for the thumbnails of its photos in the trash. */
function useAlbums(library: Library): (albumId: string) => Promise<AlbumModel> {
  const models = useRef(new Map<string, Promise<AlbumModel>>())
  useEffect(() => {
    const held = models.current
    return () => {
      for (const model of held.values()) void model.then((m) => m.close())
      held.clear()
    }
  }, [])
  return useCallback(
    (albumId: string) => {
      let model = models.current.get(albumId)
      if (model === undefined) {
        const opened = new AlbumModel(library, albumId)
        model = opened.refresh().then(() => opened)
        models.current.set(albumId, model)
      }
      return model
    },
    [library],
  )
}

function TrashTile({
  file,
  album,
  busy,
  onRestore,
  onDelete,
}: {
  file: TrashedFile
  album: (albumId: string) => Promise<AlbumModel>
  busy: boolean
  onRestore: () => void
  onDelete: () => void
}) {
  const [shown, setShown] = useState<{ name: string; url: string | null } | null>(null)
  useEffect(() => {
    let url: string | null = null
    let gone = false
    void (async () => {
      try {
        const model = await album(file.albumId)
        const asset = await model.opened(file.assetId)
        const thumbnail = await model.derivative(asset, 'thumbnail').catch(() => null)
        if (gone) return
        url = thumbnail === null ? null : URL.createObjectURL(thumbnail)
        setShown({ name: asset.metadata.name, url })
      } catch {
        if (!gone) setShown({ name: 'A photo that does not open', url: null })
      }
    })()
    return () => {
      gone = true
      if (url !== null) URL.revokeObjectURL(url)
    }
  }, [album, file])
  const name = shown?.name ?? 'Loading…'
  return (
    <li className="trash-item">
      <div className="tile trash-thumb">{shown?.url ? <img src={shown.url} alt={name} /> : <span className="tile-placeholder" aria-hidden="true" />}</div>
      <p className="trash-name">{name}</p>
      <p className="muted">{daysLeftText(file.purgeAt, Date.now())}</p>
      <div className="trash-actions">
        <button type="button" className="secondary" disabled={busy} onClick={onRestore} aria-label={`Restore ${name}`}>
          Restore
        </button>
        <button type="button" className="danger" disabled={busy} onClick={onDelete} aria-label={`Delete now: ${name}`}>
          Delete now
        </button>
      </div>
    </li>
  )
}

export function Trash({ client, keys }: { client: CofferClient; keys: SavedKeys }) {
  const library = useMemo(() => libraryOf(client, keys), [client, keys])
  const album = useAlbums(library)
  const [trash, setTrash] = useState<TrashList | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const [confirming, setConfirming] = useState<readonly TrashedFile[] | null>(null)

  const load = useCallback(async () => {
    trashChanged(library)
    try {
      setTrash(await currentTrash(library))
    } catch (failure) {
      setError(failure)
    }
  }, [library])
  useEffect(() => {
    void load()
  }, [load])

  const act = async (work: () => Promise<void>) => {
    setBusy(true)
    setError(null)
    try {
      await work()
    } catch (failure) {
      setError(failure)
    } finally {
      await load()
      setBusy(false)
    }
  }
  const deleteAll = (files: readonly TrashedFile[]) =>
    act(async () => {
      for (const file of files) await deleteForGood(library, file)
    })

  const files = trash?.files ?? []
  return (
    <main className="trash">
      <Heading>Recently deleted</Heading>
      {files.length > 0 && (
        <p className="hint">Photos you delete stay here for 30 days, then they are deleted for good. Until then you can restore them to their album.</p>
      )}
      <ErrorLine error={error} />
      {trash === null && error === null && (
        <p className="loading" role="status">
          Reading Recently deleted…
        </p>
      )}
      {trash !== null && files.length === 0 && <p className="trash-empty">Nothing here. Photos you delete wait here for 30 days before they go for good.</p>}
      {files.length > 0 && (
        <div className="toolbar">
          <span>{countText(files.length, 'photo')}</span>
          <button type="button" className="danger" disabled={busy} onClick={() => setConfirming(files)}>
            Empty trash
          </button>
        </div>
      )}
      {trash !== null && trash.refused.length > 0 && (
        <p className="notice">
          The server lists {countText(trash.refused.length, 'photo')} as deleted without a deletion signed by your account. They are not treated as deleted and
          stay in their albums.
        </p>
      )}
      <ul className="trash-grid">
        {files.map((file) => (
          <TrashTile
            key={file.assetId}
            file={file}
            album={album}
            busy={busy}
            onRestore={() => act(() => restoreFromTrash(library, file.albumId, file.assetId))}
            onDelete={() => setConfirming([file])}
          />
        ))}
      </ul>
      {confirming !== null && (
        <Confirm
          title={confirming.length === 1 ? 'Delete this photo for good?' : `Delete ${countText(confirming.length, 'photo')} for good?`}
          confirmLabel="Delete for good"
          onCancel={() => setConfirming(null)}
          onConfirm={() => {
            const chosen = confirming
            setConfirming(null)
            void deleteAll(chosen)
          }}
        >
          <p>{confirming.length === 1 ? 'It is' : 'They are'} deleted from the server, on every device, and cannot be restored.</p>
        </Confirm>
      )}
    </main>
  )
}
