// Sharing an album through the client library against a real server (decision 0067), on each
// engine: the owner seals the album's keys for the member's devices and invites it; the member
// opens them on its device, keeps a keyring for its other devices, and reads the album's photos
// with them. A server that lies is caught: it serves another identity key in the member's
// directory (the owner's pin refuses it: nothing is sent), rewrites an invitation's bytes (the
// owner's pinned key does not verify them: nothing is accepted), or files a genuine share under
// another album (refused: nothing is accepted). The rows are rewritten with SQL, as a
// compromised operator would.
import { randomUUID } from 'node:crypto'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deviceEntry, newXWingSeed } from '../../src/client/account.ts'
import { digestSha256 } from '../../src/client/format/bytes.ts'
import { ClientFormatError } from '../../src/client/format/errors.ts'
import { deriveAlbumKey } from '../../src/client/format/keys.ts'
import { openMetadata } from '../../src/client/format/metadata.ts'
import { safetyNumber, sealShare } from '../../src/client/format/share.ts'
import { generateXWingKeyPair } from '../../src/client/format/xwing.ts'
import { contactsFile } from '../../src/client/node/contacts.ts'
import { liveEntries } from '../../src/client/albums.ts'
import { memorySource, restoreFile } from '../../src/client/files.ts'
import { checkAlbumHistory } from '../../src/client/history.ts'
import {
  acceptShare,
  ContactUnusableError,
  IdentityKeyChangedError,
  memberLibrary,
  ownSharedLibrary,
  sharedAlbumKeys,
  shareAlbum,
  type MemberDevice,
  type SharingAccount,
} from '../../src/client/sharing.ts'
import { backupFile } from '../../src/client/upload.ts'
import { signDirectory } from '../../src/sdk/directory.ts'
import { IdentityKey } from '../../src/sdk/identity.ts'
import { writeRows } from '../support/database.ts'
import { seedAlbum } from '../support/gallery.ts'
import { writePhoto } from '../support/photos.ts'
import { startServer, type TestServer } from '../support/server.ts'
import { webAccount, type WebAccount } from '../support/web-account.ts'

let server: TestServer
let work: string
let owner: WebAccount
let member: WebAccount
let ownerDevice: SharingAccount
let memberDevice: MemberDevice

beforeAll(async () => {
  server = await startServer()
  work = await mkdtemp(path.join(tmpdir(), 'coffer-sharing-'))
  ;[owner, member] = await Promise.all([webAccount(server, 'share-owner'), webAccount(server, 'share-member')])
  ownerDevice = { library: owner.library, contacts: contactsFile(path.join(work, 'owner.sqlite')) }
  memberDevice = { library: member.library, contacts: contactsFile(path.join(work, 'member.sqlite')), xwingSecret: member.keys.xwingSeed }
}, 60_000)
afterAll(async () => {
  await server?.close()
  if (work !== undefined) await rm(work, { recursive: true, force: true })
})

const invitationTo = async (albumId: string) => (await member.client.listInvitations()).invitations.find((invitation) => invitation.album_id === albumId)

