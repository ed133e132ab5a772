// The operator finds accounts (issue 17): by id and by email (as sign-in compares emails), each
// with its standing, what it stores (bytes and live assets), whether it has a confirmed second
// factor, and its moderation record; only with ADMIN_TOKEN (401 without it or with a wrong one,
// and no such path at all on a server without it).
import { randomBytes, randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CofferAdmin, type AdminAccount } from '../../src/sdk/admin.ts'
import { CofferProblem } from '../../src/sdk/client.ts'
import { authenticatorFor, raw, registered } from '../support/actors.ts'
import { liveEntries, openAlbum } from '../../src/client/albums.ts'
import { deleteFile } from '../../src/client/edits.ts'
import { backupFile } from '../../src/client/upload.ts'
import { album, photoLibrary, uploader, type Uploader } from '../support/albums.ts'
import { deletionFor, openBundle, writeFor } from '../support/bundles.ts'
import { startServer, type TestServer } from '../support/server.ts'

const ADMIN_TOKEN = randomBytes(32).toString('base64url')

let server: TestServer
let admin: CofferAdmin
beforeAll(async () => {
  server = await startServer({ ADMIN_TOKEN })
  admin = new CofferAdmin({ baseUrl: server.url, adminToken: ADMIN_TOKEN })
})
afterAll(() => server.close())

async function problem(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
  } catch (error) {
    if (error instanceof CofferProblem) return `${error.status} ${error.code}`
    throw error
  }
  throw new Error('expected a problem')
}

/** One asset written as a client writes it; the bytes the account then stores for it. */
async function asset(member: Uploader, albumId: string): Promise<{ assetId: string; head: string; original: string; bytes: number }> {
  const bundle = await openBundle(member, albumId)
  const write = await writeFor(member, bundle)
  const result = await member.client.applyManifest(albumId, write.request)
  const bytes = bundle.original.length + bundle.derivatives.reduce((sum, d) => sum + d.length, 0) + (bundle.metadata?.length ?? 0) + write.manifest.length
  return { assetId: result.asset_id, head: write.manifestHash, original: bundle.hashes.ciphertextHash, bytes }
}

