// `coffer-photos share`, `invites`, `members`, `leave` and `safety-number`: sharing an album with
// another account (docs/photos.md, "Sharing an album"; decision 0067). The album's keys are
// sealed here for the other account's devices, under the identity key this device pinned for it
// (client/sharing.ts); a key that changed stops the command (exit 7) until the two people compare
// safety numbers and `safety-number --confirm` pins the new one.
import { safetyNumber } from '../../client/format/share.ts'
import {
  acceptPartnerShares,
  acceptShare,
  addPartner,
  contactKey,
  IdentityKeyChangedError,
  removeFromAlbum,
  settleMembership,
  shareAlbum,
} from '../../client/sharing.ts'
import { fromBase64 } from '../../sdk/bytes.ts'
import { commandClientOptions, openAccount } from './account.ts'
import { EXIT, SetupNeeded, UsageError, type Command, type ExitCode, type Invocation } from './command.ts'
import { albumByName, contactsOf, libraryOf, namedAlbum } from './library.ts'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

function albumIdArgument(given: string | undefined, what: string): string {
  if (given === undefined || !UUID.test(given)) throw new UsageError(`${what} takes the album's id, as \`coffer-photos invites\` lists it`)
  return given
}

/** The sentence for an identity key that is not the pinned one: what to do, exit 7. */
export function changedKey(out: Invocation['out'], email: string, error: IdentityKeyChangedError): ExitCode {
  out.warn(
    `coffer-photos: the server is not trustworthy, or ${email} set their account up again: their identity key is not the one this device pinned. Compare safety numbers with them in person (\`coffer-photos safety-number ${email}\`) and only if they match run \`coffer-photos safety-number ${email} --confirm\``,
  )
  out.event('identity_key_changed', { user_id: error.userId })
  return EXIT.untrusted
}

export const share: Command = {
  usage: `usage: coffer-photos share <album> <email> [--contributor] [--json]

  Invites the account with this email into one of your albums: a viewer sees its photos, a
  contributor (--contributor) adds photos too. The album's keys are sealed here for the devices
  of that account, so the server cannot read them; they accept with \`coffer-photos invites accept\`.
  The first share with an account pins its identity key: compare safety numbers with them
  (\`coffer-photos safety-number <email>\`) to know it is theirs. Exit 7 when its key changed.

  --contributor   they may add photos (and delete the ones they added)
  --json          the result as one JSON line`,
  options: { contributor: { type: 'boolean' } },
  async run({ positionals, values, out, signal, home }) {
    const [albumName, email] = positionals
    if (positionals.length !== 2 || email === undefined) throw new UsageError('share takes an album name and an email address')
    const account = await openAccount(home, commandClientOptions(out, signal))
    const library = libraryOf(account)
    const album = await namedAlbum(library, albumName)
    const role = values.contributor === true ? 'contributor' : 'viewer'
    const contacts = contactsOf(account)
    try {
      const invited = await shareAlbum({ library, contacts }, album.albumId, email, role)
      out.say(`Invited ${email} to "${album.name}" as a ${role}: they accept with \`coffer-photos invites accept ${album.albumId}\`.`)
      const pinned = await contacts.pinned(invited.user_id)
      if (pinned?.verifiedAt === null)
        out.say(`You have not compared safety numbers with ${email} yet: \`coffer-photos safety-number ${email}\` shows the one to compare.`)
      out.event('invited', { album_id: album.albumId, user_id: invited.user_id, email, role })
      return EXIT.ok
    } catch (error) {
      if (error instanceof IdentityKeyChangedError) return changedKey(out, email, error)
      throw error
    }
  },
}

