// The device-enrollment relay follows SPEC's channel table: a fresh session issues a one-time
// code whose two spellings burn together, redeeming it opens a channel whose two mailboxes
// deliver each payload once in arrival order within their bounds, only the initiator closes
// it, it dies on time, and refused redeems from one address are throttled without burning codes.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashToken } from '../../src/crypto/tokens.ts'
import type { CofferProblem, Channel, EnrollmentCode, RelayDirection } from '../../src/sdk/client.ts'
import { type Member, PASSWORD, problemOf, raw, registered } from '../support/actors.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
beforeAll(async () => {
  // Refused redeems are part of many tests here; the throttle has its own server below.
  server = await startServer({ REDEEM_MAX_FAILURES: '100000' })
})
afterAll(() => server.close())

const SECOND = 1_000
const CODE_TTL_MS = 300 * SECOND
const CHANNEL_TTL_MS = 600 * SECOND
const FRESHNESS_MS = 600 * SECOND
const KIB64 = 64 * 1024
const BASE64URL_32 = /^[A-Za-z0-9_-]{43}$/
const json = { 'content-type': 'application/json' }
const iso = (ms: number) => new Date(ms).toISOString()
const channelPath = (id: string) => `/v1/auth/devices/enroll/channel/${id}`

async function expectProblem(promise: Promise<unknown>, status: number, code: string): Promise<CofferProblem> {
  const problem = await problemOf(promise)
  expect(problem.status, problem.message).toBe(status)
  expect(problem.code).toBe(code)
  return problem
}

function unknownChannelId(): string {
  return randomBytes(32).toString('base64url')
}

/** A code that no one issued: 32 fresh random bytes. */
function unknownCode(): string {
  return randomBytes(32).toString('base64url')
}

function redeemRaw(code: unknown, headers: Record<string, string> = json) {
  return raw(server, 'POST', '/v1/auth/devices/enroll/redeem', { headers, body: JSON.stringify({ code }) })
}

function relayRaw(channelId: string, body: unknown, headers: Record<string, string> = json) {
  return raw(server, 'POST', channelPath(channelId), { headers, body: typeof body === 'string' ? body : JSON.stringify(body) })
}

interface Opened {
  readonly member: Member
  readonly code: EnrollmentCode
  readonly channel: Channel
  readonly channelId: string
}

/** An account issues a code and a new device (no session) redeems it. */
async function openedChannel(member?: Member): Promise<Opened> {
  const initiator = member ?? (await registered(server, 'initiator'))
  const code = await initiator.client.issueEnrollmentCode()
  const channel = await server.client().redeemEnrollmentCode(code.code)
  return { member: initiator, code, channel, channelId: channel.channel_id }
}

async function userIdOf(member: Member): Promise<string> {
  return (await member.client.getProfile()).user_id
}

/**
 * Whether any payload of a removed channel survived: re-creates the channel record under the
 * same id through the storage port and drains both of its mailboxes.
 */
async function leftoverPayloads(channelId: string, initiatorId: string): Promise<string[]> {
  const channelHash = hashToken(channelId)
  const now = server.clock.now()
  await server.deps.storage.openChannel({ channelHash, initiatorId, createdAt: now, expiresAt: now + CHANNEL_TTL_MS })
  const left = [
    ...((await server.deps.storage.drainMailbox(channelHash, 'to_enrollee', now)) ?? ['<channel missing>']),
    ...((await server.deps.storage.drainMailbox(channelHash, 'to_initiator', now)) ?? ['<channel missing>']),
  ]
  await server.deps.storage.closeChannel(channelHash, initiatorId, now)
  return left
}

