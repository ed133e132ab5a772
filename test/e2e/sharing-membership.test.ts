// The membership of a shared album is part of its signed history (decision 0067, "Membership in
// the chain"): the owner records each member, its role and its pinned identity key in the album's
// record, and every member's client holds what the server lists to it. Three accounts, on each
// engine, through the client library with a real server; the lying server rewrites its rows with
// SQL, as a compromised operator would: a member injected, a role raised, a removal undone, a
// member's key swapped, a viewer's write let through. Each is caught by a member's check. A
// removal moves the album to a new epoch: what is added after it opens only with the new key.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deviceEntry, newXWingSeed } from '../../src/client/account.ts'
import { liveEntries, type Library } from '../../src/client/albums.ts'
import { memorySource, openAsset, restoreFile } from '../../src/client/files.ts'
import { openMetadata } from '../../src/client/format/metadata.ts'
import { AlbumHistoryKeeper } from '../../src/client/history.ts'
import { albumMemoryFile } from '../../src/client/node/album-memory.ts'
import { contactsFile } from '../../src/client/node/contacts.ts'
import { createLink, openPublicLink } from '../../src/client/links.ts'
import {
  acceptPartnerShares,
  acceptShare,
  addPartner,
  memberLibrary,
  ownSharedLibrary,
  removeFromAlbum,
  sharedHistory,
  shareAlbum,
  sharePartnerAlbums,
  type ContactStore,
  type SharedLibrary,
} from '../../src/client/sharing.ts'
import { AlbumTamperedError } from '../../src/client/tampering.ts'
import { backupFile } from '../../src/client/upload.ts'
import { signDirectory } from '../../src/sdk/directory.ts'
import { IdentityKey } from '../../src/sdk/identity.ts'
import { readRows, writeRows } from '../support/database.ts'
import { seedAlbum } from '../support/gallery.ts'
import { registered } from '../support/actors.ts'
import { startServer, type TestServer } from '../support/server.ts'
import { webAccount, type WebAccount } from '../support/web-account.ts'

let server: TestServer
let work: string
let owner: WebAccount
let bea: WebAccount
let cal: WebAccount

beforeAll(async () => {
  server = await startServer()
  work = await mkdtemp(path.join(tmpdir(), 'coffer-membership-'))
  ;[owner, bea, cal] = await Promise.all([webAccount(server, 'members-owner'), webAccount(server, 'members-bea'), webAccount(server, 'members-cal')])
}, 60_000)
afterAll(async () => {
  await server?.close()
  if (work !== undefined) await rm(work, { recursive: true, force: true })
})

/** A device's pins: its own file, so a "new device" starts with none. */
const pins = (name: string): ContactStore => contactsFile(path.join(work, `${name}.sqlite`))

/** The library with a history keeper (remembering in `device`'s file) that checks the album as coffer-photos does. */
function checking(library: SharedLibrary, device: string): SharedLibrary & { history: AlbumHistoryKeeper } {
  const source = { client: library.client, identityPublicKey: library.identityPublicKey, ...sharedHistory(library) }
  return { ...library, history: new AlbumHistoryKeeper(source, albumMemoryFile(path.join(work, `${device}.sqlite`))) }
}

const ownerOf = (device: string) => checking(ownSharedLibrary({ library: owner.library, contacts: pins(device) }), device)

async function memberOf(account: WebAccount, device: string, albumId: string) {
  const contacts = pins(device)
  return checking(await memberLibrary({ library: account.library, contacts, xwingSecret: account.keys.xwingSeed }, albumId), device)
}

async function accept(account: WebAccount, device: string, albumId: string): Promise<void> {
  const invitation = (await account.client.listInvitations()).invitations.find((waiting) => waiting.album_id === albumId)
  expect(invitation).toBeDefined()
  await acceptShare({ library: account.library, contacts: pins(device), xwingSecret: account.keys.xwingSeed }, invitation!)
}

async function tampering(check: Promise<unknown>): Promise<AlbumTamperedError> {
  const error = await check.catch((thrown: unknown) => thrown)
  expect(error).toBeInstanceOf(AlbumTamperedError)
  return error as AlbumTamperedError
}

const photo = (name: string, seed: number) =>
  memorySource(new Uint8Array([0xff, 0xd8, seed, seed + 1, 0xff, 0xd9]), { name, type: 'image/jpeg', modified: null })

async function sharedAlbum(name: string): Promise<{ albumId: string; protocolVersion: string }> {
  const { album } = await seedAlbum(owner.library, name, 1, 1)
  const device = `owner-${name}`
  await shareAlbum({ library: ownerOf(device), contacts: pins(device) }, album.albumId, bea.email, 'contributor')
  await shareAlbum({ library: ownerOf(device), contacts: pins(device) }, album.albumId, cal.email, 'viewer')
  await accept(bea, `bea-${name}`, album.albumId)
  await accept(cal, `cal-${name}`, album.albumId)
  return { albumId: album.albumId, protocolVersion: album.protocolVersion }
}

