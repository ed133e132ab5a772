// The Albums screen's sharing parts (decision 0067): the invitations waiting for this account
// (who invites it, to view or to add photos; Accept opens the album's keys in this browser,
// checked against the inviter's identity key, and keeps them for the account's other devices;
// Decline drops it), and the albums others shared with it, named by their owner's encrypted
// record, each with who shared it.
import { useCallback, useEffect, useState } from 'react'
import { albumRecordOf } from '#photos/albums.ts'
import { acceptShare, memberLibrary, type Invitation } from '#photos/sharing.ts'
import type { CofferClient } from '#sdk/client.ts'
import { linkTo, navigate } from '../../app/router.ts'
import { ErrorLine, useAction } from '../../app/ui.tsx'
import { memberDevice } from '../../lib/sharing.ts'
import type { SavedKeys } from '../../lib/store.ts'

interface SharedCard {
  readonly albumId: string
  readonly name: string | null
  readonly ownerEmail: string
  readonly role: 'viewer' | 'contributor'
}

const roleText = (role: 'viewer' | 'contributor'): string => (role === 'viewer' ? 'to view' : 'to view and add photos')

/** The invitations waiting for this account: at the top of the Albums screen, where they are answered. */
export function Invitations({ client, keys }: { client: CofferClient; keys: SavedKeys }) {
  const [invitations, setInvitations] = useState<readonly Invitation[] | null>(null)
  const load = useAction()
  const answer = useAction()
  const reload = useCallback(async () => setInvitations((await client.listInvitations()).invitations), [client])
  const loadRun = load.run
  useEffect(() => {
    void loadRun(reload)
  }, [loadRun, reload])

  const accept = (invitation: Invitation) =>
    void answer.run(async () => {
      await acceptShare(memberDevice(client, keys), invitation)
      navigate('albums', invitation.album_id)
    })
  const decline = (invitation: Invitation) =>
    void answer.run(async () => {
      await client.declineInvitation(invitation.album_id)
      await reload()
    })

  if (load.error !== null) return <ErrorLine error={load.error} />
  if (invitations === null || invitations.length === 0) return null
  return (
    <section className="invitations" aria-labelledby="invitations-title">
      <h2 id="invitations-title">Invitations</h2>
      <ul>
        {invitations.map((invitation) => (
          <li key={invitation.album_id} className="invitation">
            <p>
              <strong>{invitation.owner.email}</strong> invites you to an album, {roleText(invitation.role)}.
            </p>
            <div className="actions">
              <button type="button" disabled={answer.busy} onClick={() => accept(invitation)}>
                Accept
              </button>
              <button type="button" className="secondary" disabled={answer.busy} onClick={() => decline(invitation)}>
                Decline
              </button>
            </div>
          </li>
        ))}
      </ul>
      <ErrorLine error={answer.error} />
      <p className="hint">Accepting opens the album’s keys on this device; its name and photos stay encrypted on the server.</p>
    </section>
  )
}

/** The albums others shared with this account, after its own: each by its name (its owner's record, opened here) and who shared it. */
export function SharedWithYou({ client, keys }: { client: CofferClient; keys: SavedKeys }) {
  const [shared, setShared] = useState<readonly SharedCard[] | null>(null)
  const load = useAction()
  const loadRun = load.run
  useEffect(() => {
    void loadRun(async () => {
      const cards: SharedCard[] = []
      for (const album of (await client.listSharedAlbums()).albums) {
        const [members, name] = await Promise.all([
          client.listMembers(album.album_id),
          memberLibrary(memberDevice(client, keys), album.album_id)
            .then((library) => albumRecordOf(library, album.album_id))
            .then((record) => record?.name ?? null)
            .catch(() => null),
        ])
        cards.push({ albumId: album.album_id, name, ownerEmail: members.owner.email, role: album.role })
      }
      setShared(cards)
    })
  }, [client, keys, loadRun])

  if (load.error !== null) return <ErrorLine error={load.error} />
  if (shared === null || shared.length === 0) return null
  return (
    <section aria-labelledby="shared-title">
      <h2 id="shared-title">Shared with you</h2>
      <ul className="album-cards">
        {shared.map((album) => (
          <li key={album.albumId}>
            <a className="album-card" href={linkTo('albums', album.albumId)}>
              <span className="album-cover" aria-hidden="true" />
              <span className="album-name">{album.name ?? `Unnamed album (${album.albumId.slice(0, 8)})`}</span>
              <span className="album-facts">
                Shared by {album.ownerEmail}, {roleText(album.role)}
              </span>
            </a>
          </li>
        ))}
      </ul>
    </section>
  )
}
