// Deleting an account (issue 17, docs/decisions/0026): by its owner after a fresh password proof
// (and a code when it has a second factor), or by an operator. Afterwards no row of any table
// names the account, its albums or its upload sessions except its tombstone, its moderation record
// and the receipts already issued; every token of it is dead, its email is free, and the next
// maintenance pass removes its blob files (another account's stay). What a legal hold or a
// retention floor keeps stays until that lapses, and a purge cut off after the deletion committed
// is finished by the maintenance pass. Deleting twice records once.
import { randomBytes, randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deleteAccountAsOperator } from '../../src/features/account/deletion.service.ts'
import { maintain } from '../../src/features/maintenance/sweep.service.ts'
import { CofferAdmin } from '../../src/sdk/admin.ts'
import { sha256Hex, type Tokens } from '../../src/sdk/client.ts'
import { authenticatorFor, PASSWORD, problemOf, raw, THIRTY_SECONDS, wrongCode } from '../support/actors.ts'
import { album, uploader, type Uploader } from '../support/albums.ts'
import { storedHashes } from '../support/blobs.ts'
import { openBundle, writeFor } from '../support/bundles.ts'
import { everyRow } from '../support/database.ts'
import { startServer, type TestServer } from '../support/server.ts'

const ADMIN_TOKEN = randomBytes(32).toString('base64url')
const DAY = 86_400_000

let server: TestServer
let admin: CofferAdmin
beforeAll(async () => {
  server = await startServer({ ADMIN_TOKEN })
  admin = new CofferAdmin({ baseUrl: server.url, adminToken: ADMIN_TOKEN })
})
afterAll(() => server.close())

/** An account holding one of everything the deletion must remove, and what names it. */
interface FullAccount extends Uploader {
  readonly email: string
  readonly albumIds: string[]
  readonly assetIds: string[]
  readonly uploadIds: string[]
  /** Every blob hash it stored as a file. */
  readonly hashes: Set<string>
  /** The token pairs of its two sessions. */
  readonly tokens: Tokens[]
}

/** Uploads a bundle into `albumId` and applies its create; returns the asset id. */
async function createAsset(account: FullAccount, albumId: string, retentionUntil: string | null = null): Promise<string> {
  const bundle = await openBundle(account, albumId)
  const write = await writeFor(account, bundle, { retentionUntil })
  await account.client.applyManifest(albumId, write.request)
  // The manifest (provenance) is no file: the album's feed row holds it (decision 0038).
  for (const bytes of [bundle.original, ...bundle.derivatives, bundle.metadata ?? Buffer.alloc(0)]) if (bytes.length > 0) account.hashes.add(sha256Hex(bytes))
  account.uploadIds.push(bundle.uploadId)
  account.assetIds.push(write.envelope.file_id)
  return write.envelope.file_id
}

async function fullAccount(label: string): Promise<FullAccount> {
  const member = await uploader(server, label)
  const { email } = await member.client.getProfile()
  const account: FullAccount = { ...member, email, albumIds: [], assetIds: [], uploadIds: [], hashes: new Set(), tokens: [] }
  for (let i = 0; i < 2; i++) {
    const albumId = await album(member)
    account.albumIds.push(albumId)
    await createAsset(account, albumId)
    await createAsset(account, albumId)
  }
  // An upload session left open with its blobs sent.
  const pending = await openBundle(member, account.albumIds[0]!)
  account.uploadIds.push(pending.uploadId)
  for (const bytes of [pending.original, ...pending.derivatives]) account.hashes.add(sha256Hex(bytes))
  await member.client.storeEscrow(randomBytes(200))
  // An export taken (it is counted in a budget of the account's).
  await new Response((await member.client.exportAccount()).body).text()
  // An enrollment code issued, another redeemed into a relay channel with a payload in it.
  await member.client.issueEnrollmentCode()
  const channel = await server.client().redeemEnrollmentCode((await member.client.issueEnrollmentCode()).code)
  await server.client().relay(channel.channel_id, 'to_initiator', 'hello')
  // A second session, with a cohort recorded.
  const phone = server.client()
  await phone.login(email, PASSWORD, { cohort_hash: sha256Hex(randomBytes(8)) })
  account.tokens.push(member.client.tokens!, phone.tokens!)
  return account
}

