// Sharing an album (decision 0067; docs/sharing.md): looking an account up, invitations, members,
// and the albums shared with the caller.
import type { Static } from 'typebox'
import { AlbumIdParams } from '../../contract/albums.ts'
import { NoContent, timestamp } from '../../contract/common.ts'
import {
  AcceptedResponse,
  AccountLookupRequest,
  AccountLookupResponse,
  INVITATION_MAX_BYTES,
  InvitationsResponse,
  InvitationReplaceRequest,
  InviteRequest,
  KeyringRequest,
  MemberParams,
  MembershipResponse,
  MembersResponse,
  MemberView,
  PartnerParams,
  PartnerRequest,
  PartnersResponse,
  PartnerView,
  SharedAlbumsResponse,
} from '../../contract/sharing.ts'
import type { Deps } from '../../deps.ts'
import { requireCaller } from '../../http/bearer.ts'
import { JSON_MEDIA, noContent, operation, type App } from '../../http/route.ts'
import type { ListedMember, Partner } from '../../storage/port/members.ts'
import { sealedBytes } from '../lifecycle/envelope.ts'
import {
  acceptInvitation,
  albumMembers,
  declineInvitation,
  inviteMember,
  listPartners,
  lookupAccount,
  ownMembership,
  pendingInvitations,
  removeMember,
  removePartner,
  replaceInvitation,
  setPartner,
  sharedAlbums,
  storeKeyring,
  type Person,
} from './sharing.service.ts'

const tags = ['Sharing']

const personView = (person: Person) => ({ user_id: person.userId, email: person.email, display_name: person.displayName })

function memberView(member: ListedMember): Static<typeof MemberView> {
  return {
    ...personView(member),
    role: member.role,
    state: member.state,
    invited_at: timestamp(member.createdAt),
    accepted_at: member.acceptedAt === null ? null : timestamp(member.acceptedAt),
  }
}

const partnerView = (partner: Partner): Static<typeof PartnerView> => ({ ...personView(partner), role: partner.role, since: timestamp(partner.since) })

