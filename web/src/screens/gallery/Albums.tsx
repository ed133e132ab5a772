// The albums as cards (decision 0060): each album's cover, name, number of photos and the months
// they were taken over. Names and covers are decrypted here from each album's record; the photos
// and their dates come from a Timeline (lib/timeline.ts), which starts from the date index the
// Photos screen keeps and opens only what it lacks, so a second opening decrypts next to nothing.
import { useCallback, useEffect, useMemo, useState, useSyncExternalStore, type FormEvent } from 'react'
import { albumCover, namedAlbums, openAlbum, type NamedAlbum } from '#photos/albums.ts'
import { sharePartnerAlbums } from '#photos/sharing.ts'
import { takenMonthRange } from '#photos/taken.ts'
import { linkTo, navigate } from '../../app/router.ts'
import { ErrorLine, Heading, useAction } from '../../app/ui.tsx'
import { albumMadeHere } from '../../lib/album.ts'
import { browserContacts } from '../../lib/contacts.ts'
import { countText } from '../../lib/format.ts'
import { libraryOf } from '../../lib/library.ts'
import type { SavedKeys } from '../../lib/store.ts'
import { Timeline } from '../../lib/timeline.ts'
import { useTile } from './Grid.tsx'
import { Invitations, ShareEverything, SharedWithYou } from './SharedAlbums.tsx'
import type { CofferClient } from '#sdk/client.ts'

const byName = (a: NamedAlbum, b: NamedAlbum): number => (a.name ?? '\uffff').localeCompare(b.name ?? '\uffff')

export function Albums({ client, keys }: { client: CofferClient; keys: SavedKeys }) {
  const library = useMemo(() => libraryOf(client, keys), [client, keys])
  const [albums, setAlbums] = useState<NamedAlbum[] | null>(null)
  const [timeline, setTimeline] = useState<Timeline | null>(null)
  const [name, setName] = useState('')
  const load = useAction()
  const create = useAction()

  const loadRun = load.run
  useEffect(() => {
    void loadRun(async () => setAlbums((await namedAlbums(library)).sort(byName)))
    const opened = new Timeline(library)
    setTimeline(opened)
    void opened.open()
    return () => opened.close()
  }, [library, loadRun])

  const submit = (event: FormEvent) => {
    event.preventDefault()
    void create.run(async () => {
      const album = await openAlbum(library, name)
      if (album.name !== null) albumMadeHere(album.albumId, album.name)
      // Shared at once with the people this account shares everything with.
      const { refused } = await sharePartnerAlbums({ library, contacts: browserContacts(keys.masterKey) }, [album.albumId])
      if (refused[0] !== undefined) throw refused[0]
      navigate('albums', album.albumId)
    })
  }

  return (
    <main>
      <Heading>Albums</Heading>
      <Invitations client={client} keys={keys} />
      <ErrorLine error={load.error} />
      {albums === null && load.error === null && <p role="status">Opening your albums…</p>}
      {albums !== null && albums.length === 0 && (
        <section className="empty-state" aria-labelledby="no-albums">
          <h2 id="no-albums">Create an album</h2>
          <p>
            An album gathers photos you want to keep together: a trip, a year, a person. Name one below, then add photos to it from this computer or your phone.
            Every photo you back up lives in an album.
          </p>
        </section>
      )}
      {albums !== null && albums.length > 0 && timeline !== null && (
        <ul className="album-cards">
          {albums.map((album) => (
            <AlbumCard key={album.albumId} album={album} timeline={timeline} />
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
      <SharedWithYou client={client} keys={keys} />
      <ShareEverything client={client} keys={keys} />
    </main>
  )
}

function AlbumCard({ album, timeline }: { album: NamedAlbum; timeline: Timeline }) {
  // Drawn again whenever the timeline's order moves (dates read, photos found).
  useSyncExternalStore(
    useCallback((listener) => timeline.subscribe(listener), [timeline]),
    () => timeline.ids,
  )
  const photos = timeline.datedPhotos(album.albumId)
  let oldest = Number.POSITIVE_INFINITY
  let newest = Number.NEGATIVE_INFINITY
  for (const photo of photos) {
    oldest = Math.min(oldest, photo.taken)
    newest = Math.max(newest, photo.taken)
  }
  const cover = albumCover(album.cover, photos)
  const counted = timeline.done ? countText(photos.length, 'photo') : `${countText(photos.length, 'photo')} so far…`
  return (
    <li>
      <a className="album-card" href={linkTo('albums', album.albumId)}>
        {cover === null ? <span className="album-cover" aria-hidden="true" /> : <Cover timeline={timeline} assetId={cover} />}
        <span className="album-name">{album.name ?? `Unnamed album (${album.albumId.slice(0, 8)})`}</span>
        <span className="album-facts">
          {counted}
          {photos.length > 0 && <span className="album-range">{takenMonthRange(oldest, newest)}</span>}
        </span>
      </a>
    </li>
  )
}

function Cover({ timeline, assetId }: { timeline: Timeline; assetId: string }) {
  const tile = useTile(timeline, assetId, false)
  return (
    <span className="album-cover" data-cover={assetId}>
      {tile.kind === 'ready' && tile.thumbnail !== null && <img src={tile.thumbnail} alt="" draggable={false} />}
    </span>
  )
}
