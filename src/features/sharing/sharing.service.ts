// Sharing an album (decision 0067; docs/sharing.md): an account looked up by email, invited by
// the album's owner with the sealed bytes its client made, accepting or declining; the members
// listed; a member removed by the owner, or leaving. Who may read or write an album is asked of
// readableAlbum and writableAlbum (albums.service.ts), which these rows answer.
import type { Deps } from '../../deps.ts'
import { budgetBlockedForS } from '../../domain/attempt-budget.ts'
import { normalizeEmail } from '../../domain/account.ts'
import { AppError } from '../../errors.ts'
import type { Album } from '../../storage/port/albums.ts'
import { PARTNERS_MAX } from '../../contract/sharing.ts'
import type { ListedMember, MemberRole, Membership, Partner, PendingInvitation } from '../../storage/port/members.ts'
import { ownAlbum, readableAlbum } from '../albums/albums.service.ts'
import type { Caller } from '../context.ts'
import { ensureNotSuspended } from '../moderation/moderation.service.ts'

/**
 * The user id of the account with this email, counted against the caller's lookups
 * (ACCOUNT_LOOKUP_MAX per ACCOUNT_LOOKUP_WINDOW_S, every lookup counted, before it is looked at:
 * a burst on any instance gets no more), so that emails cannot be probed wholesale.
 */
export async function lookupAccount(deps: Deps, caller: Caller, email: string): Promise<string> {
  const { lookupMax, lookupWindowS } = deps.config.sharing
  const now = deps.clock.now()
  const limit = { maxFailures: lookupMax, windowMs: lookupWindowS * 1000 }
  if ((await deps.storage.reserveAttempt('account_lookup', caller.userId, now, limit)) === undefined) {
    const retryAfterS = budgetBlockedForS(await deps.storage.findAttemptBudget('account_lookup', caller.userId), now, lookupMax) ?? 1
    throw new AppError('error.rate_limited', 'Too many account lookups; wait and retry', { retryAfterS })
  }
  const key = normalizeEmail(email)?.emailKey
  const account = key === undefined ? undefined : await deps.storage.findAccountByEmailKey(key)
  if (account === undefined || account.deletedAt !== null) throw new AppError('error.not_found', 'No account has that email')
  return account.userId
}

/** Invites an account into the caller's album: its sealed bytes kept for it, byte for byte. */
export async function inviteMember(
  deps: Deps,
  caller: Caller,
  albumId: string,
  invite: { readonly userId: string; readonly role: MemberRole; readonly invitation: Buffer },
): Promise<ListedMember> {
  ensureNotSuspended(caller)
  await ownAlbum(deps.storage, caller, albumId)
  if (invite.userId === caller.userId) throw new AppError('error.request.invalid', 'The owner of an album is not invited to it')
  const invitee = await deps.storage.findAccount(invite.userId)
  if (invitee === undefined || invitee.deletedAt !== null) throw new AppError('error.not_found', 'No account has that user id')
  if (!(await deps.storage.hasDirectory(invite.userId)))
    throw new AppError('error.directory.required', 'That account has no device directory yet: there is no device to seal the album’s keys to')
  const now = deps.clock.now()
  const row = { albumId, userId: invite.userId, role: invite.role, invitedBy: caller.userId, invitation: invite.invitation, createdAt: now }
  const outcome = await deps.storage.transaction((tx) => tx.inviteMember(row, deps.config.sharing.invitationsMax))
  if (outcome === 'exists') throw new AppError('error.member.exists', 'That account is invited to this album or a member of it already')
  if (outcome === 'limit')
    throw new AppError('error.member.too_many_invitations', `This account has ${deps.config.sharing.invitationsMax} invitations not yet answered`)
  return { ...row, state: 'invited', acceptedAt: null, keyring: null, email: invitee.email, displayName: invitee.displayName }
}

/** The album's owner and members; invitees are listed to the owner only. Anyone else: 404. */
export async function albumMembers(deps: Deps, caller: Caller, albumId: string): Promise<{ owner: Person; members: ListedMember[] }> {
  const { album, role } = await readableAlbum(deps.storage, caller, albumId)
  const owner = await deps.storage.findAccount(album.ownerId)
  if (owner === undefined) throw new AppError('error.not_found', 'No album of this account has that id')
  const members = await deps.storage.listMembers(albumId)
  return {
    owner: { userId: owner.userId, email: owner.email, displayName: owner.displayName },
    members: role === 'owner' ? members : members.filter((member) => member.state === 'active'),
  }
}

export interface Person {
  readonly userId: string
  readonly email: string
  readonly displayName: string | null
}

/**
 * Ends a membership or an invitation: the owner removes any member or takes any invitation back;
 * a member removes itself (leaves; an invitee declines instead). Access ends with the delete, on
 * every instance. Anyone else, and an account that is neither: 404.
 */
