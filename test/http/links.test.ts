// Public links, the server's half and the client library's (decision 0068; docs/sharing.md
// "Public links"): the owner makes a link (the secret in the URL's fragment, never sent), anyone
// with the URL opens it with no account and reads that album's (that selection's) photos, and
// nothing else; a password, an expiry, a number of opens, the owner's revocation and the
// operator's disabling each stop it as documented, mid-view too; the limits hold under a burst.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { randomBytes, randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { liveEntries, type Library } from '../../src/client/albums.ts'
import { openAsset, openDerivative, openOriginal } from '../../src/client/files.ts'
import { createLink, listOwnLinks, LinkPasswordError, openPublicLink, revokeLink, type OpenedPublicLink } from '../../src/client/links.ts'
import { nativeArgon2id } from '../../src/client/node/crypto.ts'
import { contactsFile } from '../../src/client/node/contacts.ts'
import type { SharingAccount } from '../../src/client/sharing.ts'
import { CofferAdmin } from '../../src/sdk/admin.ts'
import { CofferProblem } from '../../src/sdk/client.ts'
import { raw } from '../support/actors.ts'
import { photoLibrary } from '../support/albums.ts'
import { seedAlbum, swatch } from '../support/gallery.ts'
import { flipStoredByte } from '../support/blobs.ts'
import { readRows, writeRows } from '../support/database.ts'
import { startServer, type TestServer } from '../support/server.ts'

const ADMIN_TOKEN = randomBytes(32).toString('base64url')
const OPEN_FAILURES_PER_LINK = 5
const LINKS_MAX = 20

let server: TestServer
let owner: SharingAccount
let albumId: string
let assetIds: string[]
const folder = mkdtempSync(path.join(tmpdir(), 'coffer-links-'))

const account = async (label: string): Promise<SharingAccount> => {
  const library: Library = await photoLibrary(server, label)
  return { library, contacts: contactsFile(path.join(folder, `${label}-${library.userId}.sqlite`)) }
}

/** What a read through a link answers: its value, or the problem's status and code. */
const outcome = (read: Promise<unknown>): Promise<unknown> =>
  read.then(
    (value) => value,
    (error: unknown) => (error instanceof CofferProblem ? `${error.status} ${error.code}` : Promise.reject(error)),
  )

/** Every photo the link shows, opened as its page opens them: its thumbnail's bytes, and its original's when the link gives it. */
async function photosThrough(opened: OpenedPublicLink): Promise<Map<string, { thumbnail: string; original: string | number }>> {
  const photos = new Map<string, { thumbnail: string; original: string | number }>()
  const entries = (await opened.client.feed(opened.contents.albumId, 0, 1000)).entries.filter((entry) => entry.action !== 'delete')
  const latest = new Map(entries.map((entry) => [entry.asset_id, entry]))
  const metadata = await opened.client.downloadBlobs([...latest.values()].map((entry) => entry.metadata_blob_hash!))
  for (const entry of latest.values()) {
    const asset = await openAsset(opened.keys, entry, metadata.blobs.get(entry.metadata_blob_hash!)!)
    if (asset.metadata.type === 'application/vnd.coffer.album') continue
    const thumbnailHash = asset.metadata.blobs.find((blob) => blob.kind === 'thumbnail')!.hash
    const thumbnail = await openDerivative(asset, 'thumbnail', await opened.client.downloadBlob(Buffer.from(thumbnailHash).toString('hex')))
    const original = await opened.client
      .downloadBlob(asset.envelope.ciphertext_hash)
      .then(async (bytes) => Buffer.from(await openOriginal(asset, bytes)).toString('hex'))
      .catch((error: unknown) => (error instanceof CofferProblem ? error.status : Promise.reject(error)))
    photos.set(entry.asset_id, { thumbnail: Buffer.from(thumbnail).toString('hex'), original })
  }
  return photos
}

beforeAll(async () => {
  server = await startServer({ ADMIN_TOKEN, LINK_OPEN_FAILURES_PER_LINK: String(OPEN_FAILURES_PER_LINK), LINKS_MAX: String(LINKS_MAX) })
  owner = await account('owner')
  const seeded = await seedAlbum(owner.library, 'Wedding', 4, 2)
  albumId = seeded.album.albumId
  assetIds = seeded.assetIds
}, 60_000)
afterAll(async () => {
  await server?.close()
})

