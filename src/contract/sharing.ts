// Wire shapes of sharing an album (decision 0067; docs/sharing.md): looking an account up,
// invitations, members, and the albums shared with the caller.
import Type from 'typebox'
import { Timestamp, Uuid } from './common.ts'

/** The most an invitation's sealed bytes may be, decoded. */
export const INVITATION_MAX_BYTES = 65_536

export const MemberRole = Type.Union([Type.Literal('viewer'), Type.Literal('contributor')], {
  description: 'viewer: reads the album; contributor: also adds photos (decision 0067)',
})

export const AccountLookupRequest = Type.Object(
  { email: Type.String({ maxLength: 254, description: 'Compared as sign-in compares emails' }) },
  { additionalProperties: false },
)
export const AccountLookupResponse = Type.Object({ user_id: Type.String({ description: 'Fetch its signed device directory with it' }) })

export const InviteRequest = Type.Object(
  {
    user_id: Uuid,
    role: MemberRole,
    invitation: Type.String({
      description: `Standard base64 of what the owner's client seals for the invitee (its album keys, sealed to the invitee's device keys): 1 to ${INVITATION_MAX_BYTES} bytes, stored and handed to the invitee byte for byte`,
    }),
  },
  { additionalProperties: false },
)

const Person = {
  user_id: Type.String(),
  email: Type.String(),
  display_name: Type.Union([Type.String(), Type.Null()]),
}

/** An account as sharing shows it to the others: the album's owner, a member. */
export const AccountView = Type.Object(Person)

export const MemberView = Type.Object({
  ...Person,
  role: MemberRole,
  state: Type.Union([Type.Literal('invited'), Type.Literal('active')], { description: 'invited until the invitee accepts' }),
  invited_at: Timestamp,
  accepted_at: Type.Union([Timestamp, Type.Null()]),
})

export const MembersResponse = Type.Object({
  owner: AccountView,
  members: Type.Array(MemberView, { description: 'In the order they were invited (then by user id); invitees are listed to the owner only' }),
})

export const MemberParams = Type.Object({ album_id: Uuid, user_id: Uuid })

export const InvitationView = Type.Object({
  album_id: Type.String(),
  role: MemberRole,
  invitation: Type.String({ description: 'Standard base64 of the bytes the owner’s client sent' }),
  invited_at: Timestamp,
  owner: AccountView,
})

export const InvitationsResponse = Type.Object({ invitations: Type.Array(InvitationView, { description: 'Oldest first' }) })

export const AcceptedResponse = Type.Object({ album_id: Type.String(), role: MemberRole, accepted_at: Timestamp })

export const SharedAlbumView = Type.Object({
  album_id: Type.String(),
  protocol_version: Type.String(),
  created_at: Timestamp,
  owner_id: Type.String(),
  role: MemberRole,
  joined_at: Timestamp,
})

export const SharedAlbumsResponse = Type.Object({ albums: Type.Array(SharedAlbumView, { description: 'In the order the caller joined them' }) })

const sealedBytes = (what: string) => Type.String({ description: `Standard base64 of ${what}: 1 to ${INVITATION_MAX_BYTES} bytes, opaque to the server` })

export const InvitationReplaceRequest = Type.Object(
  { invitation: sealedBytes('what the owner’s client seals for the member now (a new epoch’s keys, its new devices)') },
  { additionalProperties: false },
)

export const KeyringRequest = Type.Object(
  { keyring: sealedBytes('the member’s own sealing of the album keys it received, under its own master key') },
  { additionalProperties: false },
)

export const MembershipResponse = Type.Object({
  album_id: Type.String(),
  owner_id: Type.String(),
  role: MemberRole,
  invitation: Type.String({ description: 'Standard base64 of the owner’s latest sealing for this member' }),
  keyring: Type.Union([Type.String(), Type.Null()], { description: 'Standard base64 of the member’s keyring, once it stored one' }),
})

/** The most partners an account names. */
export const PARTNERS_MAX = 8

export const PartnerParams = Type.Object({ user_id: Uuid })

export const PartnerRequest = Type.Object({ role: MemberRole }, { additionalProperties: false })

export const PartnerView = Type.Object({ ...Person, role: MemberRole, since: Timestamp })

export const PartnersResponse = Type.Object({
  partners: Type.Array(PartnerView, { description: 'The accounts the caller shares every album with, oldest first' }),
  partner_of: Type.Array(PartnerView, { description: 'The accounts that share every album with the caller, oldest first' }),
})