export const invites: Command = {
  usage: `usage: coffer-photos invites [--json]
       coffer-photos invites accept <album-id> [--json]
       coffer-photos invites accept --partners [--json]
       coffer-photos invites decline <album-id> [--json]

  The albums others invited this account into, and who invited it. \`accept\` opens the album's
  keys on this device (checked against the inviter's pinned identity key: exit 7 when it changed,
  and a share the server altered is refused) and keeps them for your other devices; \`decline\`
  drops the invitation. \`accept --partners\` accepts every invitation from someone who shares
  all their albums with you (\`coffer-photos partner\` lists them).

  --partners   with accept: every invitation from a partner
  --json       one JSON object per line: invitation (one per album), accepted, declined`,
  options: { partners: { type: 'boolean' } },
  async run({ positionals, values, out, signal, home }) {
    const [action, given] = positionals
    if (action !== undefined && action !== 'accept' && action !== 'decline') throw new UsageError('invites takes nothing, accept or decline')
    const account = await openAccount(home, commandClientOptions(out, signal))
    if (values.partners === true) {
      if (action !== 'accept' || given !== undefined) throw new UsageError('--partners goes with `invites accept` and no album id')
      const keys = home.readKeys()
      if (keys === null) throw new SetupNeeded(`this device is not set up for ${account.email}: run \`coffer-photos setup\` or \`join\` first`)
      let accepted: string[]
      try {
        accepted = await acceptPartnerShares({ library: libraryOf(account), contacts: contactsOf(account), xwingSecret: fromBase64(keys.xwing_seed) })
      } catch (error) {
        if (error instanceof IdentityKeyChangedError) return changedKey(out, error.userId, error)
        throw error
      }
      out.say(
        accepted.length === 0
          ? 'No invitation from a partner is waiting.'
          : `Accepted ${accepted.length} album${accepted.length === 1 ? '' : 's'} from your partners.`,
      )
      for (const albumId of accepted) out.event('accepted', { album_id: albumId })
      return EXIT.ok
    }
    const { invitations } = await account.client.listInvitations()
    if (action === undefined) {
      if (positionals.length > 0) throw new UsageError('invites takes no arguments')
      if (invitations.length === 0) out.say('No invitations are waiting.')
      for (const invitation of invitations) {
        out.say(`${invitation.album_id}  from ${invitation.owner.email}  as a ${invitation.role}  (${invitation.invited_at})`)
        out.event('invitation', {
          album_id: invitation.album_id,
          owner_email: invitation.owner.email,
          role: invitation.role,
          invited_at: invitation.invited_at,
        })
      }
      return EXIT.ok
    }
    const albumId = albumIdArgument(given, `invites ${action}`)
    const invitation = invitations.find((waiting) => waiting.album_id === albumId)
    if (invitation === undefined) throw new UsageError(`no invitation to album ${albumId} is waiting (\`coffer-photos invites\` lists them)`)
    if (action === 'decline') {
      await account.client.declineInvitation(albumId)
      out.say(`Declined the invitation from ${invitation.owner.email}.`)
      out.event('declined', { album_id: albumId })
      return EXIT.ok
    }
    const keys = home.readKeys()
    if (keys === null) throw new SetupNeeded(`this device is not set up for ${account.email}: run \`coffer-photos setup\` or \`join\` first`)
    try {
      await acceptShare({ library: libraryOf(account), contacts: contactsOf(account), xwingSecret: fromBase64(keys.xwing_seed) }, invitation)
    } catch (error) {
      if (error instanceof IdentityKeyChangedError) return changedKey(out, invitation.owner.email, error)
      throw error
    }
    out.say(`Accepted: album ${albumId} from ${invitation.owner.email}, as a ${invitation.role}. Its keys are kept for your other devices too.`)
    out.event('accepted', { album_id: albumId, role: invitation.role })
    return EXIT.ok
  },
}

