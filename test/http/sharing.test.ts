// Sharing an album, the server's half (decision 0067; docs/sharing.md): the owner looks an
// account up and invites it with sealed bytes the server keeps byte for byte; the invitee lists,
// declines or accepts; a member then reads the album as its owner does (feed, upgrade state,
// blobs one by one and in a batch, byte for byte, receipts, the members) and finds it among its
// shared albums.
// Anyone else (an invitee not yet answered, a stranger, a removed member, one who left) gets
// exactly what an unknown album gets. Invitations and lookups hold their limits under a burst.
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Library } from '../../src/client/albums.ts'
import { maintain } from '../../src/features/maintenance/sweep.service.ts'
import { CofferAdmin } from '../../src/sdk/admin.ts'
import { CofferProblem, type CofferClient } from '../../src/sdk/client.ts'
import { problemOf, raw, registered } from '../support/actors.ts'
import { album as provisioned, photoLibrary, uploader, type Uploader } from '../support/albums.ts'
import { deletionFor, downloaded, openBundle, writeFor, type DeletionTarget } from '../support/bundles.ts'
import { seedAlbum } from '../support/gallery.ts'
import { startServer, type TestServer } from '../support/server.ts'

const INVITATIONS_MAX = 3
const ADMIN_TOKEN = randomBytes(32).toString('base64url')
const LOOKUP_MAX = 4

let server: TestServer
let owner: Library
let albumId: string
/** Every blob hash of the album's live assets, and an asset id. */
let blobHashes: string[]
let assetId: string

/** An account with a device directory, as the photo library takes it. */
const account = (label: string): Promise<Library> => photoLibrary(server, label)
const emailOf = async (library: Library): Promise<string> => (await library.client.getProfile()).email

beforeAll(async () => {
  server = await startServer({ INVITATIONS_MAX: String(INVITATIONS_MAX), ACCOUNT_LOOKUP_MAX: String(LOOKUP_MAX), ADMIN_TOKEN })
  owner = await account('owner')
  const seeded = await seedAlbum(owner, 'Holidays', 3, 1)
  albumId = seeded.album.albumId
  assetId = seeded.assetIds[0]!
  const feed = await owner.client.feed(albumId, 0, 100)
  blobHashes = [...new Set(feed.entries.flatMap((entry) => (entry.metadata_blob_hash === undefined ? [] : [entry.metadata_blob_hash])))]
  expect(blobHashes.length).toBeGreaterThanOrEqual(3)
}, 60_000)
afterAll(async () => {
  await server?.close()
})

/** What `client` reads of the album: each read's answer, or the problem code it got. */
async function readsOf(client: CofferClient, album = albumId): Promise<Record<string, unknown>> {
  const outcome = async (read: () => Promise<unknown>): Promise<unknown> =>
    read().then(
      (value) => value,
      (error: unknown) => (error instanceof CofferProblem ? `${error.status} ${error.code}` : Promise.reject(error)),
    )
  const batch = await client.downloadBlobs(blobHashes)
  return {
    feed: await outcome(async () => (await client.feed(album, 0, 100)).entries.map((entry) => entry.envelope_hash)),
    upgrade: await outcome(async () => (await client.readUpgrade(album)).album_id),
    blob: await outcome(async () => Buffer.from(await client.downloadBlob(blobHashes[0]!)).toString('hex')),
    batch: blobHashes.map((hash) => batch.refused.get(hash)?.status ?? (batch.blobs.has(hash) ? Buffer.from(batch.blobs.get(hash)!).toString('hex') : null)),
    receipts: await outcome(async () => (await client.assetReceipts(assetId)).receipts.length),
    members: await outcome(async () => (await client.listMembers(album)).owner.user_id),
  }
}

