// Sharing an album, the client's half (decision 0067; docs/client-format.md "Sharing an album";
// docs/sharing.md): the owner looks the member up, holds the member's identity key to the one it
// pinned (at first use), seals the album's keys for each of the member's devices and invites it;
// the member holds the owner's key to its own pin, opens the share on its device, keeps a keyring
// under its own master key for its other devices, and accepts. Nothing the server says is taken
// on trust that a signature or a pin can check. Browser-safe.
import { decodeCanonical } from '../codec/cbor.ts'
import { equalBytes, fromBase64, toBase64 } from '../sdk/bytes.ts'
import { CofferProblem, type AlbumMember, type AlbumMemberRole, type CofferClient, type Invitations } from '../sdk/client.ts'
import { readDirectory, type DeviceDirectory } from '../sdk/directory.ts'
import { statedWriting, type WriterKeys } from '../sdk/manifest.ts'
import { checkAlbumHistory, type HistorySource } from './history.ts'
import { albumNameOf, albumRecordId, feedEntries, liveEntries, STREAM_PAGE, writeMembership, type Library } from './albums.ts'
import { readSignedManifest } from './files.ts'
import { digestSha256 } from './format/bytes.ts'
import { deriveAlbumKey } from './format/keys.ts'
import { openOwnerCopy, sealLinkEnvelope, type LinkContents } from './format/link.ts'
import { recordedMembership, UNSHARED, type Membership, type RecordedMember } from './format/membership.ts'
import { openKeyring, openShare, sealKeyring, sealShare, shareFacts, type ShareRecipient } from './format/share.ts'
import { AlbumTamperedError } from './tampering.ts'

/** An account's identity key as this device pinned it, and whether the person compared safety numbers. */
export interface PinnedContact {
  readonly identityKey: Uint8Array
  readonly verifiedAt: number | null
}

/** Where a device keeps the identity keys it pinned, by user id (node/contacts.ts in coffer-photos). */
export interface ContactStore {
  pinned(userId: string): Promise<PinnedContact | null>
  /** Pins `identityKey` for the account (replacing an earlier pin only when the person confirmed a new key); not verified. */
  pin(userId: string, identityKey: Uint8Array): Promise<void>
  /** The person compared the safety number of this key: marked verified (only while it is the pinned one). */
  markVerified(userId: string, identityKey: Uint8Array, at: number): Promise<void>
}

/**
 * The account's signed directory names another identity key than this device pinned for it:
 * the server is serving another key (or the person set the account up again). Nothing is sealed
 * to it or opened with it until the person confirms the new key (ContactStore.pin).
 */
export class IdentityKeyChangedError extends Error {
  override readonly name = 'IdentityKeyChangedError'
  readonly userId: string
  readonly pinned: Uint8Array
  readonly presented: Uint8Array
  constructor(userId: string, pinned: Uint8Array, presented: Uint8Array) {
    super(`the identity key of account ${userId} is not the one this device pinned: compare safety numbers before trusting the new one`)
    this.userId = userId
    this.pinned = pinned
    this.presented = presented
  }
}

/** The account has no signed directory, or one that does not verify under the key it names, or no device that can receive keys. */
export class ContactUnusableError extends Error {
  override readonly name = 'ContactUnusableError'
}

/** The identity key a directory's devices name (every entry's `public_key`: the account's one key), before its signature is checked. */
function claimedIdentityKey(bytes: Uint8Array): Uint8Array {
  try {
    const outer = decodeCanonical(bytes) as { body: Uint8Array }
    const devices = (decodeCanonical(outer.body) as { devices: Array<{ public_key: Uint8Array }> }).devices
    const [first] = devices
    if (first !== undefined && devices.every((device) => equalBytes(device.public_key, first.public_key))) return first.public_key
  } catch {
    // as below
  }
  throw new ContactUnusableError('the account’s device directory is not one signed directory of one identity key')
}

/**
 * The account's identity key and directory, the directory verified under that key, the key held
 * to the one this device pinned for the account (pinned now when it is the first use, unless
 * `pin` is false: a read that only checks signatures pins nothing, so that a server cannot make a
 * device pin a key of its choosing for an account the person never shared with).
 */
