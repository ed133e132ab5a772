// The account export (GET /v1/account/export, decision 0028) is one JSON document that matches
// its schema and holds every section exactly as the section's own route shows it: profile,
// second factor, sessions, cohorts, security events, moderation record, and every album with its
// whole feed and its assets' receipts, however many pages they take; each album up to the
// instant the export began; within the account's budget (429 with Retry-After beyond it); for
// a bearer only; and for a suspended account too.
import { randomBytes, randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AccountExport } from '../../src/contract/export.ts'
import { EXPORT_PAGE_ROWS, exportAccount } from '../../src/features/export/export.service.ts'
import { validateBody } from '../../src/http/validation.ts'
import { CofferAdmin } from '../../src/sdk/admin.ts'
import type { AccountExportDocument, CofferClient } from '../../src/sdk/client.ts'
import { signDirectory } from '../../src/sdk/directory.ts'
import { IdentityKey } from '../../src/sdk/identity.ts'
import { callerOf, PASSWORD, problemOf, raw, registered, THIRTY_SECONDS, withSecondFactor } from '../support/actors.ts'
import { album, uploader, type Uploader } from '../support/albums.ts'
import { deletionFor, iso, openBundle, writeFor, type BundleOptions } from '../support/bundles.ts'
import { startServer, type TestServer } from '../support/server.ts'

const ADMIN_TOKEN = randomBytes(32).toString('base64url')
const EXPORT_WINDOW_MS = 3_600_000

let server: TestServer
let admin: CofferAdmin
beforeAll(async () => {
  // Two wrong passwords lock sign-in: a security event to export.
  server = await startServer({ ADMIN_TOKEN, LOCKOUT_THRESHOLD: '2' })
  admin = new CofferAdmin({ baseUrl: server.url, adminToken: ADMIN_TOKEN })
})
afterAll(() => server.close())

/** An asset as a later write names it. */
interface Written {
  readonly albumId: string
  readonly fileId: string
  readonly head: string
  readonly original: string
}

async function create(member: Uploader, albumId: string, options: BundleOptions & { fileId?: string } = {}): Promise<Written> {
  const bundle = await openBundle(member, albumId, options)
  const write = await writeFor(member, bundle, { fileId: options.fileId ?? randomUUID() })
  await member.client.applyManifest(albumId, write.request)
  return { albumId, fileId: write.envelope.file_id, head: write.manifestHash, original: bundle.hashes.ciphertextHash }
}

async function replace(member: Uploader, asset: Written): Promise<Written> {
  const bundle = await openBundle(member, asset.albumId)
  const write = await writeFor(member, bundle, { fileId: asset.fileId, action: 'replace', prior: asset.head, originalBlobHash: asset.original })
  await member.client.applyManifest(asset.albumId, write.request)
  return { ...asset, head: write.manifestHash, original: bundle.hashes.ciphertextHash }
}

async function remove(member: Uploader, asset: Written): Promise<void> {
  const deletion = await deletionFor(member, asset)
  await member.client.deleteAsset(asset.albumId, asset.fileId, deletion.request)
}

/** The export through the SDK, read whole and parsed. */
async function exported(client: CofferClient): Promise<{ fileName: string; document: AccountExportDocument }> {
  const { fileName, body } = await client.exportAccount()
  return { fileName, document: JSON.parse(await new Response(body).text()) as AccountExportDocument }
}

/** Every album of the account as the albums, feed and receipts routes show it. */
async function albumsAsRoutesShowThem(client: CofferClient): Promise<AccountExportDocument['albums']> {
  return Promise.all(
    (await client.listAlbums()).albums.map(async (listed) => {
      const feed = (await client.feed(listed.album_id, 0, 1000)).entries
      const assetIds = [...new Set(feed.map((entry) => entry.asset_id))].sort()
      const receipts = Object.fromEntries(await Promise.all(assetIds.map(async (id) => [id, (await client.assetReceipts(id)).receipts] as const)))
      return { ...listed, feed, receipts }
    }),
  )
}

const exportRaw = (client: CofferClient | null, method = 'GET') =>
  raw(server, method, '/v1/account/export', { headers: client === null ? {} : { authorization: `Bearer ${client.tokens!.access_token}` } })