export const members: Command = {
  usage: `usage: coffer-photos members <album> [--json]

  Who an album is shared with (one of yours, or one shared with you): each member's email, role,
  whether they accepted, and whether you compared safety numbers with them (verified). The list
  is held to the membership the album's owner signed into its history: exit 7 when the server
  lists anyone, any role or any key the owner did not record. On your own album, members who left
  or declined are taken out of that record, and the album's key moves on without them.

  --json   one JSON object per line: member`,
  options: {},
  async run({ positionals, out, signal, home }) {
    if (positionals.length !== 1) throw new UsageError('members takes an album name')
    const account = await openAccount(home, commandClientOptions(out, signal))
    const { album, library } = await albumByName(account, positionals[0])
    const contacts = contactsOf(account)
    try {
      if (library.ownerId === account.userId) await settleMembership({ library, contacts }, album.albumId)
      else await library.history.check(album.albumId, album.name)
    } catch (error) {
      if (error instanceof IdentityKeyChangedError) return changedKey(out, error.userId, error)
      throw error
    }
    const listed = await account.client.listMembers(album.albumId)
    if (listed.members.length === 0) out.say(`"${album.name}" is shared with nobody.`)
    if (listed.owner.user_id !== account.userId) {
      // An album shared with this account: its owner first.
      const verified = (await contacts.pinned(listed.owner.user_id))?.verifiedAt != null
      out.say(`${listed.owner.email}  owner${verified ? '  verified' : ''}`)
      out.event('owner', { user_id: listed.owner.user_id, email: listed.owner.email, verified })
    }
    for (const member of listed.members) {
      const verified = (await contacts.pinned(member.user_id))?.verifiedAt != null
      out.say(`${member.email}  ${member.role}  ${member.state === 'active' ? 'member' : 'invited'}${verified ? '  verified' : ''}`)
      out.event('member', { user_id: member.user_id, email: member.email, role: member.role, state: member.state, verified })
    }
    return EXIT.ok
  },
}

export const leave: Command = {
  usage: `usage: coffer-photos leave <album-id> [--json]

  Leaves an album shared with this account: from then on it reads nothing of it.

  --json   the result as one JSON line`,
  options: {},
  async run({ positionals, out, signal, home }) {
    if (positionals.length !== 1) throw new UsageError('leave takes the album id')
    const albumId = albumIdArgument(positionals[0], 'leave')
    const account = await openAccount(home, commandClientOptions(out, signal))
    await account.client.removeMember(albumId, account.userId)
    out.say(`Left album ${albumId}.`)
    out.event('left', { album_id: albumId })
    return EXIT.ok
  },
}

export const unshare: Command = {
  usage: `usage: coffer-photos unshare <album> <email> [--json]

  Stops sharing one of your albums with someone: a member is removed, an invitation not yet
  answered is taken back. From then on they read nothing of the album, on every device.

  --json   the result as one JSON line`,
  options: {},
  async run({ positionals, out, signal, home }) {
    const [albumName, email] = positionals
    if (positionals.length !== 2 || email === undefined) throw new UsageError('unshare takes an album name and an email address')
    const account = await openAccount(home, commandClientOptions(out, signal))
    const library = libraryOf(account)
    const album = await namedAlbum(library, albumName)
    const member = (await account.client.listMembers(album.albumId)).members.find((listed) => listed.email.toLowerCase() === email.trim().toLowerCase())
    if (member === undefined) throw new UsageError(`"${album.name}" is not shared with ${email} (\`coffer-photos members ${album.name}\` lists who it is)`)
    try {
      await removeFromAlbum({ library, contacts: contactsOf(account) }, album.albumId, member.user_id)
    } catch (error) {
      if (error instanceof IdentityKeyChangedError) return changedKey(out, error.userId, error)
      throw error
    }
    out.say(`"${album.name}" is no longer shared with ${email}.`)
    out.event('unshared', { album_id: album.albumId, user_id: member.user_id, email })
    return EXIT.ok
  },
}

