// Choosing an album, one of the account's or a new one named here: the upload's first step
// (UploadChooser.tsx, decision 0058) and where the viewer's "Add to album…" and "Move to
// album…" send a photo (decision 0061).
import { useEffect, useId, useState, type FormEvent, type ReactNode } from 'react'
import { namedAlbums, openAlbum, type Library, type NamedAlbum } from '#photos/albums.ts'
import { ErrorLine, Modal, useAction } from '../../app/ui.tsx'
import { albumMadeHere } from '../../lib/album.ts'

const byName = (a: NamedAlbum, b: NamedAlbum): number => (a.name ?? '\uffff').localeCompare(b.name ?? '\uffff')
const albumNameText = (album: NamedAlbum): string => album.name ?? `Unnamed album (${album.albumId.slice(0, 8)})`

/** What "a new album" is chosen as, among the albums' ids. */
const NEW = 'new'

export interface ChosenAlbum {
  readonly albumId: string
  readonly name: string
}

/**
 * A dialog listing the account's albums (but `exclude`, the photo's own) and "A new album";
 * `onChosen` runs with the album (a new one made first) while the button says `busyLabel`.
 * `footer`: a way out of the choice below it (the upload's Google Takeout import).
 */
export function AlbumChooser({
  library,
  title,
  submitLabel,
  busyLabel,
  exclude,
  footer,
  onChosen,
  onCancel,
}: {
  library: Library
  title: string
  submitLabel: string
  busyLabel: string
  exclude?: string
  footer?: ReactNode
  onChosen: (album: ChosenAlbum) => Promise<void> | void
  onCancel: () => void
}) {
  const [albums, setAlbums] = useState<NamedAlbum[] | null>(null)
  const [choice, setChoice] = useState<string | null>(null)
  const [newName, setNewName] = useState('')
  const load = useAction()
  const make = useAction()
  const nameId = useId()

  const loadRun = load.run
  useEffect(() => {
    void loadRun(async () => {
      const found = (await namedAlbums(library)).filter((album) => album.albumId !== exclude).sort(byName)
      setAlbums(found)
      setChoice((now) => now ?? (found.length === 0 ? NEW : found[0]!.albumId))
    })
  }, [library, loadRun, exclude])

  const submit = (event: FormEvent) => {
    event.preventDefault()
    void make.run(async () => {
      if (choice === NEW) {
        const made = await openAlbum(library, newName)
        if (made.name !== null) albumMadeHere(made.albumId, made.name)
        await onChosen({ albumId: made.albumId, name: made.name ?? newName })
      } else {
        const found = albums?.find((a) => a.albumId === choice)
        if (found !== undefined) await onChosen({ albumId: found.albumId, name: albumNameText(found) })
      }
    })
  }

  return (
    <Modal title={title} onCancel={onCancel}>
      <form className="chooser" onSubmit={submit}>
        <ErrorLine error={load.error} />
        {albums === null && load.error === null && <p role="status">Opening your albums…</p>}
        {albums !== null && (
          <fieldset>
            <legend className="visually-hidden">Album</legend>
            <ul className="album-choices">
              {albums.map((album) => (
                <li key={album.albumId}>
                  <label>
                    <input type="radio" name="album" value={album.albumId} checked={choice === album.albumId} onChange={() => setChoice(album.albumId)} />
                    {albumNameText(album)}
                  </label>
                </li>
              ))}
              <li>
                <label>
                  <input type="radio" name="album" value={NEW} checked={choice === NEW} onChange={() => setChoice(NEW)} />A new album
                </label>
              </li>
            </ul>
            {choice === NEW && (
              <label htmlFor={nameId}>
                Name of the new album
                <input id={nameId} required maxLength={200} value={newName} onChange={(e) => setNewName(e.target.value)} />
              </label>
            )}
          </fieldset>
        )}
        <ErrorLine error={make.error} />
        <div className="actions">
          <button type="button" className="secondary" onClick={onCancel}>
            Cancel
          </button>
          <button type="submit" disabled={albums === null || choice === null || make.busy}>
            {make.busy ? (choice === NEW ? 'Making the album…' : busyLabel) : submitLabel}
          </button>
        </div>
      </form>
      {footer}
    </Modal>
  )
}
