// Who an album is shared with (decision 0067), on the album's page, folded under "Share" (or
// "Shared with 2 people", "Shared by …") until opened: for its owner, the members
// and invitations with their role and whether their safety number was compared, a form to invite
// someone by email as a viewer or a contributor, and Remove; for a member, who shared it and who
// else is in it, and Leave. A safety number (60 digits, the same on both people's screens when
// the keys are theirs) is shown for any of them, and "They match" marks the person verified in
// this browser. The album's keys are sealed here for the other person's devices
// (src/client/sharing.ts); the server never reads them.
import { useCallback, useEffect, useMemo, useState, type FormEvent } from 'react'
import { safetyNumber } from '#photos/format/share.ts'
import { contactKey, IdentityKeyChangedError, removeFromAlbum, settleMembership, shareAlbum } from '#photos/sharing.ts'
import type { AlbumMemberRole as MemberRole, AlbumMembers, CofferClient } from '#sdk/client.ts'
import { navigate } from '../../app/router.ts'
import { Confirm, ErrorLine, Modal, useAction } from '../../app/ui.tsx'
import { browserContacts } from '../../lib/contacts.ts'
import { countText } from '../../lib/format.ts'
import type { AlbumAccess } from '../../lib/sharing.ts'
import type { SavedKeys } from '../../lib/store.ts'

interface Person {
  readonly userId: string
  readonly email: string
}

/** The people of the album besides this account, as the server lists them (checked against the owner's signed record by the album's history check). */
function othersOf(members: AlbumMembers, userId: string): Person[] {
  const everyone = [{ userId: members.owner.user_id, email: members.owner.email }, ...members.members.map((m) => ({ userId: m.user_id, email: m.email }))]
  return everyone.filter((person) => person.userId !== userId)
}