export async function contactKey(
  client: CofferClient,
  contacts: ContactStore,
  userId: string,
  { pin = true }: { readonly pin?: boolean } = {},
): Promise<{ identityKey: Uint8Array; directory: DeviceDirectory; firstUse: boolean }> {
  const fetched = await client.fetchDirectory(userId)
  if (fetched === null) throw new ContactUnusableError(`account ${userId} has no device directory`)
  const identityKey = claimedIdentityKey(fetched.bytes)
  let directory: DeviceDirectory
  try {
    directory = readDirectory(fetched.bytes, identityKey)
  } catch {
    throw new ContactUnusableError(`the device directory of account ${userId} does not verify under the key it names`)
  }
  const pinned = await contacts.pinned(userId)
  if (pinned !== null && !equalBytes(pinned.identityKey, identityKey)) throw new IdentityKeyChangedError(userId, pinned.identityKey, identityKey)
  if (pinned === null && pin) await contacts.pin(userId, identityKey)
  return { identityKey, directory, firstUse: pinned === null }
}

/** What sharing needs of the owner's account: the library (its history checked: AlbumHistoryKeeper), and where its device keeps pins. */
export interface SharingAccount {
  readonly library: Library
  readonly contacts: ContactStore
}

/**
 * The membership the owner's album's history records, the history checked now (the owner acts on
 * it: nothing the server lists is taken on its word): by the library's keeper when it has one
 * (against what the device remembers), else from the feed alone.
 */
export async function checkedMembership(owner: SharingAccount, albumId: string): Promise<Membership> {
  const { history } = owner.library
  if (history === undefined) return (await checkAlbumHistory(ownSharedLibrary(owner), albumId, null)).membership
  await history.check(albumId)
  return history.membership(albumId) ?? UNSHARED
}

/** The devices of a directory that can receive keys (those with an X-Wing key). */
function recipientsOf(directory: DeviceDirectory): ShareRecipient[] {
  return directory.devices.flatMap((device) =>
    device.encryption_key === undefined ? [] : [{ deviceId: device.device_id, encryptionKey: device.encryption_key }],
  )
}

/** The owner's album keys of every epoch from 1 through `epoch`, derived from its master key. */
async function ownerKeys(library: Library, albumId: string, epoch: number): Promise<Map<number, Uint8Array>> {
  const keys = new Map<number, Uint8Array>()
  for (let at = 1; at <= epoch; at++) keys.set(at, await deriveAlbumKey(library.masterKey, albumId, at))
  return keys
}

/** The share the owner seals for one member: every epoch's key through the membership's, for each of the member's devices. */
async function sealFor(owner: SharingAccount, albumId: string, member: RecordedMember, epoch: number): Promise<Uint8Array> {
  const { library, contacts } = owner
  const { identityKey, directory } = await contactKey(library.client, contacts, member.userId)
  if (!equalBytes(await digestSha256(identityKey), member.keyHash)) throw new IdentityKeyChangedError(member.userId, member.keyHash, identityKey)
  const recipients = recipientsOf(directory)
  if (recipients.length === 0) throw new ContactUnusableError(`account ${member.userId} has no device that can receive keys yet`)
  return sealShare(library.identity, {
    albumId,
    ownerId: library.userId,
    memberId: member.userId,
    role: member.role,
    memberKeyHash: member.keyHash,
    firstEpoch: 1,
    lastEpoch: epoch,
    albumKeys: await ownerKeys(library, albumId, epoch),
    recipients,
  })
}

/**
 * Invites the account with this email into the owner's album, as a viewer or a contributor
 * (shareAlbumWith, the account looked up by its email).
 */
export async function shareAlbum(owner: SharingAccount, albumId: string, email: string, role: AlbumMemberRole): Promise<AlbumMember> {
  return shareAlbumWith(owner, albumId, await owner.library.client.lookupAccount(email), role)
}

/**
 * Invites an account into the owner's album, as a viewer or a contributor: the member is
 * recorded in the album's membership (its history), then the album's keys of every epoch are
 * sealed for each device of the account's directory, signed with the owner's identity key, and
 * sent. Throws IdentityKeyChangedError before anything is written when the account's key is not
 * the pinned one.
 */
export async function shareAlbumWith(owner: SharingAccount, albumId: string, memberId: string, role: AlbumMemberRole): Promise<AlbumMember> {
  const { library, contacts } = owner
  const { identityKey, directory } = await contactKey(library.client, contacts, memberId)
  if (recipientsOf(directory).length === 0) throw new ContactUnusableError(`account ${memberId} has no device that can receive keys yet`)
  const membership = await checkedMembership(owner, albumId)
  const member: RecordedMember = { userId: memberId, role, keyHash: await digestSha256(identityKey), since: membership.epoch }
  // Recorded before the server is told: a listing the record does not cover is what members' clients refuse.
  await writeMembership(library, albumId, { epoch: membership.epoch, members: new Map([...membership.members, [memberId, member]]) })
  return library.client.inviteMember(albumId, memberId, role, await sealFor(owner, albumId, member, membership.epoch))
}