describe('a public link', () => {
  it('opens with no account and shows every photo of the album, byte for byte, through the link’s routes only', async () => {
    const { url, link } = await createLink(owner, albumId)
    expect(link).toMatchObject({ album_id: albumId, asset_ids: null, downloads: true, password: false, opens: 0, state: 'active' })
    expect(new URL(url).pathname).toBe(`/s/${link.link_id}`)
    const opened = await openPublicLink(url)
    expect(opened.contents).toMatchObject({ albumId, name: 'Wedding', ownerId: owner.library.userId })
    const photos = await photosThrough(opened)
    expect([...photos.keys()].sort()).toEqual([...assetIds].sort())
    const swatches = await Promise.all([0, 1, 2, 3].map(async (n) => Buffer.from(await swatch(n)).toString('hex')))
    for (const photo of photos.values()) {
      expect(swatches).toContain(photo.thumbnail)
      expect(photo.original).toBe(photo.thumbnail)
    }
    // The session opens nothing but the link's routes: not the account's, not another album's.
    const bearer = { authorization: `Bearer ${opened.session}` }
    expect((await raw(server, 'GET', '/v1/albums', { headers: bearer })).status).toBe(401)
    expect((await raw(server, 'GET', `/v1/albums/${albumId}/feed`, { headers: bearer })).status).toBe(401)
    const other = await seedAlbum(owner.library, 'Private', 1, 1)
    const otherEntry = (await liveEntries(owner.library.client, other.album.albumId)).find((entry) => entry.asset_id === other.assetIds[0])!
    expect(await outcome(opened.client.downloadBlob(otherEntry.metadata_blob_hash!))).toBe('404 error.not_found')
    expect((await opened.client.downloadBlobs([otherEntry.metadata_blob_hash!])).refused.get(otherEntry.metadata_blob_hash!)).toEqual({
      status: 404,
      code: 'error.not_found',
    })
    expect((await listOwnLinks(owner.library, albumId)).find((owned) => owned.link.link_id === link.link_id)).toMatchObject({ url, link: { opens: 1 } })
  })

  it('of a selection shows those photos only; without downloads, no original of a photo that has a preview', async () => {
    const chosen = assetIds.slice(0, 2)
    const { url, link } = await createLink(owner, albumId, { assetIds: chosen, downloads: false })
    expect(link).toMatchObject({ asset_ids: [...chosen].sort(), downloads: false })
    const opened = await openPublicLink(url)
    expect(opened.selection).toBe(true)
    const feed = await opened.client.feed(albumId, 0, 1000)
    expect(new Set(feed.entries.map((entry) => entry.asset_id))).toEqual(new Set(chosen))
    // The swatches have a thumbnail only: they are shown from their originals, which the link therefore serves.
    const photos = await photosThrough(opened)
    expect([...photos.values()].every((photo) => typeof photo.original === 'string')).toBe(true)
    // A photo with a preview: its original is withheld from a view-only link, served to one with downloads.
    const previewed = await seedAlbum(owner.library, 'Previews', 1, 1, undefined, undefined, true)
    const viewOnly = await openPublicLink((await createLink(owner, previewed.album.albumId, { downloads: false })).url)
    const withDownloads = await openPublicLink((await createLink(owner, previewed.album.albumId)).url)
    expect([...(await photosThrough(viewOnly)).values()].map((photo) => photo.original)).toEqual([404])
    expect([...(await photosThrough(withDownloads)).values()].map((photo) => typeof photo.original)).toEqual(['string'])
    // A photo outside the selection, through the selection's link: as if it did not exist.
    const outside = (await liveEntries(owner.library.client, albumId)).find((entry) => entry.asset_id === assetIds[3])!
    expect(await outcome(opened.client.downloadBlob(outside.metadata_blob_hash!))).toBe('404 error.not_found')
    // Only live photos of the album may be chosen.
    expect(await outcome(createLink(owner, albumId, { assetIds: [randomUUID()] }))).toBe('422 error.request.invalid')
  })

  it('with a password: the URL alone opens nothing, a wrong password is refused and counted, the right one opens it', async () => {
    const { url, link } = await createLink(owner, albumId, { password: 'confetti', argon2id: nativeArgon2id })
    expect(link.password).toBe(true)
    await expect(openPublicLink(url)).rejects.toThrow(LinkPasswordError)
    const wrong = await openPublicLink(url, { password: 'Confetti', argon2id: nativeArgon2id }).catch((error: unknown) => error)
    expect(wrong).toBeInstanceOf(LinkPasswordError)
    expect((wrong as LinkPasswordError).wrong).toBe(true)
    const opened = await openPublicLink(url, { password: 'confetti', argon2id: nativeArgon2id })
    expect((await photosThrough(opened)).size).toBe(assetIds.length)
    // The probe says how to stretch it, never anything that opens it.
    const probe = await server.client().probeLink(link.link_id)
    expect(probe.password).toMatchObject({ memory_kib: 65_536, iterations: 3 })
  })

  it('refuses a burst of wrong tokens past LINK_OPEN_FAILURES_PER_LINK, then the right one too, until the window ends', async () => {
    const { url, link } = await createLink(owner, albumId)
    const anonymous = server.client()
    const tries = await Promise.all(Array.from({ length: 12 }, () => outcome(anonymous.openLink(link.link_id, randomBytes(32).toString('base64url')))))
    expect(tries.filter((answer) => answer === '403 error.link.denied')).toHaveLength(OPEN_FAILURES_PER_LINK)
    expect(tries.filter((answer) => answer === '429 error.rate_limited')).toHaveLength(12 - OPEN_FAILURES_PER_LINK)
    expect(await outcome(openPublicLink(url))).toBe('429 error.rate_limited')
    server.clock.advance(16 * 60_000)
    expect((await openPublicLink(url)).linkId).toBe(link.link_id)
  })

  it('opens at most max_opens times under a burst; the sessions already open read on', async () => {
    const { url } = await createLink(owner, albumId, { maxOpens: 2 })
    // Each open is counted while its token is checked (a burst of guesses gets no more looks), so the burst stays within the link's budget.
    const opens = await Promise.all(Array.from({ length: OPEN_FAILURES_PER_LINK }, () => outcome(openPublicLink(url))))
    const sessions = opens.filter((answer): answer is OpenedPublicLink => typeof answer === 'object')
    expect(sessions).toHaveLength(2)
    expect(opens.filter((answer) => answer === '410 error.link.used_up')).toHaveLength(OPEN_FAILURES_PER_LINK - 2)
    expect((await sessions[0]!.client.feed(albumId)).entries.length).toBeGreaterThan(0)
  })

  it('stops mid-view when revoked, expired or disabled by the operator, saying which; the owner sees each state', async () => {
    const revoked = await openPublicLink((await createLink(owner, albumId)).url)
    const expiring = await createLink(owner, albumId, { expiresInS: 3600 })
    const expired = await openPublicLink(expiring.url)
    const disabled = await openPublicLink((await createLink(owner, albumId)).url)
    for (const opened of [revoked, expired, disabled]) expect((await opened.client.feed(albumId)).entries.length).toBeGreaterThan(0)
    const hash = (await revoked.client.feed(albumId)).entries.find((entry) => entry.metadata_blob_hash !== undefined)!.metadata_blob_hash!

    await revokeLink(owner.library, revoked.linkId)
    expect(await outcome(revoked.client.feed(albumId))).toBe('410 error.link.revoked')
    expect(await outcome(revoked.client.downloadBlob(hash))).toBe('410 error.link.revoked')
    expect(await outcome(server.client().probeLink(revoked.linkId))).toBe('410 error.link.revoked')

    await new CofferAdmin({ baseUrl: server.url, adminToken: ADMIN_TOKEN }).disableLink(disabled.linkId, 'reported as spam')
    expect(await outcome(disabled.client.downloadBlobs([hash]))).toBe('410 error.link.disabled')

    server.clock.advance(3600_000)
    expect(await outcome(expired.client.feed(albumId))).toBe('410 error.link.expired')
    expect(await outcome(openPublicLink(expiring.url))).toBe('410 error.link.expired')

    const states = new Map((await owner.library.client.listLinks(albumId)).links.map((link) => [link.link_id, link]))
    expect(states.get(revoked.linkId)).toMatchObject({ state: 'revoked' })
    expect(states.get(disabled.linkId)).toMatchObject({ state: 'disabled', disabled_reason: 'reported as spam' })
    expect(states.get(expired.linkId)).toMatchObject({ state: 'expired' })
  })

  it('answers 451 for a photo the operator took down, through the link too', async () => {
    const opened = await openPublicLink((await createLink(owner, albumId)).url)
    const entry = (await opened.client.feed(albumId)).entries.find((e) => e.asset_id === assetIds[1])!
    const admin = new CofferAdmin({ baseUrl: server.url, adminToken: ADMIN_TOKEN })
    await admin.takeDown(assetIds[1]!, 'a complaint')
    expect(await outcome(opened.client.downloadBlob(entry.metadata_blob_hash!))).toBe('451 error.moderation.taken_down')
    await admin.restore(assetIds[1]!)
    expect(await outcome(opened.client.downloadBlob(entry.metadata_blob_hash!).then((bytes) => bytes.length > 0))).toBe(true)
  })

  it('is the owner’s alone to make, list and revoke; LINKS_MAX of them work at once, however many are asked for together', async () => {
    const stranger = await account('stranger')
    expect(await outcome(createLink(stranger, albumId))).toBe('404 error.not_found')
    const mine = (await owner.library.client.listLinks()).links
    expect(await outcome(stranger.library.client.revokeLink(mine[0]!.link_id))).toBe('404 error.not_found')
    expect((await stranger.library.client.listLinks()).links).toEqual([])
    const other = await account('busy')
    const seeded = await seedAlbum(other.library, 'Many links', 1, 1)
    const made = await Promise.all(Array.from({ length: LINKS_MAX + 4 }, () => outcome(createLink(other, seeded.album.albumId))))
    expect(made.filter((answer) => typeof answer === 'object')).toHaveLength(LINKS_MAX)
    expect(made.filter((answer) => answer === '409 error.link.too_many')).toHaveLength(4)
  })

  it('ends with its owner’s account: deleted, every link of it answers 404', async () => {
    const leaver = await account('leaver')
    const seeded = await seedAlbum(leaver.library, 'Gone', 1, 1)
    const { url, link } = await createLink(leaver, seeded.album.albumId)
    const opened = await openPublicLink(url)
    await leaver.library.client.deleteAccount()
    expect(await outcome(opened.client.feed(seeded.album.albumId))).toBe('401 error.auth.unauthenticated')
    expect(await outcome(server.client().probeLink(link.link_id))).toBe('404 error.not_found')
  })

  it('is held to what its owner sealed: a server that swaps the envelope, or slips another album’s signed photo in, is caught', async () => {
    const first = await createLink(owner, albumId)
    const second = await createLink(owner, albumId)
    // The other link's envelope, served as this one's: it does not open under this link's key.
    await writeRows(server.database, 'update album_links set envelope = (select envelope from album_links where link_id = ?) where link_id = ?', [
      second.link.link_id,
      first.link.link_id,
    ])
    await expect(openPublicLink(first.url)).rejects.toThrow(/does not open under this link’s key/)

    // A thumbnail's stored bytes altered: the photo is refused, never shown changed.
    const opened = await openPublicLink(second.url)
    const [photo] = (await photosThrough(opened)).keys()
    const entry = (await opened.client.feed(albumId, 0, 1000)).entries.findLast((e) => e.asset_id === photo)!
    const asset = await openAsset(opened.keys, entry, await opened.client.downloadBlob(entry.metadata_blob_hash!))
    const thumbnail = Buffer.from(asset.metadata.blobs.find((blob) => blob.kind === 'thumbnail')!.hash).toString('hex')
    await flipStoredByte(server, thumbnail, 40)
    await expect(photosThrough(opened)).rejects.toThrow(/SHA-256/)
    await flipStoredByte(server, thumbnail, 40)
    expect((await photosThrough(opened)).size).toBe(assetIds.length)

    // Another album's photo of the same owner (its manifest validly signed), put in this album's feed.
    const elsewhere = await seedAlbum(owner.library, 'Elsewhere', 1, 1)
    const foreign = (await liveEntries(owner.library.client, elsewhere.album.albumId)).find((entry) => entry.asset_id === elsewhere.assetIds[0])!
    const victim = (await liveEntries(owner.library.client, albumId)).find((entry) => entry.asset_id === assetIds[2])!
    await writeRows(server.database, 'update album_ops set manifest_cbor = ? where album_id = ? and sync_seq = ?', [
      Buffer.from(foreign.manifest_cbor, 'base64'),
      albumId,
      victim.sync_seq,
    ])
    await expect(photosThrough(opened)).rejects.toThrow(/album/)
  })
})

