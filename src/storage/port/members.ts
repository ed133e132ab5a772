// Members of shared albums (decision 0067): invitations, memberships, and what an account may
// read or write of an album because of them.
// Part of the storage port (../port.ts); storage/kysely/members.ts implements it.
import type { Album } from './albums.ts'

export type MemberRole = 'viewer' | 'contributor'
/** What an account is to an album: its owner, or a member with a role. */
export type AlbumRole = 'owner' | MemberRole

export interface Membership {
  readonly albumId: string
  readonly userId: string
  readonly role: MemberRole
  /** invited until the invitee accepts. */
  readonly state: 'invited' | 'active'
  readonly invitedBy: string
  /** The owner's client's sealed bytes: opaque to the server. */
  readonly invitation: Buffer
  readonly createdAt: number
  readonly acceptedAt: number | null
  /** The member's own sealing of the album keys it received, once it stored one: opaque to the server. */
  readonly keyring: Buffer | null
}

/** A member (or an invitee) with its account's email and display name, as the members list shows it. */
export interface ListedMember extends Membership {
  readonly email: string
  readonly displayName: string | null
}

/** An invitation as its invitee's list shows it: with the album's owner's email and name. */
export interface PendingInvitation extends Membership {
  readonly ownerId: string
  readonly ownerEmail: string
  readonly ownerDisplayName: string | null
}

/** A partner of an account: the other account with its email and name, the role its albums are shared in, since when. */
export interface Partner {
  readonly userId: string
  readonly email: string
  readonly displayName: string | null
  readonly role: MemberRole
  readonly since: number
}

export interface MemberStore {
  /** The album and what `userId` is to it: its owner, or an active member; undefined for anyone else (an invitee too) and for no album. */
  albumAccess(albumId: string, userId: string): Promise<{ readonly album: Album; readonly role: AlbumRole } | undefined>
  /**
   * Invites an account, unless it is invited or a member already ('exists') or the inviter has
   * `max` invitations outstanding ('limit'): counted and inserted under the inviter's account
   * row lock, so that a burst of invitations (on any instance) never gets past `max`.
   */
  inviteMember(invitation: Omit<Membership, 'state' | 'acceptedAt' | 'keyring'>, max: number): Promise<'invited' | 'exists' | 'limit'>
  /** The account's row of the album (an invitation or a membership), if any. */
  findMembership(albumId: string, userId: string): Promise<Membership | undefined>
  /** Replaces what the owner's client sealed for the account (a new epoch, new devices); false when it has no row. */
  replaceInvitation(albumId: string, userId: string, invitation: Buffer): Promise<boolean>
  /** Stores the active member's keyring; false when it is not an active member. */
  storeKeyring(albumId: string, userId: string, keyring: Buffer): Promise<boolean>
  /** The album's members and invitees, in the order they were invited (then by user id). */
  listMembers(albumId: string): Promise<ListedMember[]>
  /** The invitations waiting for the account's answer, oldest first. */
  pendingInvitations(userId: string): Promise<PendingInvitation[]>
  /** The account's invitation to the album becomes a membership; undefined when there is no invitation (none, or accepted already). */
  acceptInvitation(albumId: string, userId: string, at: number): Promise<Membership | undefined>
  /** Deletes the account's row of the album (an invitation, or a membership, or either when `state` is not given); false when there was none. */
  removeMember(albumId: string, userId: string, state?: Membership['state']): Promise<boolean>
  /** The albums shared with the account (its active memberships), in the order it joined them, each with its role. */
  sharedAlbums(userId: string): Promise<Array<{ readonly album: Album; readonly role: MemberRole; readonly joinedAt: number }>>
  /**
   * Names `partnerId` a partner of `ownerId` in `role` (a partner already gets the role), unless
   * the owner has `max` partners ('limit'): counted under the owner's account row lock.
   */
  setPartner(ownerId: string, partnerId: string, role: MemberRole, at: number, max: number): Promise<'set' | 'limit'>
  /** False when it was not a partner. */
  removePartner(ownerId: string, partnerId: string): Promise<boolean>
  /** The account's partners (`partners`) and the accounts that name it one (`partnerOf`), oldest first. */
  listPartners(userId: string): Promise<{ readonly partners: Partner[]; readonly partnerOf: Partner[] }>
}