describe('issue enrollment code', () => {
  it('answers a 32-byte base64url code, a 10-digit fallback and expires_at = now + 300 s', async () => {
    const member = await registered(server, 'issue')
    const now = server.clock.now()
    const first = await member.client.issueEnrollmentCode()
    expect(first.code).toMatch(BASE64URL_32)
    expect(Buffer.from(first.code, 'base64url')).toHaveLength(32)
    expect(Buffer.from(first.code, 'base64url').toString('base64url')).toBe(first.code)
    expect(first.text_fallback).toMatch(/^\d{10}$/)
    expect(first.expires_at).toBe(iso(now + CODE_TTL_MS))
    expect(Object.keys(first).sort()).toEqual(['code', 'expires_at', 'text_fallback'])

    server.clock.advance(1_234)
    const second = await member.client.issueEnrollmentCode()
    expect(second.code).not.toBe(first.code)
    expect(second.text_fallback).not.toBe(first.text_fallback)
    expect(second.expires_at).toBe(iso(now + 1_234 + CODE_TTL_MS))
  })

  it('needs a bearer token (401 with a Bearer challenge)', async () => {
    const bare = await raw(server, 'POST', '/v1/auth/devices/enroll/code')
    expect(bare.status).toBe(401)
    expect(bare.json?.code).toBe('error.auth.unauthenticated')
    expect(bare.headers.get('www-authenticate')).toMatch(/^Bearer /)
    const dead = await raw(server, 'POST', '/v1/auth/devices/enroll/code', { headers: { authorization: `Bearer ${unknownCode()}` } })
    expect(dead.status).toBe(401)
    expect(dead.json?.code).toBe('error.auth.unauthenticated')
  })

  describe('freshness gate', () => {
    async function expectStale(member: Member): Promise<void> {
      const problem = await expectProblem(member.client.issueEnrollmentCode(), 403, 'error.auth.reauthentication_required')
      expect(problem.problem.status).toBe(403)
      expect(problem.headers.get('content-type')).toMatch(/^application\/problem\+json/)
    }

    it('passes right after register, up to the end of the window', async () => {
      const member = await registered(server, 'fresh-register')
      await member.client.issueEnrollmentCode()
      server.clock.advance(FRESHNESS_MS - 1)
      await member.client.issueEnrollmentCode()
    })

    it('refuses with 403 once the window has passed since register, and nothing is issued', async () => {
      const member = await registered(server, 'stale')
      server.clock.advance(FRESHNESS_MS + 1)
      await expectStale(member)
      // The session itself is still good: only the gate refuses.
      expect((await member.client.listSessions()).sessions).toHaveLength(1)
    })

    it('passes right after a login, while the older session of the account stays stale', async () => {
      const member = await registered(server, 'fresh-login')
      server.clock.advance(FRESHNESS_MS + 1)
      const other = server.client()
      const login = await other.login(member.email, PASSWORD)
      expect(login.kind).toBe('session')
      await other.issueEnrollmentCode()
      await expectStale(member)
    })

    it('is not reset by a refresh: still 403 after refreshing', async () => {
      const member = await registered(server, 'refresh')
      const before = (await member.client.listSessions()).sessions[0]!.authenticated_at
      server.clock.advance(FRESHNESS_MS + 1)
      const oldAccess = member.client.tokens!.access_token
      await member.client.refresh()
      expect(member.client.tokens!.access_token).not.toBe(oldAccess)
      await expectStale(member)
      expect((await member.client.listSessions()).sessions[0]!.authenticated_at).toBe(before)
    })

    it('is reset by reauthenticate: 200 after it, for the same tokens', async () => {
      const member = await registered(server, 'reauth')
      server.clock.advance(FRESHNESS_MS + 1)
      await expectStale(member)
      const tokens = member.client.tokens
      expect(await member.client.reauthenticate(PASSWORD)).toBe(iso(server.clock.now()))
      expect(member.client.tokens).toBe(tokens)
      const issued = await member.client.issueEnrollmentCode()
      expect(issued.expires_at).toBe(iso(server.clock.now() + CODE_TTL_MS))
      // And the reset lasts one window, measured from the reauthentication.
      server.clock.advance(FRESHNESS_MS + 1)
      await expectStale(member)
    })

    it('is not reset by a wrong password on reauthenticate', async () => {
      const member = await registered(server, 'reauth-wrong')
      server.clock.advance(FRESHNESS_MS + 1)
      await expectProblem(member.client.reauthenticate('not the password'), 401, 'error.auth.invalid_credentials')
      await expectStale(member)
    })

    it('is reset by a password change', async () => {
      const member = await registered(server, 'password')
      server.clock.advance(FRESHNESS_MS + 1)
      await expectStale(member)
      await member.client.changePassword(PASSWORD, 'a brand new password')
      await member.client.issueEnrollmentCode()
    })
  })
})