describe('the account export', () => {
  it('holds every section as its route shows it: two albums, replaced, deleted and taken-down assets, a second session, a cohort, a security event, a second factor', async () => {
    const owner = await withSecondFactor(server, 'export')
    const identity = IdentityKey.generate()
    const deviceId = randomUUID()
    await owner.client.publishDirectory(
      await signDirectory(identity, { version: 1, devices: [{ device_id: deviceId, public_key: randomBytes(32) }] }),
      identity,
    )
    const member: Uploader = { ...owner, userId: (await owner.client.getProfile()).user_id, identity, deviceId }
    await member.client.updateProfile({ display_name: 'Ada' })

    // A second session, from another device, with a cohort (the confirming code's step is spent: the next one).
    server.clock.advance(THIRTY_SECONDS)
    const phone = server.client()
    const challenge = await phone.login(member.email, PASSWORD)
    if (challenge.kind !== 'second_factor') throw new Error('expected the second-factor step')
    await phone.verifyLogin(challenge.challenge.mfa_token, owner.authenticator.codeAt(server.clock.now()), {
      cohort_hash: 'kitchen-wifi',
      device_id: randomUUID(),
    })
    // Two wrong passwords: sign-in locks, and the owner's security log says so.
    for (let i = 0; i < 2; i++) expect((await problemOf(server.client().login(member.email, 'wrong password'))).status).toBe(401)

    const family = await album(member)
    server.clock.advance(1000) // oldest first
    const trips = await album(member)
    const edited = await create(member, family)
    await replace(member, edited)
    await remove(member, await create(member, family))
    const withheld = await create(member, family)
    await admin.takeDown(withheld.fileId, 'court order')
    await create(member, trips, { metadata: false, derivatives: 0 })

    const { fileName, document } = await exported(member.client)
    expect(fileName).toBe(`coffer-export-${member.userId}.json`)
    expect(() => validateBody(AccountExport, document)).not.toThrow()
    const albums = await albumsAsRoutesShowThem(member.client)
    const devices = await member.client.listSessions()
    expect(document).toEqual({
      format: 'coffer-export/v1',
      exported_at: iso(server.clock.now()),
      profile: await member.client.getProfile(),
      second_factor: { enabled: true, recovery_codes_remaining: 10 },
      sessions: devices.sessions,
      cohorts: devices.cohorts,
      security_events: (await member.client.listSecurityEvents()).events,
      moderation: await member.client.moderationRecord(),
      albums,
    })
    // What the routes show, checked for what it must hold, so that the comparison above compares something.
    expect(document.profile.display_name).toBe('Ada')
    expect(document.sessions).toHaveLength(2)
    expect(document.sessions.filter((session) => session.current)).toHaveLength(1)
    expect(document.cohorts.map((cohort) => cohort.cohort_hash)).toEqual(['kitchen-wifi'])
    expect(document.security_events.map((event) => event.kind)).toEqual(['password_lockout'])
    expect(document.moderation.events).toEqual([expect.objectContaining({ action: 'taken_down', asset_id: withheld.fileId, reason: 'court order' })])
    expect(document.albums.map((a) => a.album_id)).toEqual([family, trips])
    expect(document.albums[0]!.feed.map((entry) => entry.action)).toEqual(['create', 'replace', 'create', 'delete', 'create'])
    // Receipts by asset id, in asset id order; the deleted asset's stay, the replaced one has both bundles'.
    const familyAssets = [...new Set(document.albums[0]!.feed.map((entry) => entry.asset_id))].sort()
    expect(familyAssets).toHaveLength(3)
    expect(Object.keys(document.albums[0]!.receipts)).toEqual(familyAssets)
    expect(document.albums[0]!.receipts[edited.fileId]).toHaveLength(8)
    expect(document.albums[1]!.receipts[document.albums[1]!.feed[0]!.asset_id]).toHaveLength(2)

    // The raw answer: a JSON attachment that no cache keeps.
    const answer = await exportRaw(member.client)
    expect(answer.status).toBe(200)
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(answer.headers.get('content-disposition')).toBe(`attachment; filename="coffer-export-${member.userId}.json"`)
    expect(answer.headers.get('cache-control')).toBe('no-store')
    expect(JSON.parse(answer.text)).toEqual(document)
  })

  it('exports an album of more feed entries and receipts than a page holds complete, an asset’s receipts across a page boundary included', async () => {
    const member = await uploader(server, 'export-pages')
    const albumId = await album(member)
    // Asset ids chosen in order: 2 receipts (original, manifest), then 4 each (with a derivative
    // and metadata): receipts 99-102 and 199-202 are one asset's, so pages of 100 end inside assets.
    const assets: Written[] = []
    const count = Math.ceil((EXPORT_PAGE_ROWS + 1) / 2)
    for (let i = 0; i < count; i++) {
      const fileId = `${i.toString(16).padStart(8, '0')}-0000-4000-8000-000000000000`
      assets.push(await create(member, albumId, i === 0 ? { fileId, metadata: false, derivatives: 0 } : { fileId }))
    }
    // Deletes add feed entries (and no receipts): more entries than a page.
    for (const asset of assets.slice(1)) await remove(member, asset)

    const { document } = await exported(member.client)
    expect(() => validateBody(AccountExport, document)).not.toThrow()
    const [exportedAlbum] = document.albums
    expect(exportedAlbum!.feed.length).toBeGreaterThan(EXPORT_PAGE_ROWS)
    expect(exportedAlbum!.feed.map((entry) => entry.sync_seq)).toEqual(Array.from({ length: 2 * count - 1 }, (_, i) => i + 1))
    const receipts = Object.values(exportedAlbum!.receipts).flat()
    expect(receipts.length).toBeGreaterThan(2 * EXPORT_PAGE_ROWS)
    expect(Object.keys(exportedAlbum!.receipts)).toEqual(assets.map((asset) => asset.fileId))
    expect(document.albums).toEqual(await albumsAsRoutesShowThem(member.client))
  })

  it('reads each album up to where it was when the export began: writes that commit while it is written are left out', async () => {
    const member = await uploader(server, 'export-cut')
    const albumId = await album(member)
    const kept = await create(member, albumId)
    const before = await albumsAsRoutesShowThem(member.client)

    const chunks = (await exportAccount(server.deps, await callerOf(server, member.client)))[Symbol.asyncIterator]()
    let text = ''
    const first = await chunks.next()
    text += first.value ?? ''
    // Nothing of the albums is read yet; these commit before it is.
    await replace(member, kept)
    await create(member, albumId)
    await album(member)
    for (let next = await chunks.next(); next.done !== true; next = await chunks.next()) text += next.value
    const document = JSON.parse(text) as AccountExportDocument

    expect(document.albums).toEqual(before)
    expect((await exported(member.client)).document.albums).toEqual(await albumsAsRoutesShowThem(member.client))
    expect((await member.client.listAlbums()).albums).toHaveLength(2)
  })

  it('counts every export in the account’s budget: past 3 an hour, 429 with Retry-After until the window ends; HEAD counts nothing', async () => {
    const member = await registered(server, 'export-budget')
    const head = await exportRaw(member.client, 'HEAD')
    expect([head.status, head.text, head.headers.get('content-disposition')]).toEqual([
      200,
      '',
      expect.stringMatching(/^attachment; filename="coffer-export-[0-9a-f-]{36}\.json"$/),
    ])
    const started = server.clock.now()
    for (let i = 0; i < 3; i++) expect((await exportRaw(member.client)).status).toBe(200)
    server.clock.advance(1_000_000)
    const refused = await problemOf(member.client.exportAccount())
    expect([refused.status, refused.code, refused.retryAfterS]).toEqual([
      429,
      'error.rate_limited',
      Math.ceil((started + EXPORT_WINDOW_MS - server.clock.now()) / 1000),
    ])
    // Another account's budget is its own.
    expect((await exported((await registered(server, 'export-budget-other')).client)).document.format).toBe('coffer-export/v1')
    server.clock.set(started + EXPORT_WINDOW_MS)
    expect((await exported(member.client)).document.format).toBe('coffer-export/v1')
  })

  it('answers 401 with a challenge without a live bearer token', async () => {
    const member = await registered(server, 'export-unauthenticated')
    const missing = await exportRaw(null)
    expect([missing.status, missing.json?.code, missing.headers.get('www-authenticate')]).toEqual([401, 'error.auth.unauthenticated', 'Bearer realm="coffer"'])
    const token = member.client.tokens!.access_token
    await member.client.logout()
    const revoked = await raw(server, 'GET', '/v1/account/export', { headers: { authorization: `Bearer ${token}` } })
    expect([revoked.status, revoked.json?.code, revoked.headers.get('www-authenticate')]).toEqual([
      401,
      'error.auth.unauthenticated',
      'Bearer realm="coffer", error="invalid_token"',
    ])
  })

  it('exports a suspended account (it reads everything of its own), with no albums an empty list', async () => {
    const member = await registered(server, 'export-suspended')
    const { user_id: userId } = await member.client.getProfile()
    await admin.suspend(userId, 'spam reports')
    const { document } = await exported(member.client)
    expect(document.moderation).toMatchObject({ standing: 'suspended', events: [{ action: 'suspended', reason: 'spam reports' }] })
    expect(document.second_factor).toEqual({ enabled: false, recovery_codes_remaining: 0 })
    expect(document.albums).toEqual([])
    expect(() => validateBody(AccountExport, document)).not.toThrow()
  })
})