describe('sharing an album', () => {
  it('a member reads the album as its owner does, from accepting until removed; before, and after, exactly as a stranger', async () => {
    const [viewer, stranger] = [await account('viewer'), await account('stranger')]
    const ownerReads = await readsOf(owner.client)
    expect(ownerReads).toMatchObject({ upgrade: albumId, members: owner.userId })
    expect((ownerReads.batch as unknown[]).every((hex) => typeof hex === 'string')).toBe(true)
    const unknown = await readsOf(stranger.client, randomUUID())
    expect(unknown).toMatchObject({ feed: '404 error.not_found', upgrade: '404 error.not_found', members: '404 error.not_found' })
    const asStranger = { ...(await readsOf(stranger.client)), feed: unknown.feed }
    expect(asStranger).toEqual({
      feed: '404 error.not_found',
      upgrade: '404 error.not_found',
      blob: '404 error.not_found',
      batch: blobHashes.map(() => 404),
      receipts: '404 error.not_found',
      members: '404 error.not_found',
    })

    const userId = await owner.client.lookupAccount(await emailOf(viewer))
    expect(userId).toBe(viewer.userId)
    const sealed = randomBytes(2000)
    const invited = await owner.client.inviteMember(albumId, userId, 'viewer', sealed)
    expect(invited).toMatchObject({ user_id: viewer.userId, role: 'viewer', state: 'invited', accepted_at: null })
    // Invited is not yet a member.
    expect(await readsOf(viewer.client)).toEqual(asStranger)
    const { invitations } = await viewer.client.listInvitations()
    expect(invitations).toHaveLength(1)
    expect(invitations[0]).toMatchObject({ album_id: albumId, role: 'viewer', owner: { user_id: owner.userId, email: await emailOf(owner) } })
    expect(Buffer.from(invitations[0]!.invitation, 'base64')).toEqual(sealed)
    expect((await viewer.client.listSharedAlbums()).albums).toEqual([])

    expect(await viewer.client.acceptInvitation(albumId)).toMatchObject({ album_id: albumId, role: 'viewer' })
    expect(await readsOf(viewer.client)).toEqual(ownerReads)
    expect((await viewer.client.listInvitations()).invitations).toEqual([])
    expect((await viewer.client.listSharedAlbums()).albums).toEqual([
      expect.objectContaining({ album_id: albumId, owner_id: owner.userId, role: 'viewer', protocol_version: expect.any(String) }),
    ])
    expect((await owner.client.listAlbums()).albums.map((a) => a.album_id)).toContain(albumId)
    expect((await viewer.client.listAlbums()).albums).toEqual([]) // the albums it owns: none
    for (const client of [owner.client, viewer.client])
      expect((await client.listMembers(albumId)).members).toEqual([expect.objectContaining({ user_id: viewer.userId, state: 'active', role: 'viewer' })])
    expect(await problemOf(viewer.client.acceptInvitation(albumId))).toMatchObject({ status: 404 })

    await owner.client.removeMember(albumId, viewer.userId)
    expect(await readsOf(viewer.client)).toEqual(asStranger)
    expect((await viewer.client.listSharedAlbums()).albums).toEqual([])
    expect((await owner.client.listMembers(albumId)).members).toEqual([])
  })

  it('a member leaves; an invitee declines; the owner takes an invitation back; each ends access at once', async () => {
    const [leaving, declining, withdrawn] = [await account('leaving'), await account('declining'), await account('withdrawn')]
    for (const [library, role] of [
      [leaving, 'contributor'],
      [declining, 'viewer'],
      [withdrawn, 'viewer'],
    ] as const)
      await owner.client.inviteMember(albumId, library.userId, role, Uint8Array.of(1))
    await leaving.client.acceptInvitation(albumId)
    expect((await leaving.client.listSharedAlbums()).albums).toMatchObject([{ album_id: albumId, role: 'contributor' }])
    // A member sees members, not invitees; the owner sees both.
    expect((await leaving.client.listMembers(albumId)).members.map((m) => m.user_id)).toEqual([leaving.userId])
    const byId = (a: unknown[], b: unknown[]): number => String(a[0]).localeCompare(String(b[0]))
    expect((await owner.client.listMembers(albumId)).members.map((m) => [m.user_id, m.state])).toEqual(
      [
        [leaving.userId, 'active'],
        [declining.userId, 'invited'],
        [withdrawn.userId, 'invited'],
      ].sort(byId), // invited at one instant (the test's clock stands still): then by user id
    )
    // Nobody but the owner removes another; an invitee does not "leave" (it declines).
    expect(await problemOf(leaving.client.removeMember(albumId, declining.userId))).toMatchObject({ status: 404, code: 'error.not_found' })
    expect(await problemOf(declining.client.removeMember(albumId, declining.userId))).toMatchObject({ status: 404 })

    await leaving.client.removeMember(albumId, leaving.userId)
    expect((await readsOf(leaving.client)).feed).toBe('404 error.not_found')
    await declining.client.declineInvitation(albumId)
    expect(await problemOf(declining.client.acceptInvitation(albumId))).toMatchObject({ status: 404 })
    expect(await problemOf(declining.client.declineInvitation(albumId))).toMatchObject({ status: 404 })
    await owner.client.removeMember(albumId, withdrawn.userId)
    expect((await withdrawn.client.listInvitations()).invitations).toEqual([])
    expect((await owner.client.listMembers(albumId)).members).toEqual([])
  })

  it('the owner replaces what it sealed for a member; a member keeps its keyring and reads its membership; nobody else does either', async () => {
    const [keeper, stranger] = [await account('keeper'), await account('keeper-stranger')]
    await owner.client.inviteMember(albumId, keeper.userId, 'viewer', Uint8Array.of(1))
    // Before accepting: no membership to read, no keyring to keep.
    expect(await problemOf(keeper.client.readMembership(albumId))).toMatchObject({ status: 404 })
    expect(await problemOf(keeper.client.storeKeyring(albumId, Uint8Array.of(9)))).toMatchObject({ status: 404 })
    await owner.client.replaceInvitation(albumId, keeper.userId, Uint8Array.of(2, 2))
    expect(Buffer.from((await keeper.client.listInvitations()).invitations[0]!.invitation, 'base64')).toEqual(Buffer.from([2, 2]))
    await keeper.client.acceptInvitation(albumId)
    expect(await keeper.client.readMembership(albumId)).toEqual({
      album_id: albumId,
      owner_id: owner.userId,
      role: 'viewer',
      invitation: 'AgI=',
      keyring: null,
    })
    await keeper.client.storeKeyring(albumId, Uint8Array.of(7, 7, 7))
    await owner.client.replaceInvitation(albumId, keeper.userId, Uint8Array.of(3))
    expect(await keeper.client.readMembership(albumId)).toMatchObject({ invitation: 'Aw==', keyring: 'BwcH' })
    for (const refused of [
      () => keeper.client.replaceInvitation(albumId, keeper.userId, Uint8Array.of(4)), // only the owner
      () => stranger.client.readMembership(albumId),
      () => stranger.client.storeKeyring(albumId, Uint8Array.of(1)),
      () => owner.client.readMembership(albumId), // the owner is no member
      () => owner.client.replaceInvitation(albumId, stranger.userId, Uint8Array.of(1)),
    ])
      expect(await problemOf(refused())).toMatchObject({ status: 404, code: 'error.not_found' })
    expect(await problemOf(keeper.client.storeKeyring(albumId, new Uint8Array(65_537)))).toMatchObject({ status: 422, code: 'error.request.invalid' })
    expect(await keeper.client.readMembership(albumId)).toMatchObject({ invitation: 'Aw==', keyring: 'BwcH' })
    await owner.client.removeMember(albumId, keeper.userId)
    expect(await problemOf(keeper.client.readMembership(albumId))).toMatchObject({ status: 404 })
  })

  it('refuses what is not the owner’s to do, or not an invitation: nothing is written', async () => {
    const [member, other] = [await account('member'), await account('other')]
    const noDirectory = await uploader(server, 'no-directory')
    const withoutKeys = await registered(server, 'without-keys')
    const withoutKeysId = (await withoutKeys.client.getProfile()).user_id
    await owner.client.inviteMember(albumId, member.userId, 'contributor', Uint8Array.of(7))
    await member.client.acceptInvitation(albumId)
    const refusals: Array<[() => Promise<unknown>, number, string]> = [
      [() => member.client.inviteMember(albumId, other.userId, 'viewer', Uint8Array.of(1)), 404, 'error.not_found'], // a member does not invite
      [() => other.client.inviteMember(albumId, other.userId, 'viewer', Uint8Array.of(1)), 404, 'error.not_found'],
      [() => owner.client.inviteMember(albumId, owner.userId, 'viewer', Uint8Array.of(1)), 422, 'error.request.invalid'],
      [() => owner.client.inviteMember(albumId, randomUUID(), 'viewer', Uint8Array.of(1)), 404, 'error.not_found'],
      [() => owner.client.inviteMember(albumId, withoutKeysId, 'viewer', Uint8Array.of(1)), 409, 'error.directory.required'],
      [() => owner.client.inviteMember(albumId, member.userId, 'viewer', Uint8Array.of(1)), 409, 'error.member.exists'],
      [() => owner.client.inviteMember(albumId, noDirectory.userId, 'viewer', new Uint8Array(0)), 422, 'error.request.invalid'],
      [() => owner.client.inviteMember(albumId, noDirectory.userId, 'viewer', new Uint8Array(65_537)), 422, 'error.request.invalid'],
      [() => owner.client.lookupAccount('nobody-here@example.org'), 404, 'error.not_found'],
    ]
    for (const [call, status, code] of refusals) expect(await problemOf(call())).toMatchObject({ status, code })
    const token = owner.client.tokens!.access_token
    const badBody = await raw(server, 'POST', `/v1/albums/${albumId}/members`, {
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ user_id: noDirectory.userId, role: 'owner', invitation: 'AQ==' }),
    })
    expect(badBody.status).toBe(422)
    const notBase64 = await raw(server, 'POST', `/v1/albums/${albumId}/members`, {
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ user_id: noDirectory.userId, role: 'viewer', invitation: 'not base64!' }),
    })
    expect(notBase64.json).toMatchObject({ status: 422, code: 'error.request.invalid' })
    expect((await owner.client.listMembers(albumId)).members.map((m) => m.user_id)).toEqual([member.userId])
    expect((await member.client.listMembers(albumId)).members.map((m) => m.role)).toEqual(['contributor'])
    await owner.client.removeMember(albumId, member.userId)
  })

  it(`at most INVITATIONS_MAX (${INVITATIONS_MAX}) invitations wait for an answer, however many are sent at once`, async () => {
    const inviter = await account('inviter')
    const { album } = await seedAlbum(inviter, 'Burst', 1, 1)
    const invitees = await Promise.all(Array.from({ length: 8 }, (_, i) => account(`invitee-${i}`)))
    const outcomes = await Promise.all(
      invitees.map((invitee) =>
        inviter.client.inviteMember(album.albumId, invitee.userId, 'viewer', Uint8Array.of(1)).then(
          () => 201,
          (error: CofferProblem) => `${error.status} ${error.code}`,
        ),
      ),
    )
    expect(outcomes.filter((outcome) => outcome === 201)).toHaveLength(INVITATIONS_MAX)
    expect(outcomes.filter((outcome) => outcome === '409 error.member.too_many_invitations')).toHaveLength(8 - INVITATIONS_MAX)
    expect((await inviter.client.listMembers(album.albumId)).members).toHaveLength(INVITATIONS_MAX)
    // An answer frees a place.
    const answered = invitees[outcomes.indexOf(201)]!
    await answered.client.declineInvitation(album.albumId)
    const next = invitees[outcomes.findIndex((outcome) => outcome !== 201)]!
    expect(await inviter.client.inviteMember(album.albumId, next.userId, 'viewer', Uint8Array.of(1))).toMatchObject({ state: 'invited' })
  })

  it(`at most ACCOUNT_LOOKUP_MAX (${LOOKUP_MAX}) lookups per window, however many are sent at once; then 429 with Retry-After`, async () => {
    const looker = await account('looker')
    const email = await emailOf(owner)
    const outcomes = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        looker.client.lookupAccount(i % 2 === 0 ? email : `unknown-${i}@example.org`).then(
          () => 200,
          (error: CofferProblem) => error.status,
        ),
      ),
    )
    expect(outcomes.filter((status) => status !== 429)).toHaveLength(LOOKUP_MAX)
    const refused = await problemOf(looker.client.lookupAccount(email))
    expect(refused).toMatchObject({ status: 429, code: 'error.rate_limited' })
    expect(Number(refused.headers?.get('retry-after'))).toBeGreaterThan(0)
    server.clock.advance(3_600_000)
    expect(await looker.client.lookupAccount(email)).toBe(owner.userId)
  })

  it('deleting an account ends what it shared and what was shared with it, at once', async () => {
    const [sharing, member] = [await account('deleting-owner'), await account('deleting-member')]
    const { album } = await seedAlbum(sharing, 'Gone', 1, 1)
    await sharing.client.inviteMember(album.albumId, member.userId, 'viewer', Uint8Array.of(1))
    await member.client.acceptInvitation(album.albumId)
    await owner.client.inviteMember(albumId, member.userId, 'contributor', Uint8Array.of(1))
    await member.client.acceptInvitation(albumId)
    expect((await member.client.listSharedAlbums()).albums.map((a) => a.album_id).sort()).toEqual([album.albumId, albumId].sort())

    await sharing.client.deleteAccount()
    expect((await member.client.listSharedAlbums()).albums.map((a) => a.album_id)).toEqual([albumId])
    expect(await problemOf(member.client.feed(album.albumId, 0, 10))).toMatchObject({ status: 404, code: 'error.not_found' })

    await member.client.deleteAccount()
    expect((await owner.client.listMembers(albumId)).members).toEqual([])
  })
})

