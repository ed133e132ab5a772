// The operator CLI as README has operators use it: `coffer` (run in-process, support/cli.ts) with
// the running server's environment acts on that server's database (find accounts, suspend,
// reinstate, take down and restore, hold, read the operator's log, rotate keys, maintain,
// migrate), the running server follows at once, `receipts verify` checks an asset's receipts over
// HTTP like a client, and wrong usage exits 2 with the usage text.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AdminAccount } from '../../src/sdk/admin.ts'
import { CofferProblem, type AttestationKeys, type ModerationRecord, type OpResult } from '../../src/sdk/client.ts'
import { PASSWORD } from '../support/actors.ts'
import { coffer, member as cliMember, upload as cliUpload, type Member } from '../support/cli.ts'
import { testEngine } from '../support/database.ts'
import { serveProcess, workspace, type Started, type Workspace } from '../support/process.ts'

/** A command that must succeed; its JSON output. */
async function cofferJson<T>(env: Record<string, string>, ...args: string[]): Promise<T> {
  const ran = await coffer(env, ...args)
  expect(ran.code, `coffer ${args.join(' ')}\n${ran.stderr}`).toBe(0)
  return JSON.parse(ran.stdout) as T
}

let space: Workspace
let env: Record<string, string>
let server: Started & { url: string }

beforeAll(async () => {
  space = await workspace('cli')
  env = space.env
  server = await serveProcess(env)
}, 60_000)

afterAll(async () => {
  if (server !== undefined && server.child.exitCode === null) {
    server.child.kill('SIGTERM')
    await server.exited
  }
  await space?.remove()
})

const member = () => cliMember(server.url)
const upload = async (who: Member): Promise<OpResult> => (await cliUpload(who)).result

async function statusOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
    return '200'
  } catch (error) {
    if (error instanceof CofferProblem) return `${error.status} ${error.code}`
    throw error
  }
}

