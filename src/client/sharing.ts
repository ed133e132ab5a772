// Sharing an album, the client's half (decision 0067; docs/client-format.md "Sharing an album";
// docs/sharing.md): the owner looks the member up, holds the member's identity key to the one it
// pinned (at first use), seals the album's keys for each of the member's devices and invites it;
// the member holds the owner's key to its own pin, opens the share on its device, keeps a keyring
// under its own master key for its other devices, and accepts. Nothing the server says is taken
// on trust that a signature or a pin can check. Browser-safe.
import { decodeCanonical } from '../codec/cbor.ts'
import { equalBytes, fromBase64 } from '../sdk/bytes.ts'
import type { AlbumMember, AlbumMemberRole, CofferClient, Invitations } from '../sdk/client.ts'
import { readDirectory, type DeviceDirectory } from '../sdk/directory.ts'
import type { WriterKeys } from '../sdk/manifest.ts'
import { ALBUM_RECORD_TYPE, albumRecordId, feedEntries, STREAM_PAGE, type Library } from './albums.ts'
import { openStoredAsset } from './files.ts'
import { digestSha256 } from './format/bytes.ts'
import { deriveAlbumKey } from './format/keys.ts'
import { openKeyring, openShare, sealKeyring, sealShare, shareFacts } from './format/share.ts'

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
 * to the one this device pinned for the account (pinned now when it is the first use).
 */
export async function contactKey(
  client: CofferClient,
  contacts: ContactStore,
  userId: string,
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
  if (pinned === null) await contacts.pin(userId, identityKey)
  return { identityKey, directory, firstUse: pinned === null }
}

/** What sharing needs of the owner's account: the library, and where its device keeps pins. */
export interface SharingAccount {
  readonly library: Library
  readonly contacts: ContactStore
}

/**
 * Invites the account with this email into the owner's album, as a viewer or a contributor: the
 * album's keys (epoch 1: the one epoch albums have until a removal moves them) sealed for each
 * device of the account's directory, signed with the owner's identity key. Throws
 * IdentityKeyChangedError before anything is sent when the account's key is not the pinned one.
 */
export async function shareAlbum(owner: SharingAccount, albumId: string, email: string, role: AlbumMemberRole): Promise<AlbumMember> {
  const { library, contacts } = owner
  const memberId = await library.client.lookupAccount(email)
  const { identityKey, directory } = await contactKey(library.client, contacts, memberId)
  const recipients = directory.devices.flatMap((device) =>
    device.encryption_key === undefined ? [] : [{ deviceId: device.device_id, encryptionKey: device.encryption_key }],
  )
  if (recipients.length === 0) throw new ContactUnusableError(`${email} has no device that can receive keys yet`)
  const share = await sealShare(library.identity, {
    albumId,
    ownerId: library.userId,
    memberId,
    role,
    memberKeyHash: await digestSha256(identityKey),
    firstEpoch: 1,
    lastEpoch: 1,
    albumKeys: new Map([[1, await deriveAlbumKey(library.masterKey, albumId, 1)]]),
    recipients,
  })
  return library.client.inviteMember(albumId, memberId, role, share)
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
  if (membership.keyring !== null) return { ownerId, albumKeys: await openKeyring(library.masterKey, { albumId, ownerId }, fromBase64(membership.keyring)) }
  const { identityKey } = await contactKey(library.client, member.contacts, ownerId)
  const opened = await openShare(fromBase64(membership.invitation), {
    ownerIdentityKey: identityKey,
    memberId: library.userId,
    memberIdentityKey: library.identityPublicKey,
    deviceId: library.deviceId,
    xwingSecret: member.xwingSecret,
  })
  if (opened.albumId !== albumId || opened.ownerId !== ownerId) throw new ContactUnusableError('the share names another album or owner')
  return { ownerId, albumKeys: opened.albumKeys }
}

/**
 * Each writer's identity key for an album with several writers: this account's own, and every
 * other account's as this device pinned it (contactKey: pinned at first use, another key refused
 * with IdentityKeyChangedError). Not yet: that the writer was a member allowed to write when it
 * wrote (the membership record in the album's history, decision 0067).
 */
export function writerKeysOf(account: SharingAccount): WriterKeys {
  const { library, contacts } = account
  const keys = new Map<string, Promise<Uint8Array>>()
  return (userId) => {
    if (userId === library.userId) return library.identityPublicKey
    let key = keys.get(userId)
    if (key === undefined) {
      key = contactKey(library.client, contacts, userId).then((contact) => contact.identityKey)
      keys.set(userId, key)
      key.catch(() => keys.delete(userId)) // a refusal is asked again next time, not remembered
    }
    return key
  }
}

/** The owner's library for its album that others write into: entries verified under each writer's key. */
export function ownSharedLibrary(owner: SharingAccount): Library {
  return { ...owner.library, writerKeys: writerKeysOf(owner) }
}

/**
 * A member's library for an album shared with it: its album keys as received (sharedAlbumKeys),
 * and every entry verified under its writer's pinned key. Reads (restore, verify) and, for a
 * contributor, writes (backup) go through the library's usual functions with it.
 */
export async function memberLibrary(member: MemberDevice, albumId: string): Promise<Library> {
  const { ownerId, albumKeys: keys } = await sharedAlbum(member, albumId)
  const writerKeys = writerKeysOf(member)
  let recordId: Promise<string> | undefined
  const shared: Library = {
    ...member.library,
    writerKeys,
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
 * it, so it is found as the asset the owner created (signed under the owner's pinned key) whose
 * metadata, opened with the album key, is an album record. Throws when there is none.
 */
async function ownersRecordId(library: Library, albumId: string, ownerId: string): Promise<string> {
  for await (const entry of feedEntries(library.client, albumId, { pageSize: STREAM_PAGE })) {
    if (entry.action !== 'create') continue
    const opened = await openStoredAsset({ ...library, albumId }, entry).catch(() => null)
    if (opened?.envelope.created_by_user === ownerId && opened.metadata.type === ALBUM_RECORD_TYPE) return entry.asset_id
  }
  throw new ContactUnusableError(`album ${albumId} has no record its owner wrote: it has no name here`)
}