describe('redeem code', () => {
  async function expectRefused(code: string): Promise<void> {
    await expectProblem(server.client().redeemEnrollmentCode(code), 404, 'error.enroll.code_refused')
  }

  it('opens a channel by the full code: 32-byte base64url id, expires_at = now + 600 s', async () => {
    const member = await registered(server, 'by-code')
    const issued = await member.client.issueEnrollmentCode()
    server.clock.advance(5_000)
    const now = server.clock.now()
    const channel = await server.client().redeemEnrollmentCode(issued.code)
    expect(channel.channel_id).toMatch(BASE64URL_32)
    expect(Buffer.from(channel.channel_id, 'base64url')).toHaveLength(32)
    expect(channel.channel_id).not.toBe(issued.code)
    expect(channel.expires_at).toBe(iso(now + CHANNEL_TTL_MS))
    expect(Object.keys(channel).sort()).toEqual(['channel_id', 'expires_at'])
    // The channel works, and its initiator is the account that issued the code.
    await server.client().relay(channel.channel_id, 'to_initiator', 'hello')
    expect(await member.client.drain(channel.channel_id, 'to_initiator')).toEqual(['hello'])
    await member.client.closeChannel(channel.channel_id)
  })

  it('opens a channel by the text fallback', async () => {
    const member = await registered(server, 'by-text')
    const issued = await member.client.issueEnrollmentCode()
    const now = server.clock.now()
    const channel = await server.client().redeemEnrollmentCode(issued.text_fallback)
    expect(channel.channel_id).toMatch(BASE64URL_32)
    expect(channel.expires_at).toBe(iso(now + CHANNEL_TTL_MS))
    await member.client.closeChannel(channel.channel_id)
  })

  it.each([
    ['spaces', (t: string) => `${t.slice(0, 3)} ${t.slice(3, 6)} ${t.slice(6)}`],
    ['hyphens', (t: string) => `${t.slice(0, 3)}-${t.slice(3, 6)}-${t.slice(6)}`],
    ['a mix, with spaces around', (t: string) => ` ${t.slice(0, 2)} - ${t.slice(2, 5)}-${t.slice(5, 8)} ${t.slice(8)} `],
  ])('opens a channel by the text fallback written with %s', async (_case, spell) => {
    const member = await registered(server, 'by-spaced-text')
    const issued = await member.client.issueEnrollmentCode()
    const spelled = spell(issued.text_fallback)
    expect(spelled).not.toBe(issued.text_fallback)
    const channel = await server.client().redeemEnrollmentCode(spelled)
    expect(channel.channel_id).toMatch(BASE64URL_32)
    await expectRefused(issued.code)
    await expectRefused(issued.text_fallback)
  })

  it('burns both spellings when the code is redeemed', async () => {
    const member = await registered(server, 'burn-code')
    const issued = await member.client.issueEnrollmentCode()
    await server.client().redeemEnrollmentCode(issued.code)
    await expectRefused(issued.text_fallback)
    await expectRefused(issued.code)
  })

  it('burns both spellings when the text fallback is redeemed', async () => {
    const member = await registered(server, 'burn-text')
    const issued = await member.client.issueEnrollmentCode()
    await server.client().redeemEnrollmentCode(issued.text_fallback)
    await expectRefused(issued.code)
    await expectRefused(issued.text_fallback)
  })

  it('keeps codes apart: redeeming one leaves another of the same account redeemable', async () => {
    const member = await registered(server, 'two-codes')
    const first = await member.client.issueEnrollmentCode()
    const second = await member.client.issueEnrollmentCode()
    const a = await server.client().redeemEnrollmentCode(first.code)
    const b = await server.client().redeemEnrollmentCode(second.text_fallback)
    expect(a.channel_id).not.toBe(b.channel_id)
  })

  it('refuses an unknown code of either spelling with 404 error.enroll.code_refused', async () => {
    await expectRefused(unknownCode())
    await expectRefused('0000000000')
    await expectRefused('not a code at all')
    await expectRefused('')
  })

  it('refuses a code once its expires_at has passed, both spellings', async () => {
    const member = await registered(server, 'expiry')
    const issued = await member.client.issueEnrollmentCode()
    const spare = await member.client.issueEnrollmentCode()
    const expiresAt = Date.parse(issued.expires_at)
    server.clock.set(expiresAt - 1)
    await server.client().redeemEnrollmentCode(spare.text_fallback) // still live one millisecond before
    server.clock.set(expiresAt + 1)
    await expectRefused(issued.code)
    await expectRefused(issued.text_fallback)
  })

  it('needs no bearer, and ignores one that is presented', async () => {
    const member = await registered(server, 'no-bearer')
    const issued = await member.client.issueEnrollmentCode()
    const bare = await redeemRaw(issued.code)
    expect(bare.status, bare.text).toBe(200)
    expect(bare.json?.channel_id).toMatch(BASE64URL_32)
    const again = await member.client.issueEnrollmentCode()
    const withJunk = await redeemRaw(again.text_fallback, { ...json, authorization: `Bearer ${unknownCode()}` })
    expect(withJunk.status, withJunk.text).toBe(200)
  })

  it('answers 400 for malformed JSON, 415 for another media type, 422 for a schema break', async () => {
    const malformed = await raw(server, 'POST', '/v1/auth/devices/enroll/redeem', { headers: json, body: '{"code": ' })
    expect(malformed.status).toBe(400)
    expect(malformed.json?.code).toBe('error.request.malformed')
    const text = await raw(server, 'POST', '/v1/auth/devices/enroll/redeem', { headers: { 'content-type': 'text/plain' }, body: 'abc' })
    expect(text.status).toBe(415)
    expect(text.json?.code).toBe('error.request.unsupported_media_type')
    for (const body of [{}, { code: 1234567890 }, { code: null }]) {
      const invalid = await raw(server, 'POST', '/v1/auth/devices/enroll/redeem', { headers: json, body: JSON.stringify(body) })
      expect(invalid.status, JSON.stringify(body)).toBe(422)
      expect(invalid.json?.code).toBe('error.request.invalid')
    }
  })

  it('does not burn a code on a request that fails validation', async () => {
    const member = await registered(server, 'invalid-keeps')
    const issued = await member.client.issueEnrollmentCode()
    const invalid = await raw(server, 'POST', '/v1/auth/devices/enroll/redeem', {
      headers: { 'content-type': 'text/plain' },
      body: JSON.stringify({ code: issued.code }),
    })
    expect(invalid.status).toBe(415)
    await server.client().redeemEnrollmentCode(issued.code)
  })
})