describe('sharing an album, end to end through the client library', () => {
  it("the member opens the album's keys on its device, keeps them for its other devices, and decrypts a photo's metadata with them", async () => {
    const { album } = await seedAlbum(owner.library, 'Summer', 2, 1)
    const invited = await shareAlbum(ownerDevice, album.albumId, member.email, 'viewer')
    expect(invited).toMatchObject({ user_id: member.userId, role: 'viewer', state: 'invited' })
    const keys = await acceptShare(memberDevice, (await invitationTo(album.albumId))!)
    const albumKey = await deriveAlbumKey(owner.keys.masterKey, album.albumId, 1)
    expect(keys.get(1)).toEqual(albumKey)
    expect((await member.client.listSharedAlbums()).albums.map((a) => a.album_id)).toEqual([album.albumId])

    // Another device of the member, which the share has no part for: its keyring serves it.
    const otherDevice = { ...memberDevice, library: { ...member.library, deviceId: randomUUID() }, xwingSecret: newXWingSeed() }
    expect((await sharedAlbumKeys(otherDevice, album.albumId)).get(1)).toEqual(albumKey)

    // The album's record and its photos, read and opened by the member with the key it was given.
    const names = []
    for (const entry of await liveEntries(member.client, album.albumId)) {
      const blob = await member.client.downloadBlob(entry.metadata_blob_hash!)
      names.push((await openMetadata(keys.get(1)!, { albumId: album.albumId, fileId: entry.asset_id }, blob)).metadata.name)
    }
    expect(names.sort()).toEqual(['Summer', 'swatch-00000.webp', 'swatch-00001.webp'])
  })

  it("a contributor writes with the keys it received; the owner reads both writers' photos, each verified under its writer's key, and the history of two writers checks", async () => {
    const { album } = await seedAlbum(owner.library, 'Together', 1, 1)
    await shareAlbum(ownerDevice, album.albumId, member.email, 'contributor')
    await acceptShare(memberDevice, (await invitationTo(album.albumId))!)
    const contributing = await memberLibrary(memberDevice, album.albumId)
    const file = path.join(work, 'from-member.jpg')
    await writePhoto(file, { format: 'jpeg', width: 32, height: 24, seed: 7 })
    const photo = new Uint8Array(await readFile(file))
    const stored = await backupFile(
      { ...contributing, albumId: album.albumId, protocolVersion: album.protocolVersion },
      memorySource(photo, { name: 'from-member.jpg', type: 'image/jpeg', modified: null }),
    )
    expect(stored.status).toBe('stored')

    const ownerView = { ...ownSharedLibrary(ownerDevice), albumId: album.albumId }
    const entries = (await owner.client.feed(album.albumId, 0, 100)).entries
    const contributed = entries.find((entry) => entry.asset_id === stored.assetId)!
    const restored = await restoreFile(ownerView, contributed)
    const chunks: Uint8Array[] = []
    for await (const chunk of restored.bytes) chunks.push(chunk)
    expect(Buffer.concat(chunks)).toEqual(Buffer.from(photo))
    expect(restored.envelope.created_by_user).toBe(member.userId)
    // The owner's own photo reads the same way; the member reads it too, with the keys it holds.
    const ownersEntry = entries.find((entry) => entry.action === 'create' && entry.asset_id !== stored.assetId && entry !== entries[0])!
    expect((await restoreFile(ownerView, ownersEntry)).metadata.name).toMatch(/^swatch-/)
    expect((await restoreFile({ ...contributing, albumId: album.albumId }, ownersEntry)).metadata.name).toMatch(/^swatch-/)
    // A reader that takes the account's own key for every entry refuses the contributor's.
    await expect(restoreFile({ ...owner.library, albumId: album.albumId }, contributed)).rejects.toThrow(/signature/)
    // The album's history, written by two accounts, checks under each writer's key.
    const history = await checkAlbumHistory(
      { client: owner.client, identityPublicKey: owner.keys.identityPublicKey, writerKeys: ownerView.writerKeys, ownerId: owner.userId },
      album.albumId,
      null,
    )
    expect(history.head.count).toBe(entries.length)
  })

  it("a server that serves another identity key in the member's directory: the owner's pin refuses it and nothing is sent; the safety number shows it", async () => {
    const { album } = await seedAlbum(owner.library, 'Autumn', 1, 1)
    const intruder = IdentityKey.generate()
    const forged = await signDirectory(intruder, { version: 99, devices: [deviceEntry(intruder, randomUUID(), newXWingSeed(), 'Intruder')] })
    await writeRows(server.database, 'UPDATE directories SET body = ? WHERE user_id = ?', [Buffer.from(forged), member.userId])
    const refused = await shareAlbum(ownerDevice, album.albumId, member.email, 'contributor').catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(IdentityKeyChangedError)
    expect((refused as IdentityKeyChangedError).pinned).toEqual(member.keys.identityPublicKey)
    expect(await invitationTo(album.albumId)).toBeUndefined()
    // What the people would compare: the number the intruder's key gives is not the member's.
    const ownerSide = { userId: owner.userId, identityKey: owner.keys.identityPublicKey }
    expect(safetyNumber(ownerSide, { userId: member.userId, identityKey: intruder.publicKey })).not.toBe(
      safetyNumber(ownerSide, { userId: member.userId, identityKey: member.keys.identityPublicKey }),
    )
    // The directory served truthfully again: the share goes.
    const genuine = await signDirectory(IdentityKey.fromSeeds(member.keys.identitySeeds), {
      version: 1,
      devices: [deviceEntry({ publicKey: member.keys.identityPublicKey }, member.keys.deviceId, member.keys.xwingSeed, 'Test browser')],
    })
    await writeRows(server.database, 'UPDATE directories SET body = ? WHERE user_id = ?', [Buffer.from(genuine), member.userId])
    expect(await shareAlbum(ownerDevice, album.albumId, member.email, 'contributor')).toMatchObject({ state: 'invited' })
  })

  it('an invitation whose bytes the server rewrote, or a genuine share filed under another album: refused, nothing accepted', async () => {
    const { album } = await seedAlbum(owner.library, 'Winter', 1, 1)
    await shareAlbum(ownerDevice, album.albumId, member.email, 'viewer')
    // Sealed to the member's real device, for this album, but signed by a key that is not the owner's.
    const intruder = IdentityKey.generate()
    const forged = await sealShare(intruder, {
      albumId: album.albumId,
      ownerId: owner.userId,
      memberId: member.userId,
      role: 'viewer',
      memberKeyHash: await digestSha256(member.keys.identityPublicKey),
      firstEpoch: 1,
      lastEpoch: 1,
      albumKeys: new Map([[1, newXWingSeed()]]),
      recipients: [{ deviceId: member.keys.deviceId, encryptionKey: generateXWingKeyPair(member.keys.xwingSeed).publicKey }],
    })
    await writeRows(server.database, 'UPDATE album_members SET invitation = ? WHERE album_id = ? AND user_id = ?', [
      Buffer.from(forged),
      album.albumId,
      member.userId,
    ])
    const refused = await acceptShare(memberDevice, (await invitationTo(album.albumId))!).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(ClientFormatError)
    expect((refused as ClientFormatError).code).toBe('authentication')
    expect(await invitationTo(album.albumId)).toMatchObject({ album_id: album.albumId }) // still waiting: nothing accepted

    // A genuine share of this album, filed as the invitation to another album of the owner.
    const { album: other } = await seedAlbum(owner.library, 'Spring', 1, 1)
    await writeRows(server.database, 'DELETE FROM album_members WHERE album_id = ? AND user_id = ?', [album.albumId, member.userId])
    await shareAlbum(ownerDevice, album.albumId, member.email, 'viewer')
    const genuine = (await invitationTo(album.albumId))!
    await writeRows(server.database, 'DELETE FROM album_members WHERE album_id = ? AND user_id = ?', [album.albumId, member.userId])
    await writeRows(
      server.database,
      'INSERT INTO album_members (album_id, user_id, role, state, invited_by, invitation, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      [other.albumId, member.userId, 'viewer', 'invited', owner.userId, Buffer.from(genuine.invitation, 'base64'), Date.now()],
    )
    const misfiled = await acceptShare(memberDevice, (await invitationTo(other.albumId))!).catch((error: unknown) => error)
    expect(misfiled).toBeInstanceOf(ContactUnusableError)
    expect((await member.client.listSharedAlbums()).albums.map((a) => a.album_id)).not.toContain(other.albumId)
  })
})