/** For each table, how many of its rows name any of `ids`. */
async function rowsNaming(ids: readonly string[]): Promise<Record<string, number>> {
  const naming: Record<string, number> = {}
  for (const [table, rows] of Object.entries(await everyRow(server.database))) {
    const count = rows.filter((row) => ids.some((id) => row.includes(id))).length
    if (count > 0) naming[table] = count
  }
  return naming
}

const idsOf = (account: FullAccount) => [account.userId, ...account.albumIds, ...account.uploadIds]

/** Every token of both its sessions is refused, and its password no longer signs in. */
async function expectDead(account: FullAccount): Promise<void> {
  for (const tokens of account.tokens) {
    expect((await raw(server, 'GET', '/v1/profile', { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401)
    const refreshed = await raw(server, 'POST', '/v1/auth/refresh', {
      body: JSON.stringify({ refresh_token: tokens.refresh_token }),
      headers: { 'content-type': 'application/json' },
    })
    expect([refreshed.status, refreshed.json?.code]).toEqual([401, 'error.auth.session_expired'])
  }
  expect((await problemOf(server.client().login(account.email, PASSWORD))).code).toBe('error.auth.invalid_credentials')
}

describe('deleting one’s own account', () => {
  it('leaves nothing but the tombstone, the record and the receipts, and frees the email and the files', async () => {
    const account = await fullAccount('leaver')
    const neighbour = await fullAccount('neighbour')
    const before = await rowsNaming(idsOf(account))
    expect(Object.keys(before)).toEqual(
      expect.arrayContaining([
        'sessions',
        'cohorts',
        'directories',
        'escrows',
        'enrollment_codes',
        'relay_channels',
        'attempt_budgets',
        'albums',
        'assets',
        'asset_blobs',
        'blobs',
        'upload_sessions',
        'receipts',
      ]),
    )

    await account.client.deleteAccount()

    await expectDead(account)
    const after = await rowsNaming(idsOf(account))
    expect(after).toEqual({ accounts: 1, moderation_events: 1, receipts: before.receipts })
    // Its files go with the next maintenance pass; the neighbour's stay.
    await maintain(server.deps)
    const stored = new Set(await storedHashes(server))
    expect([...account.hashes].filter((hash) => stored.has(hash))).toEqual([])
    expect([...neighbour.hashes].filter((hash) => !stored.has(hash))).toEqual([])
    // The email is free again, for a new account with nothing of the old one.
    const again = server.client()
    await again.register(account.email, PASSWORD)
    expect((await again.getProfile()).user_id).not.toBe(account.userId)
    expect(await again.listAlbums()).toEqual({ albums: [] })
  })

  it('is recorded for the operator, who sees a tombstone', async () => {
    const account = await fullAccount('recorded')
    await account.client.deleteAccount()
    const overview = await admin.account(account.userId)
    expect(overview).toMatchObject({
      user_id: account.userId,
      email: '',
      state: 'deleted',
      deleted_at: expect.any(String),
      usage: { bytes: 0, assets: 0 },
      second_factor: { enabled: false },
    })
    expect(overview.moderation.events).toEqual([{ action: 'account_deleted', at: overview.deleted_at }])
    expect(await admin.findAccounts(account.email)).toEqual([])
    const line = server.logs
      .map((text) => JSON.parse(text) as Record<string, unknown>)
      .find((entry) => entry.audit === 'account_deleted' && entry.userId === account.userId)
    expect(line).toMatchObject({ actor: 'owner' })
  })

  it('needs a recent password proof: 403, and nothing changes', async () => {
    const account = await fullAccount('stale')
    server.clock.advance((server.deps.config.freshnessWindowS + 1) * 1000)
    const before = await everyRow(server.database)
    const problem = await problemOf(account.client.deleteAccount())
    expect([problem.status, problem.code]).toEqual([403, 'error.auth.reauthentication_required'])
    expect(await everyRow(server.database)).toEqual(before)
    await account.client.reauthenticate(PASSWORD)
    await account.client.deleteAccount()
    await expectDead(account)
  })

  it('with a second factor needs a live code: 403 without one, 422 with a wrong one, both counted like any code', async () => {
    const account = await fullAccount('two-factor')
    const authenticator = authenticatorFor(await account.client.startTotpEnrollment())
    await account.client.confirmTotpEnrollment(authenticator.codeAt(server.clock.now()))
    server.clock.advance(THIRTY_SECONDS)
    const before = await everyRow(server.database)
    const missing = await problemOf(account.client.deleteAccount())
    expect([missing.status, missing.code]).toEqual([403, 'error.auth.second_factor_required'])
    expect(await everyRow(server.database)).toEqual(before)
    const wrong = await problemOf(account.client.deleteAccount({ totpCode: wrongCode(authenticator, server.clock.now()) }))
    expect([wrong.status, wrong.code]).toEqual([422, 'error.totp.invalid_code'])
    expect((await rowsNaming([account.userId])).accounts).toBe(1)
    expect((await admin.account(account.userId)).state).toBe('active')
    await account.client.deleteAccount({ totpCode: authenticator.codeAt(server.clock.now()) })
    await expectDead(account)
    expect(await rowsNaming([account.userId])).toEqual({ accounts: 1, moderation_events: 1 })
  })

  it('a recovery code stands in for the app’s code (the phone is lost); the other codes go with the account', async () => {
    const account = await fullAccount('lost-phone')
    const authenticator = authenticatorFor(await account.client.startTotpEnrollment())
    const recoveryCodes = await account.client.confirmTotpEnrollment(authenticator.codeAt(server.clock.now()))
    expect((await rowsNaming([account.userId])).recovery_codes).toBe(10)
    await account.client.deleteAccount({ totpCode: recoveryCodes[3]! })
    await expectDead(account)
    expect(await rowsNaming([account.userId])).toEqual({ accounts: 1, moderation_events: 1 })
  })

  it('without a body, or with a malformed one', async () => {
    const account = await fullAccount('bodies')
    const headers = { authorization: `Bearer ${account.tokens[0]!.access_token}` }
    const malformed = await raw(server, 'POST', '/v1/account/delete', {
      body: JSON.stringify({ totp_code: 12 }),
      headers: { ...headers, 'content-type': 'application/json' },
    })
    expect([malformed.status, malformed.json?.code]).toEqual([422, 'error.request.invalid'])
    expect((await admin.account(account.userId)).state).toBe('active')
    const bare = await raw(server, 'POST', '/v1/account/delete', { headers })
    expect(bare.status).toBe(204)
    await expectDead(account)
  })
})

describe('what is kept', () => {
  it('a legal hold keeps its asset (and the album holding it) until it is lifted; the operator sees it', async () => {
    const account = await fullAccount('held')
    const heldAlbum = account.albumIds[0]!
    const heldAsset = account.assetIds[0]!
    await admin.legalHold(heldAsset, 'case 12')
    await account.client.deleteAccount()
    await maintain(server.deps)
    const kept = await rowsNaming([account.userId, heldAlbum, heldAsset])
    expect(kept).toMatchObject({ accounts: 1, albums: 1, assets: 1, account_purges: 1 })
    expect(await rowsNaming([...account.albumIds.slice(1), ...account.assetIds.slice(2)])).toEqual({ receipts: expect.any(Number) })
    const overview = await admin.account(account.userId)
    expect(overview).toMatchObject({ state: 'deleted', usage: { assets: 1, bytes: expect.any(Number) } })
    expect(overview.usage.bytes).toBeGreaterThan(0)

    await admin.liftHold(heldAsset, 'case closed')
    await maintain(server.deps)
    expect(await rowsNaming([account.userId, heldAlbum, heldAsset])).toEqual({ accounts: 1, moderation_events: 3, receipts: expect.any(Number) })
    const stored = new Set(await storedHashes(server))
    expect([...account.hashes].filter((hash) => stored.has(hash))).toEqual([])
  })

  it('a retention floor keeps its asset until the floor passes', async () => {
    const account = await fullAccount('retained')
    const retained = await createAsset(account, account.albumIds[1]!, new Date(server.clock.now() + 30 * DAY).toISOString())
    await account.client.deleteAccount()
    await maintain(server.deps)
    expect(await rowsNaming([retained])).toMatchObject({ assets: 1 })
    server.clock.advance(31 * DAY)
    await maintain(server.deps)
    expect(await rowsNaming(idsOf(account))).toEqual({ accounts: 1, moderation_events: 1, receipts: expect.any(Number) })
  })

  it('a deleted account’s standing no longer changes: 409', async () => {
    const account = await fullAccount('standing')
    await account.client.deleteAccount()
    for (const action of [() => admin.suspend(account.userId), () => admin.resetSecondFactor(account.userId)]) {
      expect((await problemOf(action())).code).toBe('error.moderation.state_conflict')
    }
  })
})

describe('the operator deletes an account', () => {
  it('with a reason, idempotently: a second deletion records nothing more', async () => {
    const account = await fullAccount('operator')
    const first = await admin.deleteAccount(account.userId, 'asked by email')
    expect(first.events).toEqual([{ action: 'account_deleted', at: expect.any(String), reason: 'asked by email' }])
    await expectDead(account)
    expect(await admin.deleteAccount(account.userId, 'again')).toEqual(first)
    expect(await rowsNaming(idsOf(account))).toEqual({ accounts: 1, moderation_events: 1, receipts: expect.any(Number) })
    const log = await server.deps.storage.operatorLog({ userId: account.userId, limit: 10 })
    expect(log.map((event) => [event.action, event.actor])).toEqual([['account_deleted', 'admin_token']])
  })

  it('404 for an unknown account', async () => {
    expect((await problemOf(admin.deleteAccount(randomUUID()))).status).toBe(404)
  })

  it('two deletions at once record one event', async () => {
    const account = await fullAccount('racing')
    const records = await Promise.all([admin.deleteAccount(account.userId, 'a'), deleteAccountAsOperator(server.deps, account.userId, 'b', 'cli')])
    expect(records[0].events).toHaveLength(1)
    expect(records[1].events).toHaveLength(1)
    expect(await rowsNaming(idsOf(account))).toEqual({ accounts: 1, moderation_events: 1, receipts: expect.any(Number) })
  })
})

describe('a purge cut off after the deletion committed', () => {
  it('is finished by the maintenance pass', async () => {
    const account = await fullAccount('cut-off')
    // The deletion's transaction alone: the state a crash right after its commit leaves.
    await server.deps.storage.transaction((tx) => tx.markAccountDeleted(account.userId, server.clock.now()))
    await expectDead(account)
    expect(await rowsNaming([account.userId])).toMatchObject({ assets: 4, account_purges: 1 })
    const pass = await maintain(server.deps)
    expect(pass.purgedAccounts).toBe(1)
    expect(await rowsNaming(idsOf(account))).toEqual({ accounts: 1, receipts: expect.any(Number) })
    const stored = new Set(await storedHashes(server))
    expect([...account.hashes].filter((hash) => stored.has(hash))).toEqual([])
    expect((await maintain(server.deps)).purgedAccounts).toBe(0)
  })
})