describe('redeem throttle', () => {
  const WINDOW_S = 60
  let throttled: TestServer
  beforeAll(async () => {
    throttled = await startServer({ REDEEM_MAX_FAILURES: '3', REDEEM_WINDOW_S: String(WINDOW_S), TRUST_PROXY: 'true' })
  })
  afterAll(() => throttled.close())

  function redeemFrom(address: string, code: string) {
    return raw(throttled, 'POST', '/v1/auth/devices/enroll/redeem', { headers: { ...json, 'x-forwarded-for': address }, body: JSON.stringify({ code }) })
  }

  it('answers 404 to the first three refused codes, then 429 to every redeem, valid codes included, until the window passes', async () => {
    const member = await registered(throttled, 'throttled')
    const valid = await member.client.issueEnrollmentCode()
    const forOther = await member.client.issueEnrollmentCode()
    const address = '198.51.100.7'

    const windowStart = throttled.clock.now()
    for (let i = 0; i < 3; i++) {
      const refused = await redeemFrom(address, unknownCode())
      expect(refused.status, `refusal ${i + 1}`).toBe(404)
      expect(refused.json?.code).toBe('error.enroll.code_refused')
      throttled.clock.advance(2 * SECOND)
    }
    const windowEnd = windowStart + WINDOW_S * SECOND

    for (const code of [unknownCode(), valid.code, valid.text_fallback]) {
      const blocked = await redeemFrom(address, code)
      expect(blocked.status, blocked.text).toBe(429)
      expect(blocked.json?.code).toBe('error.rate_limited')
      expect(blocked.headers.get('content-type')).toMatch(/^application\/problem\+json/)
      expect(blocked.headers.get('retry-after')).toBe(String(Math.ceil((windowEnd - throttled.clock.now()) / 1000)))
    }

    // Another address is not throttled (and its redeem is the real thing).
    const elsewhere = await redeemFrom('203.0.113.9', forOther.code)
    expect(elsewhere.status, elsewhere.text).toBe(200)

    throttled.clock.set(windowEnd - 1)
    const last = await redeemFrom(address, valid.code)
    expect(last.status).toBe(429)
    expect(last.headers.get('retry-after')).toBe('1')

    // The window has passed: the valid code was never looked at, so it still opens a channel.
    throttled.clock.set(windowEnd + 1)
    const opened = await redeemFrom(address, valid.code)
    expect(opened.status, opened.text).toBe(200)
    expect(opened.json?.channel_id).toMatch(BASE64URL_32)

    // Counting starts over: three more refusals answer 404, the next one 429 again.
    const secondStart = throttled.clock.now()
    for (let i = 0; i < 3; i++) {
      const refused = await redeemFrom(address, unknownCode())
      expect(refused.status, `refusal ${i + 1} of the new window`).toBe(404)
    }
    const blockedAgain = await redeemFrom(address, unknownCode())
    expect(blockedAgain.status).toBe(429)
    expect(blockedAgain.headers.get('retry-after')).toBe(String(Math.ceil((secondStart + WINDOW_S * SECOND - throttled.clock.now()) / 1000)))
  })

  it('counts a used code and an expired code as refusals like an unknown one', async () => {
    const member = await registered(throttled, 'counted')
    const used = await member.client.issueEnrollmentCode()
    expect((await redeemFrom('198.51.100.8', used.code)).status).toBe(200)
    expect((await redeemFrom('198.51.100.8', used.code)).status).toBe(404)
    expect((await redeemFrom('198.51.100.8', used.text_fallback)).status).toBe(404)
    expect((await redeemFrom('198.51.100.8', unknownCode())).status).toBe(404)
    expect((await redeemFrom('198.51.100.8', unknownCode())).status).toBe(429)

    const expiring = await member.client.issueEnrollmentCode()
    throttled.clock.advance(CODE_TTL_MS + 1)
    expect((await redeemFrom('198.51.100.9', expiring.code)).status).toBe(404)
    expect((await redeemFrom('198.51.100.9', expiring.text_fallback)).status).toBe(404)
    expect((await redeemFrom('198.51.100.9', expiring.code)).status).toBe(404)
    expect((await redeemFrom('198.51.100.9', unknownCode())).status).toBe(429)
  })
})

