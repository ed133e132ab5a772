// The periodic sweep deletes every kind of expired row (enrollment codes, channels with their
// payloads, revoke and second-factor challenges, sessions past their refresh lifetime, dead
// replay-ledger steps, ended attempt-budget windows, wrong-password counts as old as a lock,
// security events past their retention) and nothing live, and several sweeps running at once
// delete each row once without failing. Stopping the periodic sweep waits for the pass under
// way, so that shutting down never closes the storage beneath it.
import { randomBytes } from 'node:crypto'
import { encode } from 'cborg'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { hashToken } from '../../src/crypto/tokens.ts'
import { startSweeping, sweepExpired } from '../../src/features/maintenance/sweep.service.ts'
import { IdentityKey } from '../../src/sdk/identity.ts'
import { type Authenticator, type Member, PASSWORD, problemOf, raw, registered, THIRTY_SECONDS, withSecondFactor, wrongCode } from '../support/actors.ts'
import { startServer, type TestServer } from '../support/server.ts'

const SECOND = 1_000
const REFRESH_TTL_S = 1_800
const SWEEP_AFTER_MS = 2_000 * SECOND // past every lifetime below, sessions' included
const LOCKOUT_THRESHOLD = 3

let server: TestServer
beforeEach(async () => {
  server = await startServer({
    REFRESH_TOKEN_TTL_S: String(REFRESH_TTL_S),
    REDEEM_MAX_FAILURES: '2',
    TRUST_PROXY: 'true',
    LOCKOUT_THRESHOLD: String(LOCKOUT_THRESHOLD),
    TOTP_FAILURE_WINDOW_S: '1200',
    SECURITY_EVENT_RETENTION_S: '1500',
  })
})
afterEach(() => server.close())

type Counts = Record<string, number>

/** `expected` for the named tables, 0 for every other table the sweep reports. */
function exactly(reported: Counts, expected: Counts): Counts {
  return { ...Object.fromEntries(Object.keys(reported).map((table) => [table, 0])), ...expected }
}

function sum(results: readonly Counts[]): Counts {
  const total: Counts = {}
  for (const result of results) for (const [table, n] of Object.entries(result)) total[table] = (total[table] ?? 0) + n
  return total
}

function wrongLogin(email: string) {
  return raw(server, 'POST', '/v1/auth/login', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: 'wrong' }) })
}

function redeemFrom(address: string, code: string) {
  return raw(server, 'POST', '/v1/auth/devices/enroll/redeem', {
    headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
    body: JSON.stringify({ code }),
  })
}

async function challengeOf(member: Member): Promise<string> {
  const login = await server.client().login(member.email, PASSWORD)
  if (login.kind !== 'second_factor') throw new Error('expected a second-factor challenge')
  return login.challenge.mfa_token
}

/**
 * Payloads a removed channel left behind: re-creates the channel record under the same id
 * through the storage port and drains both of its mailboxes.
 */
async function leftoverPayloads(channelId: string, initiatorId: string): Promise<string[]> {
  const channelHash = hashToken(channelId)
  const now = server.clock.now()
  await server.deps.storage.openChannel({ channelHash, initiatorId, createdAt: now, expiresAt: now + 60 * SECOND })
  const left = [
    ...((await server.deps.storage.drainMailbox(channelHash, 'to_enrollee', now)) ?? []),
    ...((await server.deps.storage.drainMailbox(channelHash, 'to_initiator', now)) ?? []),
  ]
  await server.deps.storage.closeChannel(channelHash, initiatorId, now)
  return left
}

interface Seeded {
  /** What one sweep past every lifetime deletes, by table. */
  readonly expected: Counts
  readonly channels: readonly string[]
  readonly initiatorId: string
  readonly codes: readonly string[]
  readonly revokeChallenges: readonly string[]
  readonly mfaTokens: readonly string[]
  readonly members: readonly Member[]
}

