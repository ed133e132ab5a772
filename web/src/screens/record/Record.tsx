// #/record: the account's moderation record: whether it is active or suspended, every operator
// action on it or its photos in words, and what each means for the person. A photo it names is
// shown by its name and thumbnail, found in the albums and opened here (lib/record-photos.ts);
// while it is taken down, by those this browser kept when it last opened it, if it did.
import { useEffect, useMemo, useState } from 'react'
import type { ModerationRecord as Moderation } from '#sdk/client.ts'
import { linkTo } from '../../app/router.ts'
import { useSession, useSignedIn } from '../../app/session.tsx'
import { Heading, LoadStatus, useLoaded, type Loaded } from '../../app/ui.tsx'
import { whenText } from '../../lib/format.ts'
import { libraryOf } from '../../lib/library.ts'
import { newestFirst } from '../../lib/numbered.ts'
import { recordPhotos, type RecordPhoto } from '../../lib/record-photos.ts'

type Event = Moderation['events'][number]

function eventText(event: Event): string {
  const photo = event.asset_id === undefined ? 'a photo' : 'this photo'
  switch (event.action) {
    case 'suspended':
      return 'The operator suspended your account.'
    case 'reinstated':
      return 'The operator reinstated your account: it works fully again.'
    case 'second_factor_reset':
      return 'The operator removed your second factor and signed out every device: you sign in with your password alone until you set a new one up.'
    case 'account_deleted':
      // A deleted account cannot sign in to read this; the case is here for completeness.
      return 'Your account was deleted.'
    case 'taken_down':
      return `The operator took down ${photo}: it can no longer be downloaded or shown.`
    case 'restored':
      return `The operator restored ${photo}: it can be downloaded and shown again.`
    case 'legal_hold':
      return `The operator put ${photo} under a legal hold: the server keeps it, even if you delete it.`
    case 'hold_lifted':
      return `The operator lifted the legal hold on ${photo}.`
  }
}

/** A thumbnail's object URL while shown. */
function Thumbnail({ blob }: { blob: Blob }) {
  const [url, setUrl] = useState<string | null>(null)
  useEffect(() => {
    const made = URL.createObjectURL(blob)
    setUrl(made)
    return () => URL.revokeObjectURL(made)
  }, [blob])
  return url === null ? null : <img className="record-thumbnail" src={url} alt="" />
}

const inAlbum = (albumName: string | null): string => (albumName === null ? 'in an album with no name' : `in the album “${albumName}”`)

/** Which photo an event names: its thumbnail and name, or in words why they cannot be shown. */
function PhotoOfEvent({ photo, assetId }: { photo: RecordPhoto | undefined; assetId: string }) {
  const id = <span className="muted">(asset {assetId})</span>
  if (photo === undefined) return null // loading, or it failed: LoadStatus says which
  switch (photo.kind) {
    case 'opened':
      return (
        <p className="record-photo">
          {photo.thumbnail !== null && <Thumbnail blob={photo.thumbnail} />}
          <span>
            <strong>{photo.name}</strong> {inAlbum(photo.albumName)} {id}
          </span>
        </p>
      )
    case 'remembered':
      return (
        <p className="record-photo">
          {photo.thumbnail !== null && <Thumbnail blob={photo.thumbnail} />}
          <span>
            <strong>{photo.name}</strong> {inAlbum(photo.albumName)} {id}
            <br />
            <span className="muted">Taken down: its files are withheld; shown from what this browser kept.</span>
          </span>
        </p>
      )
    case 'withheld':
      return (
        <p>
          A photo {inAlbum(photo.albumName)}. Its name and thumbnail cannot be shown: while it is taken down, the server hands out none of its files, to this
          device either. {id}
        </p>
      )
    case 'failed':
      return (
        <p>
          A photo {inAlbum(photo.albumName)}, which did not open here (its files are missing or damaged). {id}
        </p>
      )
    case 'missing':
      return <p>This photo is not in any of your albums now (it was deleted), so its name cannot be shown. {id}</p>
  }
}