describe('finding an account', () => {
  it('by id and by email in any case, with its creation, standing, usage, second factor and record', async () => {
    const member = await uploader(server, 'Found')
    const profile = await member.client.getProfile()
    const byId = await admin.account(member.userId)
    expect(byId).toEqual({
      user_id: member.userId,
      email: member.email,
      created_at: profile.created_at,
      state: 'active',
      usage: { bytes: 0, assets: 0 },
      second_factor: { enabled: false, recovery_codes_remaining: 0 },
      moderation: { standing: 'active', events: [] },
    } satisfies AdminAccount)

    expect(await admin.findAccounts(member.email)).toEqual([byId])
    expect(await admin.findAccounts(`  ${member.email.toUpperCase()} `)).toEqual([byId])
    // Exact, not a prefix or a pattern.
    expect(await admin.findAccounts(member.email.slice(1))).toEqual([])
    expect(await admin.findAccounts('%@example.test')).toEqual([])
    expect(await admin.findAccounts('not an email')).toEqual([])
  })

  it('counts the bytes stored and the live assets: each upload adds its blobs, a deletion takes the asset out', async () => {
    const member = await uploader(server, 'usage')
    const albumId = await album(member)
    const first = await asset(member, albumId)
    expect((await admin.account(member.userId)).usage).toEqual({ bytes: first.bytes, assets: 1 })
    const second = await asset(member, await album(member))
    expect((await admin.account(member.userId)).usage).toEqual({ bytes: first.bytes + second.bytes, assets: 2 })
    // The owner's own figure agrees.
    expect((await member.client.storageUsage()).stored_bytes).toBe(first.bytes + second.bytes)

    const deletion = await deletionFor(member, { albumId, fileId: first.assetId, head: first.head, original: first.original })
    await member.client.deleteAsset(albumId, first.assetId, deletion.request)
    expect((await admin.account(member.userId)).usage.assets).toBe(1)
  })

  it('counts assets as stored, not photos: a photo library of 3 photos in 2 albums is 5 assets, each album’s record one of them', async () => {
    const library = await photoLibrary(server, 'library')
    const photo = (i: number) => {
      const bytes = randomBytes(2000 + i)
      return { name: `photo-${i}.jpg`, size: bytes.length, type: 'image/jpeg', modified: 0, open: () => [bytes] }
    }
    const holidays = await openAlbum(library, 'Holidays')
    const family = await openAlbum(library, 'Family')
    const stored = []
    for (const [i, target] of [holidays, holidays, family].entries()) stored.push(await backupFile({ ...library, albumId: target.albumId }, photo(i)))
    const records = await Promise.all([holidays, family].map(async ({ albumId }) => (await liveEntries(library.client, albumId)).length))
    expect(records).toEqual([3, 2]) // each album's feed: its photos and its record
    expect((await admin.account(library.userId)).usage.assets).toBe(5)
    // A deleted photo is not counted; the server cannot tell a photo from an album record (both are encrypted).
    await deleteFile(library, holidays.albumId, stored[0]!.assetId)
    expect((await admin.account(library.userId)).usage.assets).toBe(4)
  })

  it('shows the second factor once enrollment is confirmed, not while it is pending, with its recovery codes left', async () => {
    const member = await registered(server, 'totp')
    const { user_id: userId } = await member.client.getProfile()
    const authenticator = authenticatorFor(await member.client.startTotpEnrollment())
    expect((await admin.account(userId)).second_factor).toEqual({ enabled: false, recovery_codes_remaining: 0 })
    const recoveryCodes = await member.client.confirmTotpEnrollment(authenticator.codeAt(server.clock.now()))
    expect((await admin.account(userId)).second_factor).toEqual({ enabled: true, recovery_codes_remaining: 10 })
    expect((await admin.findAccounts(member.email))[0]?.second_factor).toEqual({ enabled: true, recovery_codes_remaining: 10 })
    const login = await server.client().login(member.email, member.password)
    if (login.kind !== 'second_factor') throw new Error('expected a second-factor challenge')
    await server.client().verifyLogin(login.challenge.mfa_token, recoveryCodes[0]!)
    expect((await admin.account(userId)).second_factor).toEqual({ enabled: true, recovery_codes_remaining: 9 })
  })

  it('shows a suspended account suspended, with the reason in its record, and active again once reinstated', async () => {
    const member = await uploader(server, 'suspended')
    await admin.suspend(member.userId, 'spam reports')
    const suspended = await admin.account(member.userId)
    expect(suspended.state).toBe('suspended')
    expect(suspended.moderation).toMatchObject({ standing: 'suspended', events: [{ action: 'suspended', reason: 'spam reports' }] })
    expect(suspended.moderation).toEqual(await member.client.moderationRecord())
    expect((await admin.findAccounts(member.email))[0]?.state).toBe('suspended')

    await admin.reinstate(member.userId)
    const reinstated = await admin.account(member.userId)
    expect(reinstated.state).toBe('active')
    expect(reinstated.moderation.events.map((event) => event.action)).toEqual(['suspended', 'reinstated'])
  })

  it('answers 404 for an unknown id and 400 for an id that is no UUID', async () => {
    expect(await problem(admin.account(randomUUID()))).toBe('404 error.not_found')
    expect((await raw(server, 'GET', '/v1/admin/accounts/not-a-uuid', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status).toBe(400)
  })
})

describe('the operator credential', () => {
  it('is required: no token and a wrong token are 401, a member’s access token too', async () => {
    const member = await registered(server, 'credential')
    const { user_id: userId } = await member.client.getProfile()
    for (const path of [`/v1/admin/accounts/${userId}`, `/v1/admin/accounts?email=${encodeURIComponent(member.email)}`]) {
      for (const headers of [{}, { authorization: `Bearer ${ADMIN_TOKEN}x` }, { authorization: `Bearer ${member.client.tokens!.access_token}` }]) {
        const answer = await raw(server, 'GET', path, { headers })
        expect(answer.status, `${path} ${JSON.stringify(headers)}`).toBe(401)
        expect(answer.json?.code).toBe('error.auth.unauthenticated')
        expect(answer.text).not.toContain(member.email)
      }
    }
    const wrong = new CofferAdmin({ baseUrl: server.url, adminToken: randomBytes(32).toString('base64url') })
    expect(await problem(wrong.account(userId))).toBe('401 error.auth.unauthenticated')
    expect(await problem(wrong.findAccounts(member.email))).toBe('401 error.auth.unauthenticated')
  })

  it('without ADMIN_TOKEN on the server, the lookups do not exist: 404 whatever the credential', async () => {
    const plain = await startServer()
    try {
      const member = await registered(plain, 'no-operator')
      const { user_id: userId } = await member.client.getProfile()
      const operator = new CofferAdmin({ baseUrl: plain.url, adminToken: ADMIN_TOKEN })
      expect(await problem(operator.account(userId))).toBe('404 error.not_found')
      expect(await problem(operator.findAccounts(member.email))).toBe('404 error.not_found')
      expect((await raw(plain, 'GET', '/v1/admin/accounts')).status).toBe(404)
    } finally {
      await plain.close()
    }
  })
})