describe('a public link’s reads, per client address', () => {
  let limited: TestServer
  beforeAll(async () => {
    limited = await startServer({ LINK_READS_PER_ADDRESS: '6' })
  }, 60_000)
  afterAll(async () => {
    await limited?.close()
  })

  it('serves a burst from one address no more reads than LINK_READS_PER_ADDRESS, then 429 until the window ends', async () => {
    const library = await photoLibrary(limited, 'limited')
    const sharing = { library, contacts: contactsFile(path.join(folder, `limited-${library.userId}.sqlite`)) }
    const seeded = await seedAlbum(library, 'Limited', 1, 1)
    const opened = await openPublicLink((await createLink(sharing, seeded.album.albumId)).url)
    // The probe before the open was one read of the six.
    const reads = await Promise.all(Array.from({ length: 9 }, () => outcome(opened.client.feed(seeded.album.albumId).then(() => 'read'))))
    expect(reads.filter((answer) => answer === 'read')).toHaveLength(5)
    expect(reads.filter((answer) => answer === '429 error.rate_limited')).toHaveLength(4)
    // The refused reads did not count against the link's own budget, which every visitor shares.
    const [counted] = await readRows(limited.database, `SELECT failures FROM attempt_budgets WHERE scope = 'link_read_link' AND subject = '${opened.linkId}'`)
    expect(Number(counted?.failures)).toBe(6)
    limited.clock.advance(61_000)
    expect(await outcome(opened.client.feed(seeded.album.albumId).then(() => 'read'))).toBe('read')
  })
})