/**
 * "Share everything with my partner": names the account with this email a partner (the server
 * keeps the list, so the owner's other devices follow it), its identity key pinned now, then
 * shares every album of the owner with it (sharePartnerAlbums).
 */
export async function addPartner(owner: SharingAccount, email: string, role: AlbumMemberRole): Promise<PartnerShares & { readonly userId: string }> {
  const { client } = owner.library
  const partnerId = await client.lookupAccount(email)
  await contactKey(client, owner.contacts, partnerId)
  await client.setPartner(partnerId, role)
  return { userId: partnerId, ...(await sharePartnerAlbums(owner)) }
}

/** What sharePartnerAlbums did: the invitations it sent, and the albums it left alone because their history or membership did not check. */
export interface PartnerShares {
  readonly sent: number
  readonly refused: readonly AlbumTamperedError[]
  /** The server's bound on invitations waiting for an answer stopped it: the rest follow once the partner accepts some (the next run). */
  readonly more: boolean
}

/**
 * Shares each of the owner's albums (`albumIds`, else all of them) with each of its partners not
 * yet invited to it or in it, in the partner's role: a new album, or albums made on a device
 * before it knew of the partner. An album whose history or membership the server changed is
 * left alone (nothing is recorded or sealed on a history in doubt) and named in `refused`; the
 * others go on.
 */
export async function sharePartnerAlbums(owner: SharingAccount, albumIds?: readonly string[]): Promise<PartnerShares> {
  const { client } = owner.library
  const { partners } = await client.listPartners()
  if (partners.length === 0) return { sent: 0, refused: [], more: false }
  let sent = 0
  const refused: AlbumTamperedError[] = []
  for (const albumId of albumIds ?? (await client.listAlbums()).albums.map((album) => album.album_id)) {
    const listed = new Set((await client.listMembers(albumId)).members.map((member) => member.user_id))
    try {
      for (const partner of partners) {
        if (listed.has(partner.user_id)) continue
        await shareAlbumWith(owner, albumId, partner.user_id, partner.role)
        sent++
      }
    } catch (error) {
      if (error instanceof CofferProblem && error.code === 'error.member.too_many_invitations') return { sent, refused, more: true }
      if (!(error instanceof AlbumTamperedError)) throw error
      refused.push(error)
    }
  }
  return { sent, refused, more: false }
}

/** Accepts every invitation waiting from an account that shares every album with this one (a partner): answers the albums accepted. */
export async function acceptPartnerShares(member: MemberDevice): Promise<string[]> {
  const { client } = member.library
  const partners = new Set((await client.listPartners()).partner_of.map((partner) => partner.user_id))
  const accepted: string[] = []
  for (const invitation of (await client.listInvitations()).invitations) {
    if (!partners.has(invitation.owner.user_id)) continue
    await acceptShare(member, invitation)
    accepted.push(invitation.album_id)
  }
  return accepted
}

/**
 * The owner takes a member out of its album (or an invitation back), and moves the album to a
 * new epoch: the server stops serving the member at once; the remaining members get the new
 * epoch's key sealed for their devices, then the album's membership records them without it.
 * Photos added from then on are wrapped under a key the removed member never had.
 */
export async function removeFromAlbum(owner: SharingAccount, albumId: string, userId: string): Promise<void> {
  await owner.library.client.removeMember(albumId, userId)
  await settleMembership(owner, albumId)
}

/**
 * Brings the album's recorded membership to what the server serves: anyone it records but the
 * server no longer lists (removed, left, declined) leaves the record, and the album moves to a
 * new epoch sealed to those who remain. Nothing when every recorded member is listed. The owner's
 * client runs it after a removal and when it lists members (a member who left cannot move the
 * epoch: it holds no master key of the album).
 */