export function sharingRoutes(app: App, deps: Deps): void {
  app.route({
    method: 'POST',
    url: '/v1/accounts/lookup',
    ...operation({
      operationId: 'lookupAccount',
      summary: 'The user id of the account with an email, to invite it',
      description:
        'Every lookup counts against the caller’s ACCOUNT_LOOKUP_MAX per ACCOUNT_LOOKUP_WINDOW_S (429 past it, with Retry-After). With the user id, fetch the account’s signed device directory and seal the album’s keys to its devices before inviting it.',
      tags,
      auth: 'bearer',
      accepts: JSON_MEDIA,
      body: AccountLookupRequest,
      responses: { 200: AccountLookupResponse },
      described: { 200: 'The account with that email' },
      errors: ['error.not_found', 'error.rate_limited'],
    }),
    handler: async (request) => ({ user_id: await lookupAccount(deps, requireCaller(request), request.body.email) }),
  })

  app.route({
    method: 'POST',
    url: '/v1/albums/:album_id/members',
    ...operation({
      operationId: 'inviteMember',
      summary: 'Invite an account into the caller’s album, as a viewer or a contributor',
      description:
        'The owner only (anyone else: 404, as for an unknown album). The invitee must have a device directory (409 error.directory.required); `invitation` is what the owner’s client sealed for it, kept and handed to the invitee byte for byte. The invitee is a member once it accepts. An account invited or a member already: 409 error.member.exists. At most INVITATIONS_MAX invitations of the caller wait for an answer at once (409 error.member.too_many_invitations), however many are sent together.',
      tags,
      auth: 'bearer',
      accepts: JSON_MEDIA,
      params: AlbumIdParams,
      body: InviteRequest,
      responses: { 201: MemberView },
      described: { 201: 'The account is invited' },
      errors: [
        'error.account.suspended',
        'error.not_found',
        'error.request.invalid',
        'error.directory.required',
        'error.member.exists',
        'error.member.too_many_invitations',
      ],
    }),
    handler: async (request, reply) => {
      const { user_id: userId, role, invitation } = request.body
      const invited = await inviteMember(deps, requireCaller(request), request.params.album_id, {
        userId,
        role,
        invitation: sealedBytes(invitation, 'invitation', INVITATION_MAX_BYTES),
      })
      return reply.code(201).send(memberView(invited))
    },
  })

  app.route({
    method: 'GET',
    url: '/v1/albums/:album_id/members',
    ...operation({
      operationId: 'listMembers',
      summary: 'The album’s owner and members',
      description: 'The owner and every member may ask (anyone else: 404). Invitees not yet answered are listed to the owner only.',
      tags,
      auth: 'bearer',
      params: AlbumIdParams,
      responses: { 200: MembersResponse },
      described: { 200: 'The owner, and the members in the order they were invited' },
      errors: ['error.not_found'],
    }),
    handler: async (request) => {
      const { owner, members } = await albumMembers(deps, requireCaller(request), request.params.album_id)
      return { owner: personView(owner), members: members.map(memberView) }
    },
  })

  app.route({
    method: 'DELETE',
    url: '/v1/albums/:album_id/members/:user_id',
    ...operation({
      operationId: 'removeMember',
      summary: 'Remove a member or take an invitation back (the owner), or leave the album (a member, its own user id)',
      description:
        'From the moment this answers, the removed account reads nothing of the album, on every instance (404, as for an unknown album). Anyone else, and an account that is no member: 404.',
      tags,
      auth: 'bearer',
      params: MemberParams,
      responses: { 204: NoContent },
      described: { 204: 'The account is no longer a member (or invited)' },
      errors: ['error.not_found'],
    }),
    handler: async (request, reply) => {
      await removeMember(deps, requireCaller(request), request.params.album_id, request.params.user_id)
      return noContent(reply)
    },
  })

  app.route({
    method: 'PUT',
    url: '/v1/albums/:album_id/members/:user_id/invitation',
    ...operation({
      operationId: 'replaceInvitation',
      summary: 'Replace what the owner’s client sealed for a member or invitee',
      description:
        'The owner only (anyone else, and an account with no invitation or membership: 404). For a new album-key epoch, or the member’s new devices; handed to the member byte for byte (GET /v1/albums/{album_id}/membership, GET /v1/invitations).',
      tags,
      auth: 'bearer',
      accepts: JSON_MEDIA,
      params: MemberParams,
      body: InvitationReplaceRequest,
      responses: { 204: NoContent },
      described: { 204: 'Replaced' },
      errors: ['error.account.suspended', 'error.not_found', 'error.request.invalid'],
    }),
    handler: async (request, reply) => {
      const { album_id: albumId, user_id: userId } = request.params
      await replaceInvitation(deps, requireCaller(request), albumId, userId, sealedBytes(request.body.invitation, 'invitation', INVITATION_MAX_BYTES))
      return noContent(reply)
    },
  })

  app.route({
    method: 'GET',
    url: '/v1/albums/:album_id/membership',
    ...operation({
      operationId: 'readMembership',
      summary: 'What the caller, a member, holds of a shared album: its role, the owner’s latest sealing for it, its own keyring',
      description: 'An active member only (the owner, invitees and anyone else: 404).',
      tags,
      auth: 'bearer',
      params: AlbumIdParams,
      responses: { 200: MembershipResponse },
      described: { 200: 'The caller’s membership' },
      errors: ['error.not_found'],
    }),
    handler: async (request) => {
      const { album, membership } = await ownMembership(deps, requireCaller(request), request.params.album_id)
      return {
        album_id: album.albumId,
        owner_id: album.ownerId,
        role: membership.role,
        invitation: membership.invitation.toString('base64'),
        keyring: membership.keyring === null ? null : membership.keyring.toString('base64'),
      }
    },
  })

  app.route({
    method: 'PUT',
    url: '/v1/albums/:album_id/keyring',
    ...operation({
      operationId: 'storeKeyring',
      summary: 'Store the caller’s keyring of a shared album: its own sealing of the album keys it received',
      description: 'An active member only (anyone else: 404). Replaces the one stored before.',
      tags,
      auth: 'bearer',
      accepts: JSON_MEDIA,
      params: AlbumIdParams,
      body: KeyringRequest,
      responses: { 204: NoContent },
      described: { 204: 'Stored' },
      errors: ['error.account.suspended', 'error.not_found', 'error.request.invalid'],
    }),
    handler: async (request, reply) => {
      await storeKeyring(deps, requireCaller(request), request.params.album_id, sealedBytes(request.body.keyring, 'keyring', INVITATION_MAX_BYTES))
      return noContent(reply)
    },
  })

  app.route({
    method: 'GET',
    url: '/v1/invitations',
    ...operation({
      operationId: 'listInvitations',
      summary: 'The invitations waiting for the caller’s answer',
      tags,
      auth: 'bearer',
      responses: { 200: InvitationsResponse },
      described: { 200: 'Oldest first, each with the album’s owner and the bytes its client sealed' },
    }),
    handler: async (request) => ({
      invitations: (await pendingInvitations(deps, requireCaller(request))).map((invitation) => ({
        album_id: invitation.albumId,
        role: invitation.role,
        invitation: invitation.invitation.toString('base64'),
        invited_at: timestamp(invitation.createdAt),
        owner: { user_id: invitation.ownerId, email: invitation.ownerEmail, display_name: invitation.ownerDisplayName },
      })),
    }),
  })

  app.route({
    method: 'POST',
    url: '/v1/invitations/:album_id/accept',
    ...operation({
      operationId: 'acceptInvitation',
      summary: 'Accept an invitation: the caller is a member of the album from now on',
      tags,
      auth: 'bearer',
      params: AlbumIdParams,
      responses: { 200: AcceptedResponse },
      described: { 200: 'The caller is a member' },
      errors: ['error.account.suspended', 'error.not_found'],
    }),
    handler: async (request) => {
      const accepted = await acceptInvitation(deps, requireCaller(request), request.params.album_id)
      return { album_id: accepted.albumId, role: accepted.role, accepted_at: timestamp(accepted.acceptedAt ?? accepted.createdAt) }
    },
  })

  app.route({
    method: 'POST',
    url: '/v1/invitations/:album_id/decline',
    ...operation({
      operationId: 'declineInvitation',
      summary: 'Decline an invitation: it is dropped',
      tags,
      auth: 'bearer',
      params: AlbumIdParams,
      responses: { 204: NoContent },
      described: { 204: 'The invitation is gone' },
      errors: ['error.not_found'],
    }),
    handler: async (request, reply) => {
      await declineInvitation(deps, requireCaller(request), request.params.album_id)
      return noContent(reply)
    },
  })

  app.route({
    method: 'GET',
    url: '/v1/shared-albums',
    ...operation({
      operationId: 'listSharedAlbums',
      summary: 'The albums shared with the caller (its memberships), with its role in each',
      description: '`GET /v1/albums` stays the albums the caller owns, which its master key opens; these open with the keys their owners sealed for it.',
      tags,
      auth: 'bearer',
      responses: { 200: SharedAlbumsResponse },
      described: { 200: 'In the order the caller joined them' },
    }),
    handler: async (request) => ({
      albums: (await sharedAlbums(deps, requireCaller(request))).map(({ album, role, joinedAt }) => ({
        album_id: album.albumId,
        protocol_version: album.protocolVersion,
        created_at: timestamp(album.createdAt),
        owner_id: album.ownerId,
        role,
        joined_at: timestamp(joinedAt),
      })),
    }),
  })
  app.route({
    method: 'GET',
    url: '/v1/partners',
    ...operation({
      operationId: 'listPartners',
      summary: 'The accounts the caller shares every album with, and those that share every album with it',
      tags,
      auth: 'bearer',
      responses: { 200: PartnersResponse },
      described: { 200: 'Both lists, oldest first' },
      errors: [],
    }),
    handler: async (request) => {
      const { partners, partnerOf } = await listPartners(deps, requireCaller(request))
      return { partners: partners.map(partnerView), partner_of: partnerOf.map(partnerView) }
    },
  })

  app.route({
    method: 'PUT',
    url: '/v1/partners/:user_id',
    ...operation({
      operationId: 'setPartner',
      summary: 'Share every album with an account, the new ones too',
      description:
        'The server keeps the list; the caller’s clients share each album with the partner (inviting it as for any member, sealed for its devices), and each new album as they make it. A partner already gets the new role. At most PARTNERS_MAX (8) partners (409 error.member.too_many_partners). The caller itself: 422; an unknown account: 404.',
      tags,
      auth: 'bearer',
      accepts: JSON_MEDIA,
      params: PartnerParams,
      body: PartnerRequest,
      responses: { 200: PartnerView },
      described: { 200: 'The partner' },
      errors: ['error.account.suspended', 'error.not_found', 'error.request.invalid', 'error.member.too_many_partners'],
    }),
    handler: async (request) => partnerView(await setPartner(deps, requireCaller(request), request.params.user_id, request.body.role)),
  })

  app.route({
    method: 'DELETE',
    url: '/v1/partners/:user_id',
    ...operation({
      operationId: 'removePartner',
      summary: 'Stop sharing every album with an account',
      description: 'The albums shared with it stay shared (remove it from each to stop that); new albums are no longer shared with it. Not a partner: 404.',
      tags,
      auth: 'bearer',
      params: PartnerParams,
      responses: { 204: NoContent },
      described: { 204: 'It is no longer a partner' },
      errors: ['error.not_found'],
    }),
    handler: async (request, reply) => {
      await removePartner(deps, requireCaller(request), request.params.user_id)
      return noContent(reply)
    },
  })
}