describe(`coffer (the operator CLI) beside a running server on ${testEngine}`, () => {
  it('admin suspend / reinstate: the running server refuses content writes at once, then takes them again', async () => {
    const alice = await member()
    const printed = await cofferJson<ModerationRecord>(env, 'admin', 'suspend', alice.userId, '--reason', 'x')
    // The CLI prints the affected account's record as the operator API answers it.
    expect(printed).toEqual({
      standing: 'suspended',
      suspended_since: expect.any(String),
      events: [{ action: 'suspended', at: printed.suspended_since, reason: 'x' }],
    })
    expect(new Date(printed.suspended_since!).toISOString()).toBe(printed.suspended_since)

    expect(await statusOf(alice.client.provisionAlbum(randomUUID()))).toBe('403 error.account.suspended')
    expect(await statusOf(upload(alice))).toBe('403 error.account.suspended')
    expect(await alice.client.moderationRecord()).toEqual(printed)
    // Still able to sign in and read.
    expect((await alice.client.login(alice.email, PASSWORD)).kind).toBe('session')

    // Suspending again changes nothing: an error, exit 1, the record unchanged.
    const twice = await coffer(env, 'admin', 'suspend', alice.userId)
    expect(twice.code).toBe(1)
    expect(twice.stderr).toMatch(/^coffer: .*change nothing/m)
    expect((await alice.client.moderationRecord()).events).toHaveLength(1)
    // Likewise resetting a second factor the account does not have.
    const noFactor = await coffer(env, 'admin', 'reset-second-factor', alice.userId)
    expect(noFactor.code).toBe(1)
    expect(noFactor.stderr).toMatch(/^coffer: .*change nothing/m)
    expect((await alice.client.moderationRecord()).events).toHaveLength(1)

    const reinstated = await cofferJson<ModerationRecord>(env, 'admin', 'reinstate', alice.userId)
    expect(reinstated).toEqual({ standing: 'active', events: [...printed.events, { action: 'reinstated', at: expect.any(String) }] })
    expect((await alice.client.provisionAlbum(randomUUID())).created).toBe(true)
    expect((await upload(alice)).replayed).toBe(false)
    expect(await alice.client.moderationRecord()).toMatchObject({ standing: 'active', events: [{ action: 'suspended' }, { action: 'reinstated' }] })

    // An unknown account: exit 1.
    const unknown = await coffer(env, 'admin', 'suspend', randomUUID())
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toMatch(/^coffer: /m)
  }, 120_000)

  it('admin account / accounts --email: the account as the operator API shows it, found by id or by email in any case', async () => {
    const dana = await member()
    await upload(dana)
    const byId = await cofferJson<AdminAccount>(env, 'admin', 'account', dana.userId)
    expect(byId).toEqual({
      user_id: dana.userId,
      email: dana.email,
      created_at: (await dana.client.getProfile()).created_at,
      state: 'active',
      usage: { bytes: (await dana.client.storageUsage()).stored_bytes, assets: 1 },
      second_factor: { enabled: false, recovery_codes_remaining: 0 },
      moderation: { standing: 'active', events: [] },
    })
    expect(byId.usage.bytes).toBeGreaterThan(1500)
    expect(await cofferJson(env, 'admin', 'accounts', '--email', dana.email.toUpperCase())).toEqual({ accounts: [byId] })
    expect(await cofferJson(env, 'admin', 'accounts', '--email', `x${dana.email}`)).toEqual({ accounts: [] })
    const unknown = await coffer(env, 'admin', 'account', randomUUID())
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toMatch(/^coffer: .*No such account/m)
  }, 120_000)

  it('admin take-down / legal-hold / lift-hold: the running server withholds the blobs (451) and records each action', async () => {
    const bob = await member()
    const asset = await upload(bob)
    const receipts = (await bob.client.assetReceipts(asset.asset_id)).receipts
    const original = receipts.find((r) => r.blob_role === 'original')!.ciphertext_hash
    expect(await statusOf(bob.client.downloadBlob(original))).toBe('200')

    await cofferJson(env, 'admin', 'take-down', asset.asset_id, '--reason', 'complaint')
    for (const receipt of receipts) expect(await statusOf(bob.client.downloadBlob(receipt.ciphertext_hash))).toBe('451 error.moderation.taken_down')
    const verdict = await bob.client.verifyStorage({ assets: [{ asset_id: asset.asset_id, blob_hashes: receipts.map((r) => r.ciphertext_hash) }] })
    expect(verdict.verdicts[0]!.durable).toBe(false)
    expect(verdict.verdicts[0]!.blobs.map((b) => b.retrievable)).toEqual(receipts.map(() => false))

    await cofferJson(env, 'admin', 'legal-hold', asset.asset_id, '--reason', 'court')
    const again = await coffer(env, 'admin', 'legal-hold', asset.asset_id)
    expect(again.code).toBe(1)
    const printed = await cofferJson<ModerationRecord>(env, 'admin', 'lift-hold', asset.asset_id)
    const record = await bob.client.moderationRecord()
    expect(printed).toEqual(record)
    expect(record.events).toEqual([
      { action: 'taken_down', asset_id: asset.asset_id, at: expect.any(String), reason: 'complaint' },
      { action: 'legal_hold', asset_id: asset.asset_id, at: expect.any(String), reason: 'court' },
      { action: 'hold_lifted', asset_id: asset.asset_id, at: expect.any(String) },
    ])

    // A restore undoes the takedown at once, as its own event; the command writes its audit line on stderr.
    const restore = await coffer(env, 'admin', 'restore', asset.asset_id, '--reason', 'complaint withdrawn')
    expect(restore.code, restore.stderr).toBe(0)
    expect((JSON.parse(restore.stdout) as ModerationRecord).events.at(-1)).toEqual({
      action: 'restored',
      asset_id: asset.asset_id,
      at: expect.any(String),
      reason: 'complaint withdrawn',
    })
    const audit = restore.stderr
      .split('\n')
      .filter((line) => line.includes('"audit"'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(audit.map(({ audit, actor, action, userId, assetId, reason }) => ({ audit, actor, action, userId, assetId, reason }))).toEqual([
      { audit: 'operator_action', actor: 'cli', action: 'restored', userId: bob.userId, assetId: asset.asset_id, reason: 'complaint withdrawn' },
    ])
    for (const receipt of receipts) expect(await statusOf(bob.client.downloadBlob(receipt.ciphertext_hash))).toBe('200')

    // The operator's log reads the events back: the account's, or the latest of every account.
    const log = await cofferJson<{ events: Array<Record<string, unknown>> }>(env, 'admin', 'log', '--account', bob.userId)
    expect(log.events).toEqual(
      ['taken_down', 'legal_hold', 'hold_lifted', 'restored'].map((action, i) => ({
        user_id: bob.userId,
        seq: i + 1,
        action,
        asset_id: asset.asset_id,
        at: expect.any(String),
        ...(
          { taken_down: { reason: 'complaint' }, legal_hold: { reason: 'court' }, hold_lifted: {}, restored: { reason: 'complaint withdrawn' } } as Record<
            string,
            object
          >
        )[action],
        actor: 'cli',
      })),
    )
    const latest = await cofferJson<{ events: Array<Record<string, unknown>> }>(env, 'admin', 'log', '--limit', '2')
    expect(latest.events.map((event) => event.action)).toEqual(['hold_lifted', 'restored'])
    expect((await cofferJson<{ events: unknown[] }>(env, 'admin', 'log', '--account', randomUUID())).events).toEqual([])
  }, 120_000)

  it('admin delete-account: the running server ends the account at once; a second run prints the same record', async () => {
    const dana = await member()
    await upload(dana)
    const printed = await cofferJson<ModerationRecord>(env, 'admin', 'delete-account', dana.userId, '--reason', 'asked to leave')
    expect(printed).toEqual({ standing: 'active', events: [{ action: 'account_deleted', at: expect.any(String), reason: 'asked to leave' }] })
    // Its refresh token is dead too, so the SDK's retry after the 401 ends there.
    expect(await statusOf(dana.client.getProfile())).toBe('401 error.auth.session_expired')
    expect(await statusOf(dana.client.login(dana.email, PASSWORD))).toBe('401 error.auth.invalid_credentials')
    expect(await cofferJson<ModerationRecord>(env, 'admin', 'delete-account', dana.userId)).toEqual(printed)
    const overview = await cofferJson<{ state: string; email: string; usage: { assets: number } }>(env, 'admin', 'account', dana.userId)
    expect(overview).toMatchObject({ state: 'deleted', email: '', usage: { assets: 0 } })
    const log = await cofferJson<{ events: Array<Record<string, unknown>> }>(env, 'admin', 'log', '--account', dana.userId)
    expect(log.events.map((event) => [event.action, event.actor])).toEqual([['account_deleted', 'cli']])
  }, 120_000)

  it('keys rotate: the running server lists both keys, signs new receipts with the new one, and every receipt still verifies', async () => {
    const carol = await member()
    const before = await upload(carol)
    const keysBefore: AttestationKeys = await carol.client.attestationKeys()
    expect(keysBefore.keys).toHaveLength(1)
    const oldKey = keysBefore.keys[0]!.key_id

    const rotation = await cofferJson<{ retired: string | null; active: string }>(env, 'keys', 'rotate')
    expect(rotation.retired).toBe(oldKey)
    expect(rotation.active).not.toBe(oldKey)

    const keysAfter = await carol.client.attestationKeys()
    expect(keysAfter.keys.map((k) => [k.key_id, k.status])).toEqual([
      [oldKey, 'retired'],
      [rotation.active, 'active'],
    ])
    expect(keysAfter.keys[0]!.not_after).toBe(keysAfter.keys[1]!.not_before)

    const after = await upload(carol)
    const newReceipts = (await carol.client.assetReceipts(after.asset_id)).receipts
    expect(new Set(newReceipts.map((r) => r.server_key_id))).toEqual(new Set([rotation.active]))
    expect(new Set((await carol.client.assetReceipts(before.asset_id)).receipts.map((r) => r.server_key_id))).toEqual(new Set([oldKey]))

    // receipts verify, like any client, over HTTP: both the old and the new asset.
    const token = carol.client.tokens!.access_token
    for (const assetId of [before.asset_id, after.asset_id]) {
      const ran = await coffer(env, 'receipts', 'verify', assetId, '--server', server.url, '--token', token)
      expect(ran.code, ran.stderr).toBe(0)
      const report = JSON.parse(ran.stdout) as { asset_id: string; receipts: number; valid: boolean; problems: string[] }
      expect(report).toEqual({ asset_id: assetId, receipts: 4, valid: true, problems: [] })
    }
    // An asset the token's account does not hold: the server answers 404, the command fails.
    const missing = await coffer(env, 'receipts', 'verify', randomUUID(), '--server', server.url, '--token', token)
    expect(missing.code).toBe(1)
    expect(missing.stderr).toMatch(/404/)
  }, 120_000)

  it('maintain runs one maintenance pass and migrate finds nothing left to apply, beside the running server', async () => {
    const pass = await cofferJson<{
      deleted: Record<string, number>
      purgedAccounts: number
      garbage: { rows: number; files: number }
      partUploads: number
      leftovers: number
      orphanedReceiptRequests: number
      trash: { purged: number; kept: number }
    }>(env, 'maintain')
    // The account deleted above was purged by its deletion: none is left to finish; no upload left parts.
    expect(pass).toEqual({
      deleted: expect.any(Object),
      purgedAccounts: 0,
      trash: { purged: 0, kept: 0 },
      garbage: { rows: expect.any(Number), files: expect.any(Number) },
      partUploads: 0,
      leftovers: 0,
      orphanedReceiptRequests: 0,
    })
    const migrate = await coffer(env, 'migrate')
    expect(migrate.code, migrate.stderr).toBe(0)
    expect(migrate.stdout).toBe(`migrations applied (${testEngine})\n`)
    // The server is still serving.
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200)
  }, 120_000)

  it('exits 2 with the usage text on wrong usage', async () => {
    const wrong = [
      ['bogus'],
      ['admin'],
      ['admin', 'suspend'],
      ['admin', 'accounts'],
      ['admin', 'frobnicate', randomUUID()],
      ['admin', 'log', '--limit', '0'],
      ['admin', 'log', '--limit', 'ten'],
      ['admin', 'log', randomUUID()],
      ['keys'],
      ['keys', 'spin'],
      ['receipts', 'verify', randomUUID()],
      ['receipts', 'verify', '--server', 'http://127.0.0.1:1', '--token', 't'],
      ['receipts', 'check', randomUUID(), '--server', 'http://127.0.0.1:1', '--token', 't'],
    ]
    const ran = await Promise.all(wrong.map((args) => coffer(env, ...args)))
    for (const [i, outcome] of ran.entries()) {
      expect(outcome.code, wrong[i]!.join(' ')).toBe(2)
      expect(outcome.stderr).toContain('usage: coffer <command> [arguments]')
      expect(outcome.stdout).toBe('')
    }
  }, 120_000)

  it('no command at all prints the usage and exits 0', async () => {
    const ran = await coffer(env)
    expect(ran.code).toBe(0)
    expect(ran.stderr).toContain('usage: coffer <command> [arguments]')
  })
})