export async function settleMembership(owner: SharingAccount, albumId: string): Promise<Membership> {
  const { library } = owner
  const membership = await checkedMembership(owner, albumId)
  const listed = new Set((await library.client.listMembers(albumId)).members.map((member) => member.user_id))
  const remaining = [...membership.members.values()].filter((member) => listed.has(member.userId))
  if (remaining.length === membership.members.size) return membership
  const settled: Membership = { epoch: membership.epoch + 1, members: new Map(remaining.map((member) => [member.userId, member])) }
  // Sealed before it is recorded: a member told to write under the new epoch already holds its key, and so does each link.
  for (const member of remaining) await library.client.replaceInvitation(albumId, member.userId, await sealFor(owner, albumId, member, settled.epoch))
  await resealLinks(owner, albumId, settled)
  await writeMembership(library, albumId, settled)
  return settled
}

/**
 * What a public link's envelope seals of the owner's album (decision 0068): its name, its keys
 * through the membership's epoch, and the identity keys of its owner, its contributors (each held
 * to the key the membership recorded) and every other account a live photo of it says it was
 * written by (a contributor removed since: held to this device's pin), so that the link's page
 * checks every photo's signature.
 */
export async function linkContents(owner: SharingAccount, albumId: string, membership?: Membership): Promise<LinkContents> {
  const { library, contacts } = owner
  const recorded = membership ?? (await checkedMembership(owner, albumId))
  const writers = new Map([[library.userId, library.identityPublicKey]])
  for (const member of recorded.members.values()) {
    if (member.role !== 'contributor') continue
    const { identityKey } = await contactKey(library.client, contacts, member.userId, { pin: false })
    if (!equalBytes(await digestSha256(identityKey), member.keyHash)) throw new IdentityKeyChangedError(member.userId, member.keyHash, identityKey)
    writers.set(member.userId, identityKey)
  }
  for (const entry of await liveEntries(library.client, albumId)) {
    const writer = statedWriting(fromBase64(entry.manifest_cbor))?.writer
    if (typeof writer !== 'string' || writers.has(writer)) continue
    // An account the server cannot show a key for (none, or not the pinned one) is left out: its photos do not check.
    const contact = await contactKey(library.client, contacts, writer, { pin: false }).catch(() => null)
    if (contact !== null) writers.set(writer, contact.identityKey)
  }
  const name = (await albumNameOf(library, albumId)) ?? ''
  const recordId = await (library.albumRecordId?.(albumId) ?? albumRecordId(library.masterKey, albumId))
  return { albumId, name, recordId, ownerId: library.userId, writers, albumKeys: await ownerKeys(library, albumId, recorded.epoch) }
}

/** Seals each link of the album that still works anew, for a new epoch: its holders read what is added under the new key too. */
async function resealLinks(owner: SharingAccount, albumId: string, membership: Membership): Promise<void> {
  const { client, masterKey } = owner.library
  const links = (await client.listLinks(albumId)).links.filter((link) => link.state === 'active' || link.state === 'used_up')
  if (links.length === 0) return
  const contents = await linkContents(owner, albumId, membership)
  for (const link of links) {
    const { key } = await openOwnerCopy(masterKey, link.link_id, fromBase64(link.owner_copy))
    await client.replaceLinkEnvelope(link.link_id, toBase64(await sealLinkEnvelope(key, link.link_id, contents)))
  }
}

/**
 * Holds what the server lists of an album's members (GET …/members) to the membership its
 * history records: its owner is the one the album is read as; everyone listed is recorded, in
 * the role recorded, and the identity key this device pins for it is the one the owner recorded.
 * Throws AlbumTamperedError (`membership`) otherwise: a member the server added, a removal it did
 * not apply, a role or a key it changed. HistorySource.checkMembers takes it.
 */
export function membershipChecker(client: CofferClient, ownerId: string, keyOf: WriterKeys): (albumId: string, membership: Membership) => Promise<void> {
  return async (albumId, membership) => {
    const tampered = (detail: string): AlbumTamperedError => new AlbumTamperedError(albumId, 'membership', 0, detail)
    const listed = await client.listMembers(albumId)
    if (listed.owner.user_id !== ownerId) throw tampered(`the server names account ${listed.owner.user_id} its owner, not ${ownerId}`)
    for (const member of listed.members) {
      const recorded = membership.members.get(member.user_id)
      if (recorded === undefined) throw tampered(`the server lists ${member.email} as a member the owner did not add (or removed)`)
      if (recorded.role !== member.role) throw tampered(`the server lists ${member.email} as a ${member.role}; the owner made them a ${recorded.role}`)
      const key = await keyOf(member.user_id)
      if (!equalBytes(await digestSha256(key), recorded.keyHash))
        throw tampered(`the identity key of ${member.email} is not the one the owner recorded when sharing with them`)
    }
  }
}