/** One or more rows of every sweepable kind, all created now (they all expire within 2000 s). */
async function seedExpirable(address: string): Promise<Seeded> {
  const alice = await registered(server, 'alice') // session 1
  const initiatorId = (await alice.client.getProfile()).user_id
  const codes: string[] = []
  for (let i = 0; i < 3; i++) codes.push((await alice.client.issueEnrollmentCode()).code)
  const channels: string[] = []
  for (let i = 0; i < 2; i++) {
    const code = await alice.client.issueEnrollmentCode()
    const channelId = (await server.client().redeemEnrollmentCode(code.text_fallback)).channel_id
    await server.client().relay(channelId, 'to_enrollee', `to enrollee ${i}`)
    await server.client().relay(channelId, 'to_initiator', `to initiator ${i}`)
    await server.client().relay(channelId, 'to_initiator', `to initiator ${i} again`)
    channels.push(channelId)
  }
  const revokeChallenges = [(await alice.client.revokeAllChallenge()).challenge, (await alice.client.revokeAllChallenge()).challenge]
  const bob = await withSecondFactor(server, 'bob') // session 2, replay-ledger step 1
  const mfaTokens = [await challengeOf(bob)]
  expect((await redeemFrom(address, randomBytes(32).toString('base64url'))).status).toBe(404) // a redeem budget
  expect((await problemOf(bob.client.disableTotp(wrongCode(bob.authenticator, server.clock.now())))).status).toBe(422) // a second-factor budget
  // Alice's sign-in locked: a wrong-password count and a security event.
  for (let i = 0; i < LOCKOUT_THRESHOLD; i++) expect((await wrongLogin(alice.email)).status).toBe(401)
  return {
    expected: {
      sessions: 2,
      enrollment_codes: 3,
      relay_channels: 2,
      revoke_challenges: 2,
      mfa_challenges: 1,
      totp_used_steps: 1,
      attempt_budgets: 2,
      password_failures: 1,
      security_events: 1,
    },
    channels,
    initiatorId,
    codes,
    revokeChallenges,
    mfaTokens,
    members: [alice, bob],
  }
}