export async function removeMember(deps: Deps, caller: Caller, albumId: string, userId: string): Promise<void> {
  // Under the album lock: a write of the member in flight either committed before, or finds it gone (ensureWriter).
  const removed = await deps.storage.transaction(async (tx) => {
    const album = await tx.lockAlbum(albumId)
    if (album === undefined || (album.ownerId !== caller.userId && userId !== caller.userId)) return false
    return tx.removeMember(albumId, userId, album.ownerId === caller.userId ? undefined : 'active')
  })
  if (!removed) throw new AppError('error.not_found', 'No member of an album of this account has that id')
}

export function pendingInvitations(deps: Deps, caller: Caller): Promise<PendingInvitation[]> {
  return deps.storage.pendingInvitations(caller.userId)
}

/** The caller's invitation to the album becomes a membership; none: 404. */
export async function acceptInvitation(deps: Deps, caller: Caller, albumId: string): Promise<Membership> {
  ensureNotSuspended(caller)
  const accepted = await deps.storage.acceptInvitation(albumId, caller.userId, deps.clock.now())
  if (accepted === undefined) throw new AppError('error.not_found', 'No invitation to that album is waiting for this account')
  return accepted
}

/** The caller's invitation to the album is dropped; none: 404. */
export async function declineInvitation(deps: Deps, caller: Caller, albumId: string): Promise<void> {
  if (!(await deps.storage.removeMember(albumId, caller.userId, 'invited')))
    throw new AppError('error.not_found', 'No invitation to that album is waiting for this account')
}

export function sharedAlbums(deps: Deps, caller: Caller): Promise<Array<{ readonly album: Album; readonly role: MemberRole; readonly joinedAt: number }>> {
  return deps.storage.sharedAlbums(caller.userId)
}

/** The owner replaces what its client sealed for a member or invitee (a new epoch's keys, the member's new devices); none: 404. */
export async function replaceInvitation(deps: Deps, caller: Caller, albumId: string, userId: string, invitation: Buffer): Promise<void> {
  ensureNotSuspended(caller)
  await ownAlbum(deps.storage, caller, albumId)
  if (!(await deps.storage.replaceInvitation(albumId, userId, invitation)))
    throw new AppError('error.not_found', 'No member of an album of this account has that id')
}

/** What the caller, an active member, holds of the album: its role, the owner's latest sealing, its own keyring. Anyone else: 404. */
export async function ownMembership(deps: Deps, caller: Caller, albumId: string): Promise<{ album: Album; membership: Membership }> {
  const membership = await deps.storage.findMembership(albumId, caller.userId)
  const album = membership?.state === 'active' ? await deps.storage.findAlbum(albumId) : undefined
  if (membership === undefined || album === undefined) throw new AppError('error.not_found', 'This account is no member of an album with that id')
  return { album, membership }
}

/** The caller, an active member, stores its keyring of the album (its own sealing of the keys it received); anyone else: 404. */
export async function storeKeyring(deps: Deps, caller: Caller, albumId: string, keyring: Buffer): Promise<void> {
  ensureNotSuspended(caller)
  if (!(await deps.storage.storeKeyring(albumId, caller.userId, keyring)))
    throw new AppError('error.not_found', 'This account is no member of an album with that id')
}

/**
 * The caller names an account a partner: its clients then share every album with it, the new
 * ones too (the server keeps the list; each album is sealed by the owner's client). At most
 * PARTNERS_MAX, counted under the caller's account row lock. The caller itself or an unknown
 * account: 422, 404.
 */
export async function setPartner(deps: Deps, caller: Caller, partnerId: string, role: MemberRole): Promise<Partner> {
  ensureNotSuspended(caller)
  if (partnerId === caller.userId) throw new AppError('error.request.invalid', 'An account is not its own partner')
  const partner = await deps.storage.findAccount(partnerId)
  if (partner === undefined || partner.deletedAt !== null) throw new AppError('error.not_found', 'No account has that user id')
  const now = deps.clock.now()
  const outcome = await deps.storage.transaction((tx) => tx.setPartner(caller.userId, partnerId, role, now, PARTNERS_MAX))
  if (outcome === 'limit') throw new AppError('error.member.too_many_partners', `This account has ${PARTNERS_MAX} partners already`)
  const listed = (await deps.storage.listPartners(caller.userId)).partners.find((named) => named.userId === partnerId)
  return listed ?? { userId: partnerId, email: partner.email, displayName: partner.displayName, role, since: now }
}

/** The caller stops sharing every album with an account (the albums shared stay shared); not a partner: 404. */
export async function removePartner(deps: Deps, caller: Caller, partnerId: string): Promise<void> {
  if (!(await deps.storage.removePartner(caller.userId, partnerId))) throw new AppError('error.not_found', 'That account is not a partner of this account')
}

export function listPartners(deps: Deps, caller: Caller): Promise<{ readonly partners: Partner[]; readonly partnerOf: Partner[] }> {
  return deps.storage.listPartners(caller.userId)
}
