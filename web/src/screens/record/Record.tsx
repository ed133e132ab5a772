// #/record: the account's moderation record: whether it is active or suspended, every operator
// action on it or its photos in words, and what each means for the person.
import type { ModerationRecord as Moderation } from '#sdk/client.ts'
import { useSession, useSignedIn } from '../../app/session.tsx'
import { Heading } from '../../app/ui.tsx'
import { whenText } from '../../lib/format.ts'
import { newestFirst } from '../../lib/numbered.ts'

type Event = Moderation['events'][number]

function eventText(event: Event): string {
  const photo = event.asset_id === undefined ? 'a photo' : `the photo ${event.asset_id}`
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

export function ModerationRecord() {
  const { session } = useSignedIn()
  const { watch } = useSession()
  const record = watch.record
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
                    <p className="muted">
                      {whenText(event.at)} · {event.reason === undefined ? 'No reason could be given.' : `Reason: ${event.reason}`}
                    </p>
                  </li>
                ))}
              </ol>
            )}
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
          on your own devices are not affected.
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
