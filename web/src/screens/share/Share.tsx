// #/share: the photos and videos a phone's share sheet sent to the installed app (the manifest's
// share_target; decision 0057). The service worker holds them in its memory; this screen asks it
// for them, lets the person choose an album (one of theirs, or a new one) and puts them in that
// album's upload queue (lib/uploads.ts), then opens the album, whose upload panel sends them.
import { useEffect, useMemo, useState, type FormEvent } from 'react'
import { namedAlbums, openAlbum, type NamedAlbum } from '#photos/albums.ts'
import type { CofferClient } from '#sdk/client.ts'
import { forgetSharedFiles, sharedFiles } from '../../app/installed.ts'
import { linkTo, navigate } from '../../app/router.ts'
import { ErrorLine, Heading, useAction } from '../../app/ui.tsx'
import { albumMadeHere } from '../../lib/album.ts'
import { countText, sizeText } from '../../lib/format.ts'
import { libraryOf } from '../../lib/library.ts'
import { pickedFiles } from '../../lib/picked.ts'
import type { SavedKeys } from '../../lib/store.ts'
import { handOver } from '../../lib/upload-handoff.ts'

const NEW = 'new'

const byName = (a: NamedAlbum, b: NamedAlbum): number => (a.name ?? '\uffff').localeCompare(b.name ?? '\uffff')

export function Share({ client, keys }: { client: CofferClient; keys: SavedKeys }) {
  const library = useMemo(() => libraryOf(client, keys), [client, keys])
  const [files, setFiles] = useState<File[] | null | undefined>(undefined)
  const [albums, setAlbums] = useState<NamedAlbum[] | null>(null)
  const [choice, setChoice] = useState(NEW)
  const [name, setName] = useState('')
  const load = useAction()
  const add = useAction()

  useEffect(() => {
    let live = true
    void sharedFiles().then((found) => {
      if (live) setFiles(found)
    })
    return () => {
      live = false
    }
  }, [])
  const loadRun = load.run
  useEffect(() => {
    void loadRun(async () => {
      const found = (await namedAlbums(library)).sort(byName)
      setAlbums(found)
      if (found.length > 0) setChoice(found[0]!.albumId)
    })
  }, [library, loadRun])

  const submit = (event: FormEvent) => {
    event.preventDefault()
    if (files === null || files === undefined || files.length === 0) return
    void add.run(async () => {
      let albumId = choice
      if (choice === NEW) {
        const album = await openAlbum(library, name)
        if (album.name !== null) albumMadeHere(album.albumId, album.name)
        albumId = album.albumId
      }
      // Handed to the album's page, which queues them (sealed in IndexedDB) and sends them with
      // its upload panel, as the Photos screen's upload chooser does (lib/upload-handoff.ts).
      handOver(albumId, pickedFiles(files))
      forgetSharedFiles()
      navigate('albums', albumId)
    })
  }
  const cancel = () => {
    forgetSharedFiles()
    navigate('photos')
  }

  return (
    <main className="share">
      <Heading>Add shared photos</Heading>
      {files === undefined && <p role="status">Looking for the shared files…</p>}
      {(files === null || files?.length === 0) && (
        <>
          <p role="status">
            No shared files are waiting here. Files shared to Coffer Photos are kept only in this app's memory, never stored, until you add them: if you shared
            some and see this, the app was closed or restarted meanwhile. Share them again.
          </p>
          <p>
            <a href={linkTo('photos')}>Go to your photos</a>
          </p>
        </>
      )}
      {files !== undefined && files !== null && files.length > 0 && (
        <form onSubmit={submit}>
          <p>{countText(files.length, 'file')} to add, encrypted here before they are sent:</p>
          <ul className="shared-files">
            {files.map((file, index) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: the list never changes while shown, and two shared files may share a name
              <li key={index}>
                <span className="upload-name">{file.name}</span> <span className="hint">{sizeText(file.size)}</span>
              </li>
            ))}
          </ul>
          <ErrorLine error={load.error} />
          <label>
            Album
            <select value={choice} onChange={(event) => setChoice(event.target.value)} disabled={albums === null}>
              {(albums ?? []).map((album) => (
                <option key={album.albumId} value={album.albumId}>
                  {album.name ?? `Unnamed album (${album.albumId.slice(0, 8)})`}
                </option>
              ))}
              <option value={NEW}>A new album…</option>
            </select>
          </label>
          {choice === NEW && (
            <label>
              New album's name
              <input name="album" required maxLength={200} value={name} onChange={(event) => setName(event.target.value)} />
            </label>
          )}
          <div className="actions">
            <button type="submit" disabled={add.busy || albums === null}>
              {add.busy ? 'Adding them…' : `Add ${countText(files.length, 'file')}`}
            </button>
            <button type="button" className="secondary" onClick={cancel} disabled={add.busy}>
              Cancel
            </button>
          </div>
          <ErrorLine error={add.error} />
        </form>
      )}
    </main>
  )
}