describe('relay and drain', () => {
  it('delivers each direction in arrival order, once, leaving the other direction untouched', async () => {
    const { member, channelId } = await openedChannel()
    const initiator = member.client.enrollmentChannel(channelId, 'initiator')
    const enrollee = server.client().enrollmentChannel(channelId, 'enrollee')

    await initiator.send('i1')
    await enrollee.send('e1')
    await initiator.send('i2')
    await enrollee.send('e2')
    await initiator.send('i3')

    expect(await enrollee.receive()).toEqual(['i1', 'i2', 'i3'])
    expect(await enrollee.receive()).toEqual([])
    // Draining to_enrollee took nothing from to_initiator.
    await enrollee.send('e3')
    expect(await initiator.receive()).toEqual(['e1', 'e2', 'e3'])
    expect(await initiator.receive()).toEqual([])

    await initiator.send('i4')
    expect(await enrollee.receive()).toEqual(['i4'])
  })

  it('drains with the raw directions too: to_initiator and to_enrollee are separate mailboxes', async () => {
    const { member, channelId } = await openedChannel()
    const anyone = server.client()
    await anyone.relay(channelId, 'to_enrollee', 'for the new device')
    await anyone.relay(channelId, 'to_initiator', 'for the old device')
    expect(await anyone.drain(channelId, 'to_initiator')).toEqual(['for the old device'])
    expect(await member.client.drain(channelId, 'to_enrollee')).toEqual(['for the new device'])
    expect(await anyone.drain(channelId, 'to_enrollee')).toEqual([])
  })

  it('returns payloads exactly as posted (opaque text, empty string included)', async () => {
    const { channelId } = await openedChannel()
    const payloads = ['', ' ', '{"looks":"like json"}', 'line\nbreak\ttab', 'ünïcödé ✓ 😀', '\u0000nul', 'a'.repeat(1000)]
    for (const payload of payloads) await server.client().relay(channelId, 'to_enrollee', payload)
    expect(await server.client().drain(channelId, 'to_enrollee')).toEqual(payloads)
  })

  it('returns every JSON string exactly, NUL and lone surrogates included', async () => {
    const { channelId } = await openedChannel()
    const payloads = ['a\u0000b', '\u0000'.repeat(100), 'x\ud800y', '\udfff', '\ud83d\ude00']
    for (const payload of payloads) {
      const relayed = await relayRaw(channelId, `{"direction":"to_initiator","payload":${JSON.stringify(payload)}}`)
      expect(relayed.status, relayed.text).toBe(204)
    }
    const drained = await raw(server, 'GET', `${channelPath(channelId)}?direction=to_initiator`)
    expect(drained.status, drained.text).toBe(200)
    expect(drained.json).toEqual({ payloads })
  })

  it('answers 204 with no body to a relay and 200 DrainResponse to a drain', async () => {
    const { channelId } = await openedChannel()
    const relayed = await relayRaw(channelId, { direction: 'to_initiator', payload: 'p' })
    expect(relayed.status).toBe(204)
    expect(relayed.text).toBe('')
    const drained = await raw(server, 'GET', `${channelPath(channelId)}?direction=to_initiator`)
    expect(drained.status).toBe(200)
    expect(drained.headers.get('content-type')).toMatch(/^application\/json/)
    expect(drained.json).toEqual({ payloads: ['p'] })
  })

  it.each([['sideways'], ['TO_ENROLLEE'], ['']])('answers 400 to a drain with direction=%j', async (direction) => {
    const { channelId } = await openedChannel()
    await server.client().relay(channelId, 'to_enrollee', 'kept')
    const drained = await raw(server, 'GET', `${channelPath(channelId)}?direction=${direction}`)
    expect(drained.status).toBe(400)
    expect(drained.json?.code).toBe('error.request.malformed')
    expect(await server.client().drain(channelId, 'to_enrollee')).toEqual(['kept'])
  })

  it('answers 400 to a drain without a direction', async () => {
    const { channelId } = await openedChannel()
    const drained = await raw(server, 'GET', channelPath(channelId))
    expect(drained.status).toBe(400)
    expect(drained.json?.code).toBe('error.request.malformed')
  })

  it.each([
    ['a bad direction', { direction: 'sideways', payload: 'p' }],
    ['a missing direction', { payload: 'p' }],
    ['a missing payload', { direction: 'to_enrollee' }],
    ['a non-string payload', { direction: 'to_enrollee', payload: 42 }],
    ['a null payload', { direction: 'to_enrollee', payload: null }],
    ['an unknown key', { direction: 'to_enrollee', payload: 'p', note: 'extra' }],
  ])('answers 422 error.request.invalid to a relay body with %s, storing nothing', async (_case, body) => {
    const { channelId } = await openedChannel()
    const relayed = await relayRaw(channelId, body)
    expect(relayed.status, relayed.text).toBe(422)
    expect(relayed.json?.code).toBe('error.request.invalid')
    expect(await server.client().drain(channelId, 'to_enrollee')).toEqual([])
    expect(await server.client().drain(channelId, 'to_initiator')).toEqual([])
  })

  it('answers 400 to malformed JSON and 415 to another media type', async () => {
    const { channelId } = await openedChannel()
    const malformed = await relayRaw(channelId, '{"direction": "to_enrollee",')
    expect(malformed.status).toBe(400)
    expect(malformed.json?.code).toBe('error.request.malformed')
    const text = await relayRaw(channelId, JSON.stringify({ direction: 'to_enrollee', payload: 'p' }), { 'content-type': 'text/plain' })
    expect(text.status).toBe(415)
    expect(text.json?.code).toBe('error.request.unsupported_media_type')
    expect(await server.client().drain(channelId, 'to_enrollee')).toEqual([])
  })

  it('answers 413 to a relay body over the configured request limit', async () => {
    const { channelId } = await openedChannel()
    const huge = await relayRaw(channelId, { direction: 'to_enrollee', payload: 'x'.repeat(server.deps.config.bodyLimitBytes + 1) })
    expect(huge.status).toBe(413)
    expect(huge.json?.code).toBe('error.request.too_large')
  })

  it('answers 404 error.enroll.channel_not_found to a relay or drain on an unknown channel', async () => {
    const id = unknownChannelId()
    await expectProblem(server.client().relay(id, 'to_enrollee', 'p'), 404, 'error.enroll.channel_not_found')
    await expectProblem(server.client().drain(id, 'to_enrollee'), 404, 'error.enroll.channel_not_found')
    await expectProblem(server.client().drain(id, 'to_initiator'), 404, 'error.enroll.channel_not_found')
  })

  it.each([
    ['42 characters', 'A'.repeat(42)],
    ['44 characters', 'A'.repeat(44)],
    ['a character outside base64url', `${'A'.repeat(42)}!`],
    ['standard-base64 characters', `${'A'.repeat(41)}+.`],
  ])('answers 400 to a channel id of %s (relay, drain, close)', async (_case, id) => {
    const relayed = await relayRaw(id, { direction: 'to_enrollee', payload: 'p' })
    expect(relayed.status).toBe(400)
    expect(relayed.json?.code).toBe('error.request.malformed')
    const drained = await raw(server, 'GET', `${channelPath(id)}?direction=to_enrollee`)
    expect(drained.status).toBe(400)
    expect(drained.json?.code).toBe('error.request.malformed')
    const member = await registered(server, 'bad-id')
    await expectProblem(member.client.closeChannel(id), 400, 'error.request.malformed')
  })

  it('accepts a payload of exactly 64 KiB of UTF-8 and refuses one byte more with 422', async () => {
    const { channelId } = await openedChannel()
    const ascii = 'a'.repeat(KIB64)
    const twoByte = 'é'.repeat(KIB64 / 2)
    const fourByte = '😀'.repeat(KIB64 / 4)
    const mixed = `${'€'.repeat(21_845)}a` // 3 × 21845 + 1 = 65536 bytes
    for (const payload of [ascii, twoByte, fourByte, mixed]) expect(Buffer.byteLength(payload, 'utf8')).toBe(KIB64)
    for (const payload of [ascii, twoByte, fourByte, mixed]) await server.client().relay(channelId, 'to_enrollee', payload)
    expect(await server.client().drain(channelId, 'to_enrollee')).toEqual([ascii, twoByte, fourByte, mixed])

    // One byte over, counted in UTF-8 bytes: the multi-byte ones are far under 64 Ki characters.
    for (const payload of [`${ascii}a`, `${twoByte}a`, `${fourByte}a`, `${'€'.repeat(21_845)}é`]) {
      expect(Buffer.byteLength(payload, 'utf8')).toBeGreaterThan(KIB64)
      const problem = await expectProblem(server.client().relay(channelId, 'to_enrollee', payload), 422, 'error.request.invalid')
      expect(problem.problem.status).toBe(422)
    }
    expect(await server.client().drain(channelId, 'to_enrollee')).toEqual([])
  })

  it('holds 64 payloads per mailbox: the 65th is 422 error.enroll.mailbox_full, the other mailbox still accepts', async () => {
    const { member, channelId } = await openedChannel()
    const enrollee = server.client().enrollmentChannel(channelId, 'enrollee')
    const sent = Array.from({ length: 64 }, (_, i) => `payload-${i}`)
    for (const payload of sent) await server.client().relay(channelId, 'to_enrollee', payload)
    await expectProblem(server.client().relay(channelId, 'to_enrollee', 'one too many'), 422, 'error.enroll.mailbox_full')
    await expectProblem(server.client().relay(channelId, 'to_enrollee', 'still too many'), 422, 'error.enroll.mailbox_full')

    await enrollee.send('the other mailbox')
    expect(await member.client.enrollmentChannel(channelId, 'initiator').receive()).toEqual(['the other mailbox'])

    expect(await enrollee.receive()).toEqual(sent)
    // Drained, it accepts again.
    await server.client().relay(channelId, 'to_enrollee', 'after the drain')
    expect(await enrollee.receive()).toEqual(['after the drain'])
  })
})