describe('contributors and viewers writing into a shared album', () => {
  let albumOwner: Uploader
  let contributor: Uploader
  let viewer: Uploader
  let shared: string

  beforeAll(async () => {
    ;[albumOwner, contributor, viewer] = await Promise.all([uploader(server, 'w-owner'), uploader(server, 'w-contributor'), uploader(server, 'w-viewer')])
    shared = await provisioned(albumOwner)
    for (const [member, role] of [
      [contributor, 'contributor'],
      [viewer, 'viewer'],
    ] as const) {
      await albumOwner.client.inviteMember(shared, member.userId, role, Uint8Array.of(1))
      await member.client.acceptInvitation(shared)
    }
  })

  /** A new photo of `member` in the album: its upload and signed create; the asset as a delete names it. */
  async function added(member: Uploader): Promise<DeletionTarget & { readonly blobs: string[] }> {
    const bundle = await openBundle(member, shared)
    const write = await writeFor(member, bundle)
    await member.client.applyManifest(shared, write.request)
    return {
      albumId: shared,
      fileId: write.envelope.file_id,
      head: write.manifestHash,
      original: bundle.hashes.ciphertextHash,
      blobs: [bundle.hashes.ciphertextHash, ...bundle.hashes.derivativeHashes, bundle.hashes.metadataBlobHash!, write.manifestHash],
    }
  }

  it("storage verification of a contributor's photo: the owner and the viewer get the contributor's own verdicts; a stranger, unknown", async () => {
    const photo = await added(contributor)
    const request = { assets: [{ asset_id: photo.fileId, blob_hashes: photo.blobs }] }
    const own = await contributor.client.verifyStorage(request)
    expect(own.verdicts[0]).toMatchObject({ asset_id: photo.fileId, durable: true })
    const verdictsOf = (answer: typeof own) => answer.verdicts.map(({ checked_at: _checked, ...verdict }) => verdict)
    for (const member of [albumOwner, viewer]) expect(verdictsOf(await member.client.verifyStorage(request))).toEqual(verdictsOf(own))
    const stranger = await uploader(server, 'w-verify-stranger')
    const unknown = await stranger.client.verifyStorage(request)
    expect(unknown.verdicts[0]).toMatchObject({ durable: false })
    expect(unknown.verdicts[0]!.blobs.every((blob) => blob.role === 'unknown' && !blob.stored)).toBe(true)
  })

  it('every route of a shared album refuses a stranger and a removed member as an unknown album: 404, nothing written', async () => {
    const photo = await added(contributor)
    const [stranger, removed] = await Promise.all([uploader(server, 'w-stranger'), uploader(server, 'w-removed')])
    await albumOwner.client.inviteMember(shared, removed.userId, 'contributor', Uint8Array.of(1))
    await removed.client.acceptInvitation(shared)
    const pending = await openBundle(removed, shared) // opened while a member
    const write = await writeFor(removed, pending)
    await albumOwner.client.removeMember(shared, removed.userId)
    const before = (await albumOwner.client.feed(shared, 0, 1000)).entries.length
    for (const outsider of [stranger, removed]) {
      const { client } = outsider
      const routes: Record<string, () => Promise<unknown>> = {
        feed: () => client.feed(shared, 0, 10),
        upgrade: () => client.readUpgrade(shared),
        blob: () => client.downloadBlob(photo.original),
        receipts: () => client.assetReceipts(photo.fileId),
        members: () => client.listMembers(shared),
        membership: () => client.readMembership(shared),
        keyring: () => client.storeKeyring(shared, Uint8Array.of(7)),
        invite: () => client.inviteMember(shared, stranger.userId === outsider.userId ? removed.userId : stranger.userId, 'viewer', Uint8Array.of(1)),
        replaceInvitation: () => client.replaceInvitation(shared, contributor.userId, Uint8Array.of(2)),
        remove: () => client.removeMember(shared, contributor.userId),
        accept: () => client.acceptInvitation(shared),
        upload: () => openBundle(outsider, shared),
        write: () => client.applyManifest(shared, write.request),
        delete: async () => client.deleteAsset(shared, photo.fileId, (await deletionFor(outsider, photo)).request),
      }
      for (const [name, route] of Object.entries(routes))
        expect(await problemOf(route()), `${name} by a ${outsider === stranger ? 'stranger' : 'removed member'}`).toMatchObject({
          status: 404,
          code: 'error.not_found',
        })
      const batch = await client.downloadBlobs(photo.blobs.slice(0, 3))
      expect([...batch.refused.values()].map((refusal) => refusal.status)).toEqual([404, 404, 404])
    }
    expect((await albumOwner.client.feed(shared, 0, 1000)).entries).toHaveLength(before)
    expect((await albumOwner.client.listMembers(shared)).members.map((member) => member.user_id).sort()).toEqual([contributor.userId, viewer.userId].sort())
  })

  it("a contributor's photo is stored against its own quota, signed by it, and read byte for byte by the owner and the viewer", async () => {
    const [ownerBefore, contributorBefore] = [await albumOwner.client.storageUsage(), await contributor.client.storageUsage()]
    const photo = await added(contributor)
    const entry = (await albumOwner.client.feed(shared, 0, 100)).entries.find((e) => e.asset_id === photo.fileId)!
    expect(entry).toMatchObject({ action: 'create', envelope_hash: photo.head })
    for (const reader of [albumOwner, viewer, contributor])
      for (const hash of photo.blobs) expect(sha256(await downloaded(reader, hash)), `${hash} for ${reader.userId}`).toBe(hash)
    expect((await albumOwner.client.storageUsage()).stored_bytes).toBe(ownerBefore.stored_bytes)
    expect((await contributor.client.storageUsage()).stored_bytes).toBeGreaterThan(contributorBefore.stored_bytes)
    // Storage verification reads the photo's own custody: the contributor may free its copy, and the owner sees the same.
    const asked = { assets: [{ asset_id: photo.fileId, blob_hashes: photo.blobs }] }
    expect((await contributor.client.verifyStorage(asked)).verdicts[0]).toMatchObject({ durable: true })
    expect((await albumOwner.client.verifyStorage(asked)).verdicts[0]).toMatchObject({ durable: true })
  })

  it('a viewer writes nothing (403 error.member.read_only); a contributor changes only its own photos (403 error.member.not_creator); the owner any', async () => {
    const ownersPhoto = await added(albumOwner)
    const contributorsPhoto = await added(contributor)
    const feedBefore = (await albumOwner.client.feed(shared, 0, 1000)).entries.length
    const refusals: Array<[() => Promise<unknown>, number, string]> = [
      [() => openBundle(viewer, shared), 403, 'error.member.read_only'],
      [
        async () => viewer.client.deleteAsset(shared, contributorsPhoto.fileId, (await deletionFor(viewer, contributorsPhoto)).request),
        403,
        'error.member.read_only',
      ],
      [
        async () => contributor.client.deleteAsset(shared, ownersPhoto.fileId, (await deletionFor(contributor, ownersPhoto)).request),
        403,
        'error.member.not_creator',
      ],
      [
        async () => contributor.client.trashAsset(shared, ownersPhoto.fileId, (await deletionFor(contributor, ownersPhoto)).request),
        403,
        'error.member.not_creator',
      ],
    ]
    for (const [call, status, code] of refusals) expect(await problemOf(call())).toMatchObject({ status, code })
    expect((await albumOwner.client.feed(shared, 0, 1000)).entries).toHaveLength(feedBefore)

    // Its own: the contributor trashes it, restores it, deletes it; the owner deletes the owner's own and anyone's.
    await contributor.client.trashAsset(shared, contributorsPhoto.fileId, (await deletionFor(contributor, contributorsPhoto)).request)
    expect(await problemOf(viewer.client.restoreAsset(shared, contributorsPhoto.fileId))).toMatchObject({ status: 403, code: 'error.member.read_only' })
    await contributor.client.restoreAsset(shared, contributorsPhoto.fileId)
    expect(
      (await contributor.client.deleteAsset(shared, contributorsPhoto.fileId, (await deletionFor(contributor, contributorsPhoto)).request)).replayed,
    ).toBeFalsy()
    const another = await added(contributor)
    await albumOwner.client.deleteAsset(shared, another.fileId, (await deletionFor(albumOwner, another)).request)
    await albumOwner.client.trashAsset(shared, ownersPhoto.fileId, (await deletionFor(albumOwner, ownersPhoto)).request)
    expect(await problemOf(contributor.client.restoreAsset(shared, ownersPhoto.fileId))).toMatchObject({ status: 403, code: 'error.member.not_creator' })
    await albumOwner.client.restoreAsset(shared, ownersPhoto.fileId)
    const actions = (await albumOwner.client.feed(shared, 0, 1000)).entries.slice(feedBefore).map((e) => [e.asset_id, e.action])
    expect(actions).toEqual([
      [contributorsPhoto.fileId, 'delete'],
      [another.fileId, 'create'],
      [another.fileId, 'delete'],
    ])
  })

  it("moderation: a contributor's photo taken down is withheld from every member and on the contributor's record; a suspended contributor writes nothing, and still reads", async () => {
    const admin = new CofferAdmin({ baseUrl: server.url, adminToken: ADMIN_TOKEN })
    const photo = await added(contributor)
    const record = await admin.takeDown(photo.fileId, 'reported')
    expect(record.events.at(-1)).toMatchObject({ action: 'taken_down', asset_id: photo.fileId })
    expect((await contributor.client.moderationRecord()).events.at(-1)).toMatchObject({ action: 'taken_down', asset_id: photo.fileId })
    for (const reader of [albumOwner, viewer, contributor]) expect(await downloaded(reader, photo.original)).toBe(451)
    await admin.restore(photo.fileId)
    expect(sha256(await downloaded(viewer, photo.original))).toBe(photo.original)

    await admin.suspend(contributor.userId, 'spam')
    expect(await problemOf(openBundle(contributor, shared))).toMatchObject({ status: 403, code: 'error.account.suspended' })
    expect(await problemOf(contributor.client.setPartner(albumOwner.userId, 'viewer'))).toMatchObject({ status: 403, code: 'error.account.suspended' })
    expect(sha256(await downloaded(contributor, photo.original))).toBe(photo.original)
    await admin.reinstate(contributor.userId)
    expect((await added(contributor)).fileId).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('a contributor removed, or become a viewer by being invited again as one, writes nothing more; its photos stay', async () => {
    const before = await added(contributor)
    const pending = await openBundle(contributor, shared) // opened while a contributor
    const write = await writeFor(contributor, pending)
    await albumOwner.client.removeMember(shared, contributor.userId)
    expect(await problemOf(contributor.client.applyManifest(shared, write.request))).toMatchObject({ status: 404, code: 'error.not_found' })
    expect(await problemOf(openBundle(contributor, shared))).toMatchObject({ status: 404, code: 'error.not_found' })
    expect(await problemOf(contributor.client.deleteAsset(shared, before.fileId, (await deletionFor(contributor, before)).request))).toMatchObject({
      status: 404,
    })
    // Its photo stays the album's, read by those who still may.
    expect(sha256(await downloaded(viewer, before.original))).toBe(before.original)
    expect(await downloaded(contributor, before.original)).toBe(404)

    await albumOwner.client.inviteMember(shared, contributor.userId, 'viewer', Uint8Array.of(1))
    await contributor.client.acceptInvitation(shared)
    expect(await problemOf(openBundle(contributor, shared))).toMatchObject({ status: 403, code: 'error.member.read_only' })
    expect(sha256(await downloaded(contributor, before.original))).toBe(before.original)
  })

  it("a contributor's account deleted: its photos go with its data at the purge; their entries stay in the album's history", async () => {
    const leaving = await uploader(server, 'w-leaving')
    await albumOwner.client.inviteMember(shared, leaving.userId, 'contributor', Uint8Array.of(1))
    await leaving.client.acceptInvitation(shared)
    const photo = await added(leaving)
    await leaving.client.deleteAccount()
    await maintain(server.deps)
    const entries = (await albumOwner.client.feed(shared, 0, 1000)).entries
    expect(entries.filter((e) => e.asset_id === photo.fileId).map((e) => e.action)).toEqual(['create'])
    for (const hash of photo.blobs) expect(await downloaded(albumOwner, hash), hash).toBe(404)
    expect(await problemOf(albumOwner.client.assetReceipts(photo.fileId))).toMatchObject({ status: 404 })
  })
})

describe('partners: sharing every album with an account', () => {
  it('names a partner (a new role for one already named), lists it on both sides, refuses itself and strangers, and stops', async () => {
    const sharer = await registered(server, 'sharer')
    const partner = await registered(server, 'partner')
    const [{ user_id: sharerId }, { user_id: partnerId }] = await Promise.all([sharer.client.getProfile(), partner.client.getProfile()])
    expect(await sharer.client.setPartner(partnerId, 'viewer')).toMatchObject({ user_id: partnerId, email: partner.email, role: 'viewer' })
    expect(await sharer.client.setPartner(partnerId, 'contributor')).toMatchObject({ user_id: partnerId, role: 'contributor' })
    expect((await sharer.client.listPartners()).partners).toEqual([expect.objectContaining({ user_id: partnerId, role: 'contributor' })])
    expect(await partner.client.listPartners()).toMatchObject({
      partners: [],
      partner_of: [expect.objectContaining({ user_id: sharerId, email: sharer.email, role: 'contributor' })],
    })
    expect(await problemOf(sharer.client.setPartner(sharerId, 'viewer'))).toMatchObject({ status: 422, code: 'error.request.invalid' })
    expect(await problemOf(sharer.client.setPartner(randomUUID(), 'viewer'))).toMatchObject({ status: 404, code: 'error.not_found' })
    const badRole = await raw(server, 'PUT', `/v1/partners/${partnerId}`, {
      headers: { authorization: `Bearer ${sharer.client.tokens!.access_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ role: 'owner' }),
    })
    expect(badRole.status).toBe(422)
    await sharer.client.removePartner(partnerId)
    expect(await problemOf(sharer.client.removePartner(partnerId))).toMatchObject({ status: 404, code: 'error.not_found' })
    expect((await partner.client.listPartners()).partner_of).toEqual([])
  })

  it('at most PARTNERS_MAX (8) partners, however many are named at once', async () => {
    const sharer = await registered(server, 'many-partners')
    const others = await Promise.all(Array.from({ length: 11 }, (_, i) => registered(server, `partner-${i}`).then((member) => member.client.getProfile())))
    const outcomes = await Promise.all(
      others.map((other) =>
        sharer.client.setPartner(other.user_id, 'viewer').then(
          () => 200,
          (error: CofferProblem) => `${error.status} ${error.code}`,
        ),
      ),
    )
    expect(outcomes.filter((outcome) => outcome === 200)).toHaveLength(8)
    expect(outcomes.filter((outcome) => outcome === '409 error.member.too_many_partners')).toHaveLength(3)
    expect((await sharer.client.listPartners()).partners).toHaveLength(8)
  })
})

function sha256(bytes: Buffer | number): string | number {
  return typeof bytes === 'number' ? bytes : createHash('sha256').update(bytes).digest('hex')
}