describe('sweepExpired', () => {
  it('deletes exactly the expired rows of every kind, and every live thing keeps working', async () => {
    const t0 = server.clock.now()
    const expired = await seedExpirable('198.51.100.1')

    // Older but still live: a session past its access expiry yet within its refresh lifetime,
    // a channel and a throttle window that end after the sweep.
    server.clock.set(t0 + 1_000 * SECOND)
    const erin = await registered(server, 'erin')
    server.clock.set(t0 + 1_500 * SECOND)
    const frank = await registered(server, 'frank')
    const olderChannel = (await server.client().redeemEnrollmentCode((await frank.client.issueEnrollmentCode()).code)).channel_id
    await frank.client.enrollmentChannel(olderChannel, 'initiator').send('kept from 1500 s')
    for (let i = 0; i < 2; i++) expect((await redeemFrom('198.51.100.3', randomBytes(32).toString('base64url'))).status).toBe(404)

    // Live rows of every kind, created at the sweep instant.
    const sweepAt = t0 + SWEEP_AFTER_MS
    server.clock.set(sweepAt)
    const carol = await registered(server, 'carol')
    const carolKey = IdentityKey.generate()
    await carol.client.publishDirectory(encode({ directory_version: 1 }), carolKey)
    const liveCode = await carol.client.issueEnrollmentCode()
    const liveChannel = (await server.client().redeemEnrollmentCode((await carol.client.issueEnrollmentCode()).code)).channel_id
    const carolEnd = carol.client.enrollmentChannel(liveChannel, 'initiator')
    await carolEnd.send('live to enrollee')
    await server.client().enrollmentChannel(liveChannel, 'enrollee').send('live to initiator')
    const liveRevoke = await carol.client.revokeAllChallenge()

    const dave = await withSecondFactor(server, 'dave') // ledger: the current step
    const codeAt = (authenticator: Authenticator, steps: number) => authenticator.codeAt(sweepAt + steps * THIRTY_SECONDS)
    const keptChallenge = await challengeOf(dave)
    const daveLaptop = server.client()
    await daveLaptop.verifyLogin(await challengeOf(dave), codeAt(dave.authenticator, -1)) // ledger: the step before
    for (let i = 0; i < 2; i++) expect((await redeemFrom('198.51.100.2', randomBytes(32).toString('base64url'))).status).toBe(404)
    expect((await wrongLogin(carol.email)).status).toBe(401)
    expect((await problemOf(dave.client.disableTotp(wrongCode(dave.authenticator, sweepAt)))).status).toBe(422)

    const counts = await sweepExpired(server.deps)
    expect(counts).toEqual(exactly(counts, expired.expected))
    // Idempotent: nothing is left to delete.
    const again = await sweepExpired(server.deps)
    expect(again).toEqual(exactly(again, {}))

    // The expired channels are gone with their payloads.
    for (const channelId of expired.channels) {
      expect((await problemOf(server.client().drain(channelId, 'to_initiator'))).code).toBe('error.enroll.channel_not_found')
      expect(await leftoverPayloads(channelId, expired.initiatorId)).toEqual([])
    }

    // Live sessions: an old one refreshes (its access token expired at 1900 s), new ones answer.
    expect((await erin.client.listSessions()).sessions).toHaveLength(1)
    expect((await frank.client.listSessions()).sessions).toHaveLength(1)
    expect((await daveLaptop.listSessions()).sessions).toHaveLength(2)

    // Live channels keep their payloads and accept more.
    expect(await server.client().enrollmentChannel(olderChannel, 'enrollee').receive()).toEqual(['kept from 1500 s'])
    expect(await server.client().enrollmentChannel(liveChannel, 'enrollee').receive()).toEqual(['live to enrollee'])
    expect(await carolEnd.receive()).toEqual(['live to initiator'])
    await carolEnd.send('after the sweep')

    // The live code redeems.
    const redeemed = await server.client().redeemEnrollmentCode(liveCode.text_fallback)
    expect(redeemed.channel_id).toMatch(/^[A-Za-z0-9_-]{43}$/)

    // Live throttle windows still block (the older one until 2100 s).
    for (const address of ['198.51.100.2', '198.51.100.3']) {
      const blocked = await redeemFrom(address, randomBytes(32).toString('base64url'))
      expect(blocked.status, address).toBe(429)
    }

    // The replay ledger still holds the live step: it cannot complete another sign-in.
    const replay = await problemOf(server.client().verifyLogin(await challengeOf(dave), codeAt(dave.authenticator, -1)))
    expect(replay.status).toBe(401)
    expect(replay.code).toBe('error.auth.invalid_code')
    // The live second-factor challenge completes with an unused step.
    const verified = await server.client().verifyLogin(keptChallenge, codeAt(dave.authenticator, 1))
    expect(verified.token_type).toBe('Bearer')

    // The live revoke challenge still works: it ends carol's one session.
    const carolId = (await carol.client.getProfile()).user_id
    expect(await carol.client.revokeAll(liveRevoke.challenge, await carolKey.proveRevokeAll(carolId, liveRevoke.challenge))).toBe(1)
  })

  it('leaves rows alone until they expire, then takes them', async () => {
    const t0 = server.clock.now()
    const seeded = await seedExpirable('198.51.100.4')
    const [alice, bob] = seeded.members as [Member, Member]
    const sweepAt = async (ms: number, expected: Counts) => {
      server.clock.set(ms)
      const counts = await sweepExpired(server.deps)
      expect(counts, `sweep at t0 + ${(ms - t0) / SECOND} s`).toEqual(exactly(counts, expected))
    }

    // The replay-ledger step of bob's confirmation can be presented until the step after it
    // ends; it goes once it is older than the window (allowing the sweep one step of margin).
    const confirmedStep = Math.floor(t0 / THIRTY_SECONDS)
    await sweepAt((confirmedStep + 2) * THIRTY_SECONDS - 1, {})
    await sweepAt((confirmedStep + 4) * THIRTY_SECONDS, { totp_used_steps: 1 })

    // Codes, revoke and second-factor challenges live 300 s.
    await sweepAt(t0 + 299 * SECOND, {})
    await sweepAt(t0 + 301 * SECOND, { enrollment_codes: 3, revoke_challenges: 2, mfa_challenges: 1 })
    // Channels live 600 s; the throttle window is 600 s.
    await sweepAt(t0 + 599 * SECOND, {})
    await sweepAt(t0 + 601 * SECOND, { relay_channels: 2, attempt_budgets: 1 })
    // A wrong-password count lasts as long as a lock (900 s); the second-factor window is 1200 s;
    // security events are kept 1500 s.
    await sweepAt(t0 + 899 * SECOND, {})
    await sweepAt(t0 + 901 * SECOND, { password_failures: 1 })
    await sweepAt(t0 + 1_199 * SECOND, {})
    await sweepAt(t0 + 1_201 * SECOND, { attempt_budgets: 1 })
    await sweepAt(t0 + 1_499 * SECOND, {})
    await sweepAt(t0 + 1_501 * SECOND, { security_events: 1 })

    // Sessions live as long as their refresh token. Alice refreshes just in time: her old row
    // ends at 1800 s with bob's, her new one lives on.
    await sweepAt(t0 + (REFRESH_TTL_S - 1) * SECOND, {})
    await alice.client.refresh()
    await sweepAt(t0 + (REFRESH_TTL_S + 1) * SECOND, { sessions: 2 })
    expect((await alice.client.listSessions()).sessions).toHaveLength(1)
    const refused = await problemOf(bob.client.refresh())
    expect(refused.code).toBe('error.auth.session_expired')
  })

  it('is safe to run several at once: no error, and together they delete what one sweep would', async () => {
    const t0 = server.clock.now()
    const batches = [await seedExpirable('198.51.100.5'), await seedExpirable('198.51.100.6'), await seedExpirable('198.51.100.7')]
    const expected = sum(batches.map((b) => b.expected))
    server.clock.set(t0 + SWEEP_AFTER_MS)
    const live = await registered(server, 'live')
    const liveChannel = (await server.client().redeemEnrollmentCode((await live.client.issueEnrollmentCode()).code)).channel_id
    await live.client.enrollmentChannel(liveChannel, 'initiator').send('survives')

    const results = await Promise.all([sweepExpired(server.deps), sweepExpired(server.deps), sweepExpired(server.deps)])
    const total = sum(results)
    expect(total).toEqual(exactly(total, expected))
    const after = await sweepExpired(server.deps)
    expect(after).toEqual(exactly(after, {}))

    for (const batch of batches) for (const channelId of batch.channels) expect(await leftoverPayloads(channelId, batch.initiatorId)).toEqual([])
    expect(await server.client().enrollmentChannel(liveChannel, 'enrollee').receive()).toEqual(['survives'])
    expect((await live.client.listSessions()).sessions).toHaveLength(1)
  })

  it('stops without cutting a pass short: the stop resolves once the pass under way has ended', async () => {
    // Found by the soak: SIGTERM during a pass closed the storage beneath it ("maintenance failed").
    const seeded = await seedExpirable('198.51.100.8')
    server.clock.advance(SWEEP_AFTER_MS)
    const lines: Array<{ level: string; message: string; done?: object }> = []
    const log = {
      info: (done: object, message: string) => lines.push({ level: 'info', message, done }),
      error: (_error: object, message: string) => lines.push({ level: 'error', message }),
    }
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] })
    let stop: () => Promise<void>
    try {
      stop = startSweeping(server.deps, log)
      vi.advanceTimersByTime(server.deps.config.sweepIntervalS * 1000)
    } finally {
      vi.useRealTimers()
    }
    expect(lines).toEqual([]) // the pass is under way: it waits on the database
    await stop()
    expect(lines.map((l) => `${l.level} ${l.message}`)).toEqual(['info maintenance removed expired rows and garbage'])
    expect(lines[0]?.done).toMatchObject({ deleted: seeded.expected })
  })
})