export function People({
  client,
  keys,
  access,
  albumId,
  trusted,
}: {
  client: CofferClient
  keys: SavedKeys
  access: AlbumAccess
  albumId: string
  /** The album page's check of the album's history passed: its entries are remembered, so the owner's settling reads them again without verifying each. */
  trusted: boolean
}) {
  const [members, setMembers] = useState(access.members)
  const [verified, setVerified] = useState<ReadonlySet<string>>(new Set())
  const [comparing, setComparing] = useState<Person | null>(null)
  const [leaving, setLeaving] = useState(false)
  const [email, setEmail] = useState('')
  const [role, setRole] = useState<MemberRole>('viewer')
  const invite = useAction()
  const change = useAction()
  // What the page does by itself (the list read, the owner's settling) runs apart from what the
  // person asks for: a click on Remove is never dropped as "already running" behind it.
  const background = useAction()
  const owner = access.role === 'owner'
  const sharing = useMemo(() => ({ library: access.library, contacts: browserContacts(keys.masterKey) }), [access, keys])

  const reload = useCallback(async () => {
    const listed = await client.listMembers(albumId)
    const pins = browserContacts(keys.masterKey)
    const marked = new Set<string>()
    for (const person of othersOf(listed, keys.userId)) if ((await pins.pinned(person.userId))?.verifiedAt != null) marked.add(person.userId)
    setMembers(listed)
    setVerified(marked)
  }, [client, albumId, keys])
  const backgroundRun = background.run
  useEffect(() => {
    void backgroundRun(reload)
  }, [backgroundRun, reload])
  useEffect(() => {
    // Once the album's history checked out, the owner's page takes out of the record anyone who
    // left or declined since (a new key epoch without them); never on a history in doubt.
    if (owner && trusted)
      void backgroundRun(async () => {
        await settleMembership(sharing, albumId)
        await reload()
      })
  }, [owner, trusted, albumId, backgroundRun, reload, sharing])

  const submit = (event: FormEvent) => {
    event.preventDefault()
    void invite.run(async () => {
      await shareAlbum(sharing, albumId, email, role)
      setEmail('')
      await reload()
    })
  }
  const remove = (person: Person) =>
    void change.run(async () => {
      await removeFromAlbum(sharing, albumId, person.userId)
      await reload()
    })
  const leave = () =>
    void change.run(async () => {
      await client.removeMember(albumId, keys.userId)
      navigate('albums')
    })

  const others = othersOf(members, keys.userId)
  const invitedOrIn = members.members.filter((member) => member.user_id !== keys.userId)
  return (
    // Folded by default: the album's photos stay at the top of the page; Share opens it.
    <details className="people">
      <summary>
        {!owner ? `Shared by ${members.owner.email}` : invitedOrIn.length === 0 ? 'Share' : `Shared with ${countText(invitedOrIn.length, 'person', 'people')}`}
      </summary>
      {owner && invitedOrIn.length === 0 && <p>Only you can see this album.</p>}
      {(owner ? invitedOrIn.length > 0 : others.length > 0) && (
        <ul className="people-list">
          {!owner && (
            <li>
              <span className="person-email">{members.owner.email}</span> <span className="person-role">owner</span>
              <PersonActions person={{ userId: members.owner.user_id, email: members.owner.email }} verified={verified} onCompare={setComparing} />
            </li>
          )}
          {invitedOrIn.map((member) => (
            <li key={member.user_id}>
              <span className="person-email">{member.email}</span>{' '}
              <span className="person-role">
                {member.role}
                {member.state === 'invited' ? ', invited' : ''}
              </span>
              <PersonActions person={{ userId: member.user_id, email: member.email }} verified={verified} onCompare={setComparing} />
              {owner && (
                <button
                  type="button"
                  className="secondary"
                  disabled={change.busy || background.busy}
                  onClick={() => remove({ userId: member.user_id, email: member.email })}
                >
                  {member.state === 'invited' ? 'Take back' : 'Remove'}
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      <ErrorLine error={change.error ?? background.error} />
      {owner ? (
        <form className="inline share-form" onSubmit={submit}>
          <label>
            Invite by email
            <input name="share-email" type="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
          </label>
          <RoleChoice name="share-role" role={role} onChange={setRole} />
          <button type="submit" disabled={invite.busy}>
            {invite.busy ? 'Inviting…' : 'Invite'}
          </button>
          <ErrorLine error={invite.error} />
        </form>
      ) : (
        <button type="button" className="secondary" onClick={() => setLeaving(true)}>
          Leave album
        </button>
      )}
      <p className="hint">
        The album’s keys are sealed on this device for each person’s devices: the server cannot open them. Compare safety numbers to know a key is really
        theirs.
      </p>
      {comparing !== null && (
        <SafetyNumber
          client={client}
          keys={keys}
          identityPublicKey={access.library.identityPublicKey}
          person={comparing}
          onDone={() => {
            setComparing(null)
            void reload()
          }}
        />
      )}
      {leaving && (
        <Confirm title="Leave this album?" confirmLabel="Leave" onConfirm={leave} onCancel={() => setLeaving(false)}>
          <p>You will no longer see its photos, on any of your devices. Its owner can invite you again.</p>
        </Confirm>
      )}
    </details>
  )
}

/** The role someone is invited in: a viewer sees the photos, a contributor adds photos too. */
export function RoleChoice({ name, role, onChange }: { name: string; role: MemberRole; onChange: (role: MemberRole) => void }) {
  return (
    <label>
      as
      <select name={name} value={role} onChange={(e) => onChange(e.target.value === 'contributor' ? 'contributor' : 'viewer')}>
        <option value="viewer">viewer (sees the photos)</option>
        <option value="contributor">contributor (adds photos too)</option>
      </select>
    </label>
  )
}

function PersonActions({ person, verified, onCompare }: { person: Person; verified: ReadonlySet<string>; onCompare: (person: Person) => void }) {
  return (
    <>
      {verified.has(person.userId) && <span className="verified">verified</span>}
      <button type="button" className="link" onClick={() => onCompare(person)}>
        Safety number
      </button>
    </>
  )
}

/** The safety number of this account and `person`'s, with "They match" (pins and marks their key verified here). */
function SafetyNumber({
  client,
  keys,
  identityPublicKey,
  person,
  onDone,
}: {
  client: CofferClient
  keys: SavedKeys
  identityPublicKey: Uint8Array
  person: Person
  onDone: () => void
}) {
  const [shown, setShown] = useState<{ number: string; key: Uint8Array; changed: boolean } | null>(null)
  const load = useAction()
  const confirm = useAction()
  const loadRun = load.run
  useEffect(() => {
    void loadRun(async () => {
      let key: Uint8Array
      let changed = false
      try {
        key = (await contactKey(client, browserContacts(keys.masterKey), person.userId)).identityKey
      } catch (error) {
        if (!(error instanceof IdentityKeyChangedError)) throw error
        key = error.presented
        changed = true
      }
      setShown({ number: safetyNumber({ userId: keys.userId, identityKey: identityPublicKey }, { userId: person.userId, identityKey: key }), key, changed })
    })
  }, [client, keys, identityPublicKey, person, loadRun])
  const match = () =>
    void confirm.run(async () => {
      if (shown === null) return
      const contacts = browserContacts(keys.masterKey)
      await contacts.pin(person.userId, shown.key)
      await contacts.markVerified(person.userId, shown.key, Date.now())
      onDone()
    })
  const groups = shown?.number.split(' ') ?? []
  return (
    <Modal title={`Safety number with ${person.email}`} onCancel={onDone}>
      <ErrorLine error={load.error} />
      {shown === null && load.error === null && <p role="status">Working it out…</p>}
      {shown !== null && (
        <>
          {shown.changed && (
            <p className="error" role="alert">
              {person.email}’s identity key is not the one this browser saw before. Only trust the new one if this number matches theirs.
            </p>
          )}
          <p className="safety-number" data-number={shown.number}>
            {groups.map((group, at) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: the twelve groups are a fixed sequence
              <span key={at}>{group}</span>
            ))}
          </p>
          <p>
            Ask {person.email} to open this album’s people on their device and show the safety number with you: compare it in person or on a call you trust. The
            same digits mean the keys are really yours and theirs.
          </p>
        </>
      )}
      <ErrorLine error={confirm.error} />
      <div className="actions">
        <button type="button" className="secondary" onClick={onDone}>
          Close
        </button>
        <button type="button" disabled={shown === null || confirm.busy} onClick={match}>
          They match
        </button>
      </div>
    </Modal>
  )
}
