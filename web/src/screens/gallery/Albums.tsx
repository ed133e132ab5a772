// The albums: their names, decrypted here from each album's record, and a form to make one.
import { useEffect, useMemo, useState, type FormEvent } from 'react'
import { namedAlbums, openAlbum, type NamedAlbum } from '#photos/albums.ts'
import { linkTo, navigate } from '../../app/router.ts'
import { ErrorLine, Heading, useAction } from '../../app/ui.tsx'
import { albumMadeHere } from '../../lib/album.ts'
import { libraryOf } from '../../lib/library.ts'
import type { SavedKeys } from '../../lib/store.ts'
import type { CofferClient } from '#sdk/client.ts'

const byName = (a: NamedAlbum, b: NamedAlbum): number => (a.name ?? '\uffff').localeCompare(b.name ?? '\uffff')

export function Albums({ client, keys }: { client: CofferClient; keys: SavedKeys }) {
  const library = useMemo(() => libraryOf(client, keys), [client, keys])
  const [albums, setAlbums] = useState<NamedAlbum[] | null>(null)
  const [name, setName] = useState('')
  const load = useAction()
  const create = useAction()

  const loadRun = load.run
  useEffect(() => {
    void loadRun(async () => setAlbums((await namedAlbums(library)).sort(byName)))
  }, [library, loadRun])

  const submit = (event: FormEvent) => {
    event.preventDefault()
    void create.run(async () => {
      const album = await openAlbum(library, name)
      if (album.name !== null) albumMadeHere(album.albumId, album.name)
      navigate('albums', album.albumId)
    })
  }

  return (
    <main>
      <Heading>Albums</Heading>
      <ErrorLine error={load.error} />
      {albums === null && load.error === null && <p role="status">Opening your albums…</p>}
      {albums !== null && albums.length === 0 && <p>No albums yet. Make one below, then add photos to it.</p>}
      {albums !== null && albums.length > 0 && (
        <ul className="albums">
          {albums.map((album) => (
            <li key={album.albumId}>
              <a href={linkTo('albums', album.albumId)}>{album.name ?? `Unnamed album (${album.albumId.slice(0, 8)})`}</a>
            </li>
          ))}
        </ul>
      )}
      <form className="inline" onSubmit={submit}>
        <label>
          New album
          <input name="album" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <button type="submit" disabled={create.busy}>
          {create.busy ? 'Making it…' : 'Create album'}
        </button>
        <ErrorLine error={create.error} />
      </form>
      <p className="hint">An album's name is encrypted like its photos: the server knows it only by a random id.</p>
    </main>
  )
}
