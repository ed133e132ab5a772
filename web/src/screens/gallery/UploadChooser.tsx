// The Photos screen's upload (decision 0058): the album is chosen first, an album of the account
// or a new one named here, then the photos or a folder (or, for files dropped on the screen, they
// go at once). The page then opens that album, whose uploads take the files (lib/upload-handoff.ts)
// and show their progress.
import { useEffect, useId, useState, type FormEvent } from 'react'
import { namedAlbums, openAlbum, type Library, type NamedAlbum } from '#photos/albums.ts'
import { navigate } from '../../app/router.ts'
import { ErrorLine, Modal, useAction } from '../../app/ui.tsx'
import { albumMadeHere } from '../../lib/album.ts'
import type { Picked } from '../../lib/picked.ts'
import { handOver } from '../../lib/upload-handoff.ts'
import { Pickers } from './Pickers.tsx'

type Files = Iterable<Picked> | AsyncIterable<Picked>

const byName = (a: NamedAlbum, b: NamedAlbum): number => (a.name ?? '\uffff').localeCompare(b.name ?? '\uffff')
const nameOf = (album: NamedAlbum): string => album.name ?? `Unnamed album (${album.albumId.slice(0, 8)})`

/** What "a new album" is chosen as, among the albums' ids. */
const NEW = 'new'

/** `dropped`: the files of a drop on the Photos screen, sent to the album once it is chosen; null for the Upload button (the pickers come next). */
export function UploadChooser({ library, dropped, onCancel }: { library: Library; dropped: Files | null; onCancel: () => void }) {
  const [albums, setAlbums] = useState<NamedAlbum[] | null>(null)
  const [choice, setChoice] = useState<string | null>(null)
  const [newName, setNewName] = useState('')
  const [chosen, setChosen] = useState<{ readonly albumId: string; readonly name: string } | null>(null)
  const load = useAction()
  const make = useAction()
  const nameId = useId()

  const loadRun = load.run
  useEffect(() => {
    void loadRun(async () => {
      const found = (await namedAlbums(library)).sort(byName)
      setAlbums(found)
      setChoice((now) => now ?? (found.length === 0 ? NEW : found[0]!.albumId))
    })
  }, [library, loadRun])

  const send = (albumId: string, files: Files) => {
    handOver(albumId, files)
    navigate('albums', albumId)
  }

  const submit = (event: FormEvent) => {
    event.preventDefault()
    void make.run(async () => {
      let album: { albumId: string; name: string }
      if (choice === NEW) {
        const made = await openAlbum(library, newName)
        if (made.name !== null) albumMadeHere(made.albumId, made.name)
        album = { albumId: made.albumId, name: made.name ?? newName }
      } else {
        const found = albums?.find((a) => a.albumId === choice)
        if (found === undefined) return
        album = { albumId: found.albumId, name: nameOf(found) }
      }
      if (dropped !== null) send(album.albumId, dropped)
      else setChosen(album)
    })
  }

  if (chosen !== null)
    return (
      <Modal title={`Add to ${chosen.name}`} onCancel={onCancel}>
        <p>Choose photos, or a folder: every photo and video in it and in its folders goes to {chosen.name}, named by its path in the folder.</p>
        <div className="actions">
          <Pickers onPicked={(files) => send(chosen.albumId, files)} photosLabel="Choose photos" folderLabel="Choose a folder" />
          <button type="button" className="link" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </Modal>
    )

  return (
    <Modal title={dropped === null ? 'Upload to which album?' : 'Upload the dropped files to which album?'} onCancel={onCancel}>
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
                    {nameOf(album)}
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
            {make.busy ? (choice === NEW ? 'Making the album…' : 'Opening it…') : dropped === null ? 'Continue' : 'Upload'}
          </button>
        </div>
      </form>
    </Modal>
  )
}