describe('the membership in the album history', () => {
  it('records who the members are, in what role, with which key; every member checks the listing against it', async () => {
    const { albumId } = await sharedAlbum('Family')
    const beaView = await memberOf(bea, 'bea-Family', albumId)
    await beaView.history.check(albumId)
    const recorded = beaView.history.membership(albumId)!
    expect(recorded.epoch).toBe(1)
    expect(new Map([...recorded.members].map(([id, member]) => [id, member.role]))).toEqual(
      new Map([
        [bea.userId, 'contributor'],
        [cal.userId, 'viewer'],
      ]),
    )
    await (await memberOf(cal, 'cal-Family', albumId)).history.check(albumId)
    await ownerOf('owner-Family').history.check(albumId)
  })

  it('a member the owner never added, a role raised, a removal undone: each member and the owner see it', async () => {
    const { albumId } = await sharedAlbum('Injected')
    const intruder = await registered(server, 'members-intruder')
    const { user_id: intruderId } = await intruder.client.getProfile()
    await writeRows(
      server.database,
      "INSERT INTO album_members (album_id, user_id, role, state, invited_by, invitation, created_at, accepted_at) VALUES (?, ?, 'viewer', 'active', ?, ?, 1, 2)",
      [albumId, intruderId, owner.userId, Buffer.from([1])],
    )
    const injected = await tampering((await memberOf(cal, 'cal-Injected', albumId)).history.check(albumId))
    expect(injected.kind).toBe('membership')
    expect(injected.detail).toContain(intruder.email)
    expect((await tampering(ownerOf('owner-Injected').history.check(albumId))).kind).toBe('membership')
    await writeRows(server.database, 'DELETE FROM album_members WHERE user_id = ?', [intruderId])

    await writeRows(server.database, "UPDATE album_members SET role = 'contributor' WHERE album_id = ? AND user_id = ?", [albumId, cal.userId])
    const raised = await tampering((await memberOf(bea, 'bea-Injected', albumId)).history.check(albumId))
    expect(raised.detail).toContain(`${cal.email} as a contributor; the owner made them a viewer`)
    await writeRows(server.database, "UPDATE album_members SET role = 'viewer' WHERE album_id = ? AND user_id = ?", [albumId, cal.userId])

    // The owner removes Cal; the server keeps serving Cal to the others.
    const [kept] = await readRows(server.database, `SELECT * FROM album_members WHERE album_id = '${albumId}' AND user_id = '${cal.userId}'`)
    await removeFromAlbum({ library: ownerOf('owner-Injected'), contacts: pins('owner-Injected') }, albumId, cal.userId)
    await (await memberOf(bea, 'bea-Injected', albumId)).history.check(albumId)
    await writeRows(
      server.database,
      'INSERT INTO album_members (album_id, user_id, role, state, invited_by, invitation, created_at, accepted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      [albumId, cal.userId, kept!.role, kept!.state, kept!.invited_by, kept!.invitation, kept!.created_at, kept!.accepted_at],
    )
    const undone = await tampering((await memberOf(bea, 'bea-Injected', albumId)).history.check(albumId))
    expect(undone.detail).toContain(`${cal.email} as a member the owner did not add (or removed)`)
  })

  it("a member's key swapped: a device that meets it first still finds it is not the key the owner recorded", async () => {
    const { albumId } = await sharedAlbum('Swapped')
    const [saved] = await readRows(server.database, `SELECT body FROM directories WHERE user_id = '${bea.userId}'`)
    const intruder = IdentityKey.generate()
    const forged = await signDirectory(intruder, { version: 7, devices: [deviceEntry(intruder, crypto.randomUUID(), newXWingSeed(), 'Intruder')] })
    await writeRows(server.database, 'UPDATE directories SET body = ? WHERE user_id = ?', [Buffer.from(forged), bea.userId])
    try {
      // Cal's new device pins nothing yet: the first key it is served for Bea is the intruder's.
      const swapped = await tampering((await memberOf(cal, 'cal-new-device', albumId)).history.check(albumId))
      expect(swapped.kind).toBe('membership')
      expect(swapped.detail).toContain(`the identity key of ${bea.email} is not the one the owner recorded`)
    } finally {
      await writeRows(server.database, 'UPDATE directories SET body = ? WHERE user_id = ?', [saved!.body, bea.userId])
    }
  })

  it("a viewer's write the server let through is refused by every reader: the membership did not let it write", async () => {
    const { albumId, protocolVersion } = await sharedAlbum('Viewer')
    await writeRows(server.database, "UPDATE album_members SET role = 'contributor' WHERE album_id = ? AND user_id = ?", [albumId, cal.userId])
    const calWriting = await memberLibrary({ library: cal.library, contacts: pins('cal-Viewer-write'), xwingSecret: cal.keys.xwingSeed }, albumId)
    await backupFile({ ...calWriting, albumId, protocolVersion }, photo('from-a-viewer.jpg', 3))
    await writeRows(server.database, "UPDATE album_members SET role = 'viewer' WHERE album_id = ? AND user_id = ?", [albumId, cal.userId])
    const refused = await tampering((await memberOf(bea, 'bea-Viewer', albumId)).history.check(albumId))
    expect(refused.kind).toBe('forged')
    expect(refused.detail).toContain(`written by account ${cal.userId}, which the album's membership did not let write then`)
    // Reading the entry pinned nothing: a server cannot have a device pin a key for an account its person never shared with.
    expect(await pins('bea-Viewer').pinned(cal.userId)).toBeNull()
    expect(await pins('bea-Viewer').pinned(owner.userId)).not.toBeNull() // accepting the share pinned the owner
  })

  it('a removal moves the album to a new epoch: photos added after it open with a key the removed member never had', async () => {
    const { albumId, protocolVersion } = await sharedAlbum('Epochs')
    const calBefore = await memberOf(cal, 'cal-Epochs', albumId)
    const calKeyOne = await calBefore.albumKey!(albumId, 1)
    const link = await createLink({ library: ownerOf('owner-Epochs'), contacts: pins('owner-Epochs') }, albumId)
    await removeFromAlbum({ library: ownerOf('owner-Epochs'), contacts: pins('owner-Epochs') }, albumId, cal.userId)
    await expect(cal.client.feed(albumId, 0, 10)).rejects.toMatchObject({ status: 404 })

    const ownerView = ownerOf('owner-Epochs')
    await ownerView.history.check(albumId)
    expect(ownerView.history.membership(albumId)).toMatchObject({ epoch: 2 })
    const added = await backupFile({ ...ownerView, albumId, protocolVersion }, photo('after-cal.jpg', 9))
    const beaView = await memberOf(bea, 'bea-Epochs', albumId)
    await beaView.history.check(albumId)
    const beaAdded = await backupFile({ ...beaView, albumId, protocolVersion }, photo('bea-after-cal.jpg', 11))

    const entries = await liveEntries(owner.client, albumId)
    for (const assetId of [added.assetId, beaAdded.assetId]) {
      const entry = entries.find((live) => live.asset_id === assetId)!
      // Bea reads it with the epoch-2 key the owner sealed for her (her keyring took it on); so does the owner.
      const restored = await restoreFile({ ...beaView, albumId } satisfies Library & { albumId: string }, entry)
      expect(restored.envelope.amk_version).toBe(2)
      expect((await restoreFile({ ...ownerView, albumId }, entry)).metadata.name).toMatch(/after-cal\.jpg$/)
      // The key Cal kept opens nothing added since.
      const blob = await owner.client.downloadBlob(entry.metadata_blob_hash!)
      await expect(openMetadata(calKeyOne, { albumId, fileId: assetId }, blob)).rejects.toThrow()
    }
    // The link made before the removal was sealed anew: its holders open what the owner and Bea added since, each checked under its writer's key.
    const opened = await openPublicLink(link.url)
    const linked = (await opened.client.feed(albumId, 0, 1000)).entries
    for (const assetId of [added.assetId, beaAdded.assetId]) {
      const entry = linked.find((live) => live.asset_id === assetId)!
      const asset = await openAsset(opened.keys, entry, await opened.client.downloadBlob(entry.metadata_blob_hash!))
      expect([asset.envelope.amk_version, asset.metadata.name]).toEqual([2, expect.stringMatching(/after-cal\.jpg$/)])
    }
    // Bea's other devices get epoch 2 from her keyring, which her first read after the removal brought up to date.
    const [row] = await readRows(server.database, `SELECT keyring FROM album_members WHERE album_id = '${albumId}' AND user_id = '${bea.userId}'`)
    expect(row?.keyring).toBeTruthy()
    const otherDevice = await memberLibrary(
      { library: { ...bea.library, deviceId: crypto.randomUUID() }, contacts: pins('bea-other'), xwingSecret: newXWingSeed() },
      albumId,
    )
    expect(await otherDevice.albumKey!(albumId, 2)).toEqual(await beaView.albumKey!(albumId, 2))
  })
})