/** The photos the record names, found and opened here; none when this browser holds no keys to open them with. */
function useRecordPhotos(record: Moderation | null): Loaded<Map<string, RecordPhoto>> | null {
  const { client, keys } = useSignedIn()
  const ids = useMemo(() => [...new Set(record?.events.flatMap((event) => (event.asset_id === undefined ? [] : [event.asset_id])) ?? [])].sort(), [record])
  const key = ids.join(' ')
  // Read again when the record gains an event (a photo restored opens again).
  const events = record?.events.length ?? 0
  const photos = useLoaded(
    async () => (keys === null || key === '' ? new Map<string, RecordPhoto>() : recordPhotos(libraryOf(client, keys), key.split(' '))),
    [client, keys, key, events],
  )
  return keys === null ? null : photos
}

export function ModerationRecord() {
  const { session } = useSignedIn()
  const { watch } = useSession()
  const record = watch.record
  const photos = useRecordPhotos(record)
  return (
    <main className="sections">
      <Heading>Moderation record</Heading>
      {record === null ? (
        <p className="muted">Loading your record…</p>
      ) : (
        <>
          <section aria-labelledby="standing-title">
            <h2 id="standing-title">Your account</h2>
            {record.standing === 'active' ? (
              <p>
                <span className="ok">Active.</span> Nothing limits what you can do.
              </p>
            ) : (
              <p className="warning">Suspended{record.suspended_since === undefined ? '' : ` since ${whenText(record.suspended_since)}`}.</p>
            )}
          </section>
          <section aria-labelledby="events-title">
            <h2 id="events-title">What the operator did</h2>
            {record.events.length === 0 ? (
              <p>Nothing: the operator has taken no action on your account or your photos.</p>
            ) : (
              <ol className="cards">
                {newestFirst(record.events).map(({ entry: event, number }) => (
                  <li key={number}>
                    <p className="title">{eventText(event)}</p>
                    {event.asset_id !== undefined &&
                      (photos === null ? (
                        <p className="muted">
                          Photo {event.asset_id}: this browser is not a device of your account, so it cannot open the photo to show its name.{' '}
                          <a href={linkTo('albums')}>Set it up as one</a>.
                        </p>
                      ) : (
                        <PhotoOfEvent photo={photos.value?.get(event.asset_id)} assetId={event.asset_id} />
                      ))}
                    <p className="muted">
                      {whenText(event.at)} · {event.reason === undefined ? 'No reason could be given.' : `Reason: ${event.reason}`}
                    </p>
                  </li>
                ))}
              </ol>
            )}
            {photos !== null && <LoadStatus loaded={photos} what="the photos it names, from your albums" />}
            <button type="button" className="secondary" onClick={watch.refresh}>
              Check again
            </button>
          </section>
        </>
      )}
      <section aria-labelledby="meaning-title">
        <h2 id="meaning-title">What these mean</h2>
        <h3>A suspension</h3>
        <p>
          You can still sign in, see your albums, open and download your photos, check their custody, and manage your sessions and password. You cannot add,
          replace or delete photos, create albums, or add a device until the operator reinstates the account. Your photos stay encrypted: the operator cannot
          read them.
        </p>
        <h3>A takedown</h3>
        <p>
          The photo stays in your album, but the server no longer hands out its bytes: it cannot be shown or downloaded, here or on any device. Copies you keep
          on your own devices are not affected. This page can still show its name and thumbnail if this browser showed the photo before: it keeps those of the
          photos it shows, encrypted, until you sign out.
        </p>
        <h3>A legal hold</h3>
        <p>The server keeps every copy of the photo, even after you delete it, until the hold is lifted. Nothing changes in what you see.</p>
        <h3>Disagree, or want to know more?</h3>
        <p>
          Contact the operator of this server (whoever gave you its address) and give them your account id <code>{session.userId}</code> and the date of the
          action.
        </p>
      </section>
    </main>
  )
}