/** What a member's device needs: the library, its pins, and its own X-Wing secret (the 32-byte seed). */
export interface MemberDevice extends SharingAccount {
  readonly xwingSecret: Uint8Array
}

/** The invitation waiting for this account, as GET /v1/invitations lists it. */
export type Invitation = Invitations['invitations'][number]

/**
 * Accepts an invitation on this device: the share is held to the owner's pinned key and to this
 * account, key and device (format/share.ts openShare), its keys kept in this account's keyring
 * of the album (sealed under its master key), then the invitation accepted. Throws before
 * accepting anything when the share is not what the owner signed for this device
 * (ClientFormatError), names another album or owner than the server lists, or the owner's key is
 * not the pinned one (IdentityKeyChangedError).
 */
export async function acceptShare(member: MemberDevice, invitation: Invitation): Promise<ReadonlyMap<number, Uint8Array>> {
  const { library } = member
  const bytes = fromBase64(invitation.invitation)
  const facts = shareFacts(bytes)
  if (facts.albumId !== invitation.album_id || facts.ownerId !== invitation.owner.user_id)
    throw new ContactUnusableError('the invitation names another album or owner than the server lists it under')
  const { identityKey: ownerKey } = await contactKey(library.client, member.contacts, facts.ownerId)
  const opened = await openShare(bytes, {
    ownerIdentityKey: ownerKey,
    memberId: library.userId,
    memberIdentityKey: library.identityPublicKey,
    deviceId: library.deviceId,
    xwingSecret: member.xwingSecret,
  })
  await library.client.acceptInvitation(facts.albumId)
  await library.client.storeKeyring(facts.albumId, await sealKeyring(library.masterKey, facts, opened.albumKeys))
  return opened.albumKeys
}

/**
 * The keys of an album shared with this account, on any of its devices: from its keyring (sealed
 * under its master key) when it has one, else from the owner's share when this device has a part
 * (held to the owner's pinned key). Throws ClientFormatError when neither opens.
 */
export async function sharedAlbumKeys(member: MemberDevice, albumId: string): Promise<ReadonlyMap<number, Uint8Array>> {
  return (await sharedAlbum(member, albumId)).albumKeys
}

/** sharedAlbumKeys, with the album's owner as the membership names it (the keys open only for that owner). */
async function sharedAlbum(member: MemberDevice, albumId: string): Promise<{ ownerId: string; albumKeys: ReadonlyMap<number, Uint8Array> }> {
  const { library } = member
  const membership = await library.client.readMembership(albumId)
  const ownerId = membership.owner_id
  const invitation = fromBase64(membership.invitation)
  const kept = membership.keyring === null ? null : await openKeyring(library.masterKey, { albumId, ownerId }, fromBase64(membership.keyring))
  // The owner's newest sealing names a later epoch than the keyring (a removal moved the album on): opened here when this device has a part.
  if (kept !== null && shareFacts(invitation).lastEpoch <= Math.max(...kept.keys())) return { ownerId, albumKeys: kept }
  const opened = await openOwnersShare(member, invitation, ownerId).catch((error: unknown) => {
    if (kept === null) throw error
    return null
  })
  if (opened === null) return { ownerId, albumKeys: kept ?? new Map() }
  if (opened.albumId !== albumId) throw new ContactUnusableError('the share names another album')
  const albumKeys = new Map([...(kept ?? []), ...opened.albumKeys])
  if (kept !== null) await library.client.storeKeyring(albumId, await sealKeyring(library.masterKey, opened, albumKeys))
  return { ownerId, albumKeys }
}

/** The owner's share for this device, held to the owner's pinned key and to the owner the server names. */
async function openOwnersShare(member: MemberDevice, invitation: Uint8Array, ownerId: string): Promise<Awaited<ReturnType<typeof openShare>>> {
  const { library } = member
  const { identityKey } = await contactKey(library.client, member.contacts, ownerId)
  const opened = await openShare(invitation, {
    ownerIdentityKey: identityKey,
    memberId: library.userId,
    memberIdentityKey: library.identityPublicKey,
    deviceId: library.deviceId,
    xwingSecret: member.xwingSecret,
  })
  if (opened.ownerId !== ownerId) throw new ContactUnusableError('the share names another owner')
  return opened
}