describe('share everything, under the bound on unanswered invitations', () => {
  it('sends what INVITATIONS_MAX lets it, says more wait, and sends the rest once the partner accepts', async () => {
    const bounded = await startServer({ INVITATIONS_MAX: '1' })
    try {
      const [sharer, partner] = await Promise.all([webAccount(bounded, 'bounded-sharer'), webAccount(bounded, 'bounded-partner')])
      for (const name of ['One', 'Two']) await seedAlbum(sharer.library, name, 1, 1)
      const device = { library: ownSharedLibrary({ library: sharer.library, contacts: pins('bounded-sharer') }), contacts: pins('bounded-sharer') }
      expect(await addPartner(device, partner.email, 'viewer')).toMatchObject({ sent: 1, refused: [], more: true })
      const partnerDevice = { library: partner.library, contacts: pins('bounded-partner'), xwingSecret: partner.keys.xwingSeed }
      expect(await acceptPartnerShares(partnerDevice)).toHaveLength(1)
      expect(await sharePartnerAlbums(device)).toMatchObject({ sent: 1, more: false })
      expect(await acceptPartnerShares(partnerDevice)).toHaveLength(1)
      expect((await partner.client.listSharedAlbums()).albums).toHaveLength(2)
      expect(await sharePartnerAlbums(device)).toMatchObject({ sent: 0, more: false })
    } finally {
      await bounded.close()
    }
  })
})
