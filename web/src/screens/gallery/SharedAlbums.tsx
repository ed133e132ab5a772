// The Albums screen's sharing parts (decision 0067): the invitations waiting for this account
// (who invites it, to view or to add photos; Accept opens the album's keys in this browser,
// checked against the inviter's identity key, and keeps them for the account's other devices;
// Decline drops it), and the albums others shared with it, named by their owner's encrypted
// record, each with who shared it.
import { useCallback, useEffect, useState, type FormEvent } from 'react'
import { albumRecordOf } from '#photos/albums.ts'
import { acceptPartnerShares, acceptShare, addPartner, memberLibrary, sharePartnerAlbums, type Invitation } from '#photos/sharing.ts'
import type { CofferClient, Partners as PartnerLists } from '#sdk/client.ts'
import { linkTo, navigate } from '../../app/router.ts'
import { ErrorLine, useAction } from '../../app/ui.tsx'
import { browserContacts } from '../../lib/contacts.ts'
import { libraryOf } from '../../lib/library.ts'
import { memberDevice, NEW_PHOTOS_COUNTED, newPhotosIn } from '../../lib/sharing.ts'
import { RoleChoice } from './People.tsx'
import type { SavedKeys } from '../../lib/store.ts'

interface SharedCard {
  readonly albumId: string
  readonly name: string | null
  readonly ownerEmail: string
  readonly role: 'viewer' | 'contributor'
  /** Photos others added since this browser last opened it (lib/sharing.ts newPhotosIn). */
  readonly fresh: number
}

const roleText = (role: 'viewer' | 'contributor'): string => (role === 'viewer' ? 'to view' : 'to view and add photos')

/** The invitations waiting for this account: at the top of the Albums screen, where they are answered. */
export function Invitations({ client, keys }: { client: CofferClient; keys: SavedKeys }) {
  const [invitations, setInvitations] = useState<readonly Invitation[] | null>(null)
  const [partners, setPartners] = useState<ReadonlySet<string>>(new Set())
  const load = useAction()
  const answer = useAction()
  const reload = useCallback(async () => {
    const [waiting, named] = await Promise.all([client.listInvitations(), client.listPartners()])
    setPartners(new Set(named.partner_of.map((partner) => partner.user_id)))
    setInvitations(waiting.invitations)
  }, [client])
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
  const fromPartners = invitations?.filter((invitation) => partners.has(invitation.owner.user_id)).length ?? 0
  const acceptPartners = () =>
    void answer.run(async () => {
      await acceptPartnerShares(memberDevice(client, keys))
      location.reload() // the albums shared with you, listed again with the new ones
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
      {fromPartners > 1 && (
        <button type="button" className="secondary" disabled={answer.busy} onClick={acceptPartners}>
          Accept all {fromPartners} from people who share everything with you
        </button>
      )}
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
        const [members, fresh, name] = await Promise.all([
          client.listMembers(album.album_id),
          newPhotosIn(client, keys.masterKey, album.album_id),
          memberLibrary(memberDevice(client, keys), album.album_id)
            .then((library) => albumRecordOf(library, album.album_id))
            .then((record) => record?.name ?? null)
            .catch(() => null),
        ])
        cards.push({ albumId: album.album_id, name, ownerEmail: members.owner.email, role: album.role, fresh })
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
              <span className="album-name">
                {album.name ?? `Unnamed album (${album.albumId.slice(0, 8)})`}
                {album.fresh > 0 && <span className="badge">{album.fresh > NEW_PHOTOS_COUNTED ? `${NEW_PHOTOS_COUNTED}+` : album.fresh} new</span>}
              </span>
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

/** What sharing every album did, in a sentence: the invitations sent, and the albums left alone because the server changed them. */
function shareOutcome(sent: number, refused: number, more: boolean): string {
  const invited = `${sent === 1 ? '1 invitation' : `${sent} invitations`} sent.${more ? ' More follow once they accept some (the server holds only so many unanswered).' : ''}`
  return refused === 0
    ? invited
    : `${invited} ${refused === 1 ? '1 album was' : `${refused} albums were`} not shared: the server changed its history or its members (open it to see).`
}

/**
 * "Share everything": the people this account shares every album with (each album invited as
 * Share does, new albums too: the Albums screen shares any album they are not yet in each time it
 * opens), a form to add one, Stop; and who shares everything with this account.
 */
export function ShareEverything({ client, keys }: { client: CofferClient; keys: SavedKeys }) {
  const [lists, setLists] = useState<PartnerLists | null>(null)
  const [email, setEmail] = useState('')
  const [role, setRole] = useState<'viewer' | 'contributor'>('viewer')
  const [said, setSaid] = useState<string | null>(null)
  const load = useAction()
  const change = useAction()
  const owner = useCallback(() => ({ library: libraryOf(client, keys), contacts: browserContacts(keys.masterKey) }), [client, keys])
  const loadRun = load.run
  useEffect(() => {
    void loadRun(async () => {
      setLists(await client.listPartners())
      // Albums made since on any device of this account: shared with the partners now.
      const { sent, refused, more } = await sharePartnerAlbums(owner())
      if (sent > 0 || refused.length > 0) setSaid(shareOutcome(sent, refused.length, more))
    })
  }, [client, loadRun, owner])

  const submit = (event: FormEvent) => {
    event.preventDefault()
    void change.run(async () => {
      const { sent, refused, more } = await addPartner(owner(), email, role)
      setSaid(`You share every album with ${email} now. ${shareOutcome(sent, refused.length, more)}`)
      setEmail('')
      setLists(await client.listPartners())
    })
  }
  const stop = (userId: string, who: string) =>
    void change.run(async () => {
      await client.removePartner(userId)
      setSaid(`New albums are no longer shared with ${who}. Albums shared with them stay shared until you remove them from each.`)
      setLists(await client.listPartners())
    })

  return (
    <details className="people share-everything">
      <summary>
        {lists === null || lists.partners.length === 0
          ? 'Share everything with someone'
          : `Sharing everything with ${lists.partners.map((p) => p.email).join(', ')}`}
      </summary>
      <ErrorLine error={load.error} />
      {lists !== null && lists.partners.length > 0 && (
        <ul className="people-list">
          {lists.partners.map((partner) => (
            <li key={partner.user_id}>
              <span className="person-email">{partner.email}</span> <span className="person-role">{partner.role}</span>
              <button type="button" className="secondary" disabled={change.busy} onClick={() => stop(partner.user_id, partner.email)}>
                Stop
              </button>
            </li>
          ))}
        </ul>
      )}
      {lists?.partner_of.map((partner) => (
        <p key={partner.user_id}>
          <strong>{partner.email}</strong> shares every album with you.
        </p>
      ))}
      <form className="inline share-form" onSubmit={submit}>
        <label>
          Share every album with
          <input name="partner-email" type="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
        </label>
        <RoleChoice name="partner-role" role={role} onChange={setRole} />
        <button type="submit" disabled={change.busy}>
          {change.busy ? 'Sharing…' : 'Share everything'}
        </button>
      </form>
      <ErrorLine error={change.error} />
      {said !== null && (
        <p className="notice" role="status">
          {said}
        </p>
      )}
      <p className="hint">
        Every album you have and every new one is shared with them, its keys sealed here for their devices. For a partner, a family member.
      </p>
    </details>
  )
}