describe('close channel', () => {
  it('by the initiator: 204, then relay, drain and close answer 404 and both mailboxes are gone', async () => {
    const { member, channelId } = await openedChannel()
    await server.client().relay(channelId, 'to_enrollee', 'pending for enrollee')
    await server.client().relay(channelId, 'to_initiator', 'pending for initiator')

    const closed = await raw(server, 'DELETE', channelPath(channelId), { headers: { authorization: `Bearer ${member.client.tokens!.access_token}` } })
    expect(closed.status).toBe(204)
    expect(closed.text).toBe('')

    for (const direction of ['to_enrollee', 'to_initiator'] as const) {
      await expectProblem(server.client().relay(channelId, direction, 'late'), 404, 'error.enroll.channel_not_found')
      await expectProblem(server.client().drain(channelId, direction), 404, 'error.enroll.channel_not_found')
    }
    await expectProblem(member.client.closeChannel(channelId), 404, 'error.enroll.channel_not_found')
    expect(await leftoverPayloads(channelId, await userIdOf(member))).toEqual([])
  })

  it('by the initiator through the SDK channel end, from another session of the same account', async () => {
    const { member, channelId } = await openedChannel()
    const laptop = server.client()
    expect((await laptop.login(member.email, PASSWORD)).kind).toBe('session')
    await laptop.enrollmentChannel(channelId, 'initiator').close()
    await expectProblem(server.client().drain(channelId, 'to_initiator'), 404, 'error.enroll.channel_not_found')
  })

  it('by another account: 404 exactly like an unknown channel, and the channel keeps working', async () => {
    const { member, channelId } = await openedChannel()
    await server.client().relay(channelId, 'to_enrollee', 'before')
    const stranger = await registered(server, 'stranger')

    const foreign = await problemOf(stranger.client.closeChannel(channelId))
    const unknown = await problemOf(stranger.client.closeChannel(unknownChannelId()))
    expect(foreign.status).toBe(404)
    expect(foreign.code).toBe('error.enroll.channel_not_found')
    expect(foreign.status).toBe(unknown.status)
    expect(foreign.code).toBe(unknown.code)
    const { instance: _a, ...foreignRest } = foreign.problem
    const { instance: _b, ...unknownRest } = unknown.problem
    expect(foreignRest).toEqual(unknownRest)

    await server.client().relay(channelId, 'to_enrollee', 'after')
    expect(await server.client().drain(channelId, 'to_enrollee')).toEqual(['before', 'after'])
    await member.client.closeChannel(channelId)
  })

  it('needs a bearer token: 401 without one, and the channel stays open', async () => {
    const { channelId } = await openedChannel()
    const bare = await raw(server, 'DELETE', channelPath(channelId))
    expect(bare.status).toBe(401)
    expect(bare.json?.code).toBe('error.auth.unauthenticated')
    expect(bare.headers.get('www-authenticate')).toMatch(/^Bearer /)
    await server.client().relay(channelId, 'to_initiator', 'still open')
    expect(await server.client().drain(channelId, 'to_initiator')).toEqual(['still open'])
  })
})

describe('channel expiry', () => {
  it('closes the channel when expires_at is reached: relay, drain and close answer 404', async () => {
    const { member, channel, channelId } = await openedChannel()
    const expiresAt = Date.parse(channel.expires_at)
    expect(expiresAt).toBe(server.clock.now() + CHANNEL_TTL_MS)

    server.clock.set(expiresAt - 1)
    await server.client().relay(channelId, 'to_enrollee', 'last moment')
    await server.client().relay(channelId, 'to_initiator', 'unread')
    expect(await server.client().drain(channelId, 'to_enrollee')).toEqual(['last moment'])

    server.clock.set(expiresAt)
    const directions: RelayDirection[] = ['to_enrollee', 'to_initiator']
    for (const direction of directions) {
      await expectProblem(server.client().relay(channelId, direction, 'too late'), 404, 'error.enroll.channel_not_found')
      await expectProblem(server.client().drain(channelId, direction), 404, 'error.enroll.channel_not_found')
    }
    await expectProblem(member.client.closeChannel(channelId), 404, 'error.enroll.channel_not_found')

    server.clock.advance(CHANNEL_TTL_MS)
    await expectProblem(server.client().drain(channelId, 'to_initiator'), 404, 'error.enroll.channel_not_found')
  })
})