export const partner: Command = {
  usage: `usage: coffer-photos partner [--json]
       coffer-photos partner <email> [--contributor] [--json]
       coffer-photos partner --stop <email> [--json]

  Shares every album of yours with someone, the new ones too ("share everything with my
  partner"): each album is shared as \`share\` does (its keys sealed here for their devices), now
  for the albums you have, and by \`backup\` for each album it makes. Run it again to share
  albums another device of yours made meanwhile. They accept with \`coffer-photos invites accept
  --partners\`. Without an email: who you share everything with, and who shares everything with
  you. --stop: new albums are no longer shared with them (those shared stay: \`unshare\` each).

  --contributor   they may add photos too
  --stop          stop sharing new albums with them
  --json          one JSON object per line: partner, partner_of, shared`,
  options: { contributor: { type: 'boolean' }, stop: { type: 'boolean' } },
  async run({ positionals, values, out, signal, home }) {
    const [email] = positionals
    if (positionals.length > 1) throw new UsageError('partner takes at most one email address')
    const account = await openAccount(home, commandClientOptions(out, signal))
    const owner = { library: libraryOf(account), contacts: contactsOf(account) }
    if (email === undefined) {
      if (values.stop === true) throw new UsageError('partner --stop takes the email address of a partner')
      const { partners, partner_of: partnerOf } = await account.client.listPartners()
      if (partners.length === 0 && partnerOf.length === 0) out.say('You share everything with nobody, and nobody shares everything with you.')
      for (const named of partners) {
        out.say(`You share every album with ${named.email} (as a ${named.role}).`)
        out.event('partner', { user_id: named.user_id, email: named.email, role: named.role })
      }
      for (const named of partnerOf) {
        out.say(`${named.email} shares every album with you (as a ${named.role}).`)
        out.event('partner_of', { user_id: named.user_id, email: named.email, role: named.role })
      }
      return EXIT.ok
    }
    try {
      if (values.stop === true) {
        await account.client.removePartner(await account.client.lookupAccount(email))
        out.say(`New albums are no longer shared with ${email}; those shared stay shared (\`coffer-photos unshare <album> ${email}\`).`)
        out.event('stopped', { email })
        return EXIT.ok
      }
      const role = values.contributor === true ? 'contributor' : 'viewer'
      const { userId, sent, refused, more } = await addPartner(owner, email, role)
      out.say(`You share every album with ${email} as a ${role}: ${sent} invitation${sent === 1 ? '' : 's'} sent now, and each new album will be shared too.`)
      if (more) out.say(`More albums wait: the server holds at most so many unanswered invitations. Once ${email} accepts, run this again.`)
      for (const album of refused) out.warn(`coffer-photos: not shared: ${album.message}`)
      out.event('shared', { user_id: userId, email, role, invitations: sent, refused: refused.map((album) => album.albumId), more })
      return refused.length === 0 ? EXIT.ok : EXIT.untrusted
    } catch (error) {
      if (error instanceof IdentityKeyChangedError) return changedKey(out, email, error)
      throw error
    }
  },
}

export const safetyNumberCommand: Command = {
  usage: `usage: coffer-photos safety-number <email> [--confirm] [--json]

  The 60-digit safety number of your account and theirs. Compare it with the one their device
  shows, in person or on a call you trust: the same number means the identity key this device
  pinned for them is theirs. --confirm, once it matches: marks them verified, and pins their
  current key if it changed (only then do shares with them go on).

  --confirm   the numbers match: trust this key
  --json      the number as one JSON line`,
  options: { confirm: { type: 'boolean' } },
  async run({ positionals, values, out, signal, home }) {
    const [email] = positionals
    if (positionals.length !== 1 || email === undefined) throw new UsageError('safety-number takes an email address')
    const account = await openAccount(home, commandClientOptions(out, signal))
    const library = libraryOf(account)
    const contacts = contactsOf(account)
    const userId = await account.client.lookupAccount(email)
    let identityKey: Uint8Array
    try {
      identityKey = (await contactKey(account.client, contacts, userId)).identityKey
    } catch (error) {
      if (!(error instanceof IdentityKeyChangedError)) throw error
      identityKey = error.presented
      if (values.confirm !== true) out.warn(`coffer-photos: ${email}'s identity key is not the one this device pinned: compare this number before trusting it`)
    }
    const number = safetyNumber({ userId: account.userId, identityKey: library.identityPublicKey }, { userId, identityKey })
    out.say(number)
    if (values.confirm === true) {
      await contacts.pin(userId, identityKey)
      await contacts.markVerified(userId, identityKey, Date.now())
      out.say(`${email} is verified on this device.`)
    }
    out.event('safety_number', { email, user_id: userId, safety_number: number, verified: values.confirm === true })
    return EXIT.ok
  },
}