/**
 * Each writer's identity key for an album with several writers: this account's own, and every
 * other account's from its signed directory, held to this device's pin when it has one (another
 * key refused with IdentityKeyChangedError) and pinning nothing. That the writer was allowed to
 * write when it wrote is the history's check (history.ts, under the membership the owner
 * recorded), and that its key is the one the owner recorded is the members' check.
 */
export function writerKeysOf(account: {
  readonly library: Pick<Library, 'client' | 'userId' | 'identityPublicKey'>
  readonly contacts: ContactStore
}): WriterKeys {
  const { library, contacts } = account
  const keys = new Map<string, Promise<Uint8Array>>()
  return (userId) => {
    if (userId === library.userId) return library.identityPublicKey
    let key = keys.get(userId)
    if (key === undefined) {
      // Held to a pin when there is one; none is made here (an entry the server put in an album could name anyone).
      key = contactKey(library.client, contacts, userId, { pin: false }).then((contact) => contact.identityKey)
      keys.set(userId, key)
      key.catch(() => keys.delete(userId)) // a refusal is asked again next time, not remembered
    }
    return key
  }
}

/** A library for albums of several writers: each entry verified under its writer's key, and the owner whose membership record says who may write. */
export type SharedLibrary = Library & {
  readonly writerKeys: WriterKeys
  readonly ownerId: string
  /** A member's: the album keys it holds, by epoch (the owner derives its own). */
  readonly albumKeys?: ReadonlyMap<number, Uint8Array>
}

/** The owner's library for its album that others write into: entries verified under each writer's key. */
export function ownSharedLibrary(owner: SharingAccount): SharedLibrary {
  return { ...owner.library, writerKeys: writerKeysOf(owner), ownerId: owner.library.userId }
}

/** What checking the history of an album of several writers takes of its library (history.ts HistorySource): the writers' keys, the owner, the members' check. */
export const sharedHistory = (library: SharedLibrary): Required<Pick<HistorySource, 'writerKeys' | 'ownerId' | 'checkMembers'>> => ({
  writerKeys: library.writerKeys,
  ownerId: library.ownerId,
  checkMembers: membershipChecker(library.client, library.ownerId, library.writerKeys),
})

/**
 * A member's library for an album shared with it: its album keys as received (sharedAlbumKeys),
 * and every entry verified under its writer's pinned key. Reads (restore, verify) and, for a
 * contributor, writes (backup) go through the library's usual functions with it.
 */
export async function memberLibrary(member: MemberDevice, albumId: string): Promise<SharedLibrary> {
  const { ownerId, albumKeys: keys } = await sharedAlbum(member, albumId)
  const writerKeys = writerKeysOf(member)
  let recordId: Promise<string> | undefined
  const shared: SharedLibrary = {
    ...member.library,
    writerKeys,
    ownerId,
    albumKeys: keys,
    albumKey: async (id, epoch) => {
      const key = id === albumId ? keys.get(epoch) : undefined
      if (key === undefined) throw new ContactUnusableError(`this account holds no key of album ${id} at epoch ${epoch}`)
      return key
    },
    albumRecordId: (id) => {
      if (id !== albumId) return albumRecordId(member.library.masterKey, id)
      recordId ??= ownersRecordId(shared, albumId, ownerId)
      return recordId
    },
  }
  return shared
}

/**
 * The asset id of the record of an album shared with this account: the owner's master key names
 * it, so it is found as the asset whose manifest, signed under the owner's pinned key, records
 * the album's membership (the owner records it in a replace of the record when it shares).
 * Throws when there is none.
 */
async function ownersRecordId(library: Library, albumId: string, ownerId: string): Promise<string> {
  for await (const entry of feedEntries(library.client, albumId, { pageSize: STREAM_PAGE })) {
    if (entry.action === 'delete') continue
    const manifest = fromBase64(entry.manifest_cbor)
    // Only the entry that says it is the owner's record of the membership is worth a signature check.
    const stated = statedWriting(manifest)
    if (stated?.writer !== ownerId || recordedMembership(stated.content) === null) continue
    const read = await readSignedManifest(library, manifest).catch(() => null)
    if (read?.envelope.created_by_user === ownerId && read.envelope.album_id === albumId && recordedMembership(read.content) !== null) return entry.asset_id
  }
  throw new ContactUnusableError(`album ${albumId} has no record its owner wrote: it has no name here`)
}
