// Refresh rotates a session into a new one that carries the lineage forward, answers a lost
// response's repeat with the same successor for 30 s, and treats every other reuse of a used
// or expired refresh token as a 401 that closes the live session of the lineage.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CofferClient, type Devices, type Tokens } from '../../src/sdk/client.ts'
import { PASSWORD, raw, registered, uniqueEmail } from '../support/actors.ts'
import { startServer, type TestServer } from '../support/server.ts'

const REFRESH_TTL_S = 3600

let server: TestServer
beforeAll(async () => {
  server = await startServer({ REFRESH_TOKEN_TTL_S: String(REFRESH_TTL_S) })
})
afterAll(() => server.close())

const iso = (ms: number) => new Date(ms).toISOString()

/** A client that sends its own User-Agent, on the server's clock. */
function clientAs(userAgent: string, tokens: Tokens | null = null): CofferClient {
  return new CofferClient({ baseUrl: server.url, now: server.clock.now, userAgent, tokens })
}

/** The refresh operation as a client sends it, without the SDK swapping tokens for us. */
function refreshRaw(refreshToken: string, userAgent = 'refresh-probe/1') {
  return raw(server, 'POST', '/v1/auth/refresh', {
    headers: { 'content-type': 'application/json', 'user-agent': userAgent },
    body: JSON.stringify({ refresh_token: refreshToken }),
  })
}

async function refreshed(refreshToken: string, userAgent?: string): Promise<Tokens> {
  const response = await refreshRaw(refreshToken, userAgent)
  expect(response.status, response.text).toBe(200)
  return response.json as unknown as Tokens
}

function listWith(accessToken: string) {
  return raw(server, 'GET', '/v1/auth/sessions', { headers: { authorization: `Bearer ${accessToken}` } })
}

async function devicesOf(accessToken: string): Promise<Devices> {
  const response = await listWith(accessToken)
  expect(response.status, response.text).toBe(200)
  return response.json as unknown as Devices
}

async function expectRefused(refreshToken: string): Promise<void> {
  const response = await refreshRaw(refreshToken)
  expect(response.status).toBe(401)
  expect(response.json?.code).toBe('error.auth.session_expired')
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/)
}

async function expectAccessDead(accessToken: string): Promise<void> {
  const response = await listWith(accessToken)
  expect(response.status).toBe(401)
  expect(response.json?.code).toBe('error.auth.unauthenticated')
}

/** Registers an account and signs in once more with advisory identifiers; returns that pair. */
async function signedIn(options: { userAgent?: string; cohort?: string; device?: string } = {}) {
  const email = uniqueEmail('refresh')
  await server.client().register(email, PASSWORD)
  const client = clientAs(options.userAgent ?? 'coffer-app/1.0')
  const result = await client.login(email, PASSWORD, {
    ...(options.cohort === undefined ? {} : { cohort_hash: options.cohort }),
    ...(options.device === undefined ? {} : { device_id: options.device }),
  })
  if (result.kind !== 'session') throw new Error('expected a session')
  return { email, client, tokens: result.tokens }
}

describe('refresh rotation', () => {
  it('opens a new session that carries the lineage forward and stamps created_at with the rotation time', async () => {
    const device = randomUUID()
    const signedInAt = server.clock.now()
    const { tokens } = await signedIn({ userAgent: 'opening-agent/2.0', cohort: 'cohort-rotation', device })
    const [before] = (await devicesOf(tokens.access_token)).sessions.filter((s) => s.current)
    expect(before).toBeDefined()

    server.clock.advance(7_000)
    const rotatedAt = server.clock.now()
    // A different User-Agent on the refresh itself: the opening request's one must stay.
    const next = await refreshed(tokens.refresh_token, 'some-other-agent/9')
    expect(next.token_type).toBe('Bearer')
    expect(next.expires_by).toBe(Math.floor(rotatedAt / 1000) + 900)
    expect(next.access_token).not.toBe(tokens.access_token)
    expect(next.refresh_token).not.toBe(tokens.refresh_token)

    const sessions = (await devicesOf(next.access_token)).sessions
    // The account also has its register session; the rotated one is the current one.
    expect(sessions).toHaveLength(2)
    const after = sessions.find((s) => s.current)
    expect(after).toBeDefined()
    expect(sessions.some((s) => s.session_id === before!.session_id)).toBe(false)
    expect(after!.session_id).not.toBe(before!.session_id)
    expect(after!.session_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    expect(after!.created_at).toBe(iso(rotatedAt))
    expect(after!.last_active_at).toBe(after!.created_at)
    expect(after!.authenticated_at).toBe(iso(signedInAt))
    expect(after!.authenticated_at).toBe(before!.authenticated_at)
    expect(after!.cohort_hash).toBe('cohort-rotation')
    expect(after!.device_id).toBe(device)
    expect(after!.user_agent).toBe('opening-agent/2.0')
    expect(after!.ip_address).toBe(before!.ip_address)
    expect(after!.ip_address).toBe('127.0.0.1')
  })

  it('carries authenticated_at across several rotations', async () => {
    const signedInAt = server.clock.now()
    let { tokens } = await signedIn()
    for (let i = 0; i < 3; i++) {
      server.clock.advance(60_000)
      tokens = await refreshed(tokens.refresh_token)
    }
    const current = (await devicesOf(tokens.access_token)).sessions.find((s) => s.current)
    expect(current?.authenticated_at).toBe(iso(signedInAt))
    expect(current?.created_at).toBe(iso(server.clock.now()))
  })

  it('stops honouring the old access token at once', async () => {
    const { tokens } = await signedIn()
    expect((await listWith(tokens.access_token)).status).toBe(200)
    const next = await refreshed(tokens.refresh_token)
    await expectAccessDead(tokens.access_token)
    expect((await listWith(next.access_token)).status).toBe(200)
  })

  it('lets the SDK rotate and keep working with the new pair', async () => {
    const { client, tokens } = await signedIn()
    await client.refresh()
    expect(client.tokens?.access_token).not.toBe(tokens.access_token)
    expect((await client.listSessions()).sessions.filter((s) => s.current)).toHaveLength(1)
    await expectAccessDead(tokens.access_token)
  })

  it('keeps the cohort record and moves its last_seen', async () => {
    const firstAt = server.clock.now()
    const { tokens } = await signedIn({ cohort: 'cohort-kept' })
    const first = (await devicesOf(tokens.access_token)).cohorts
    expect(first).toEqual([{ cohort_hash: 'cohort-kept', first_seen: iso(firstAt), last_seen: iso(firstAt) }])

    server.clock.advance(45_000)
    const next = await refreshed(tokens.refresh_token)
    const cohorts = (await devicesOf(next.access_token)).cohorts
    expect(cohorts).toEqual([{ cohort_hash: 'cohort-kept', first_seen: iso(firstAt), last_seen: iso(server.clock.now()) }])
  })

  it('records no cohort when the lineage carries none', async () => {
    const { tokens } = await signedIn()
    const next = await refreshed(tokens.refresh_token)
    expect((await devicesOf(next.access_token)).cohorts).toEqual([])
  })
})

describe('a repeated refresh token', () => {
  it('answers the same successor pair inside the grace window while the successor is unused', async () => {
    const { tokens } = await signedIn()
    const successor = await refreshed(tokens.refresh_token)
    server.clock.advance(29_000)
    const again = await refreshed(tokens.refresh_token)
    expect(again).toEqual(successor)
    // Still one session: the repeat opened nothing.
    const sessions = (await devicesOf(successor.access_token)).sessions
    expect(sessions.filter((s) => s.current)).toHaveLength(1)
    expect(sessions).toHaveLength(2) // the register session and the successor
  })

  it('still answers the successor when only its access token was used', async () => {
    const { tokens } = await signedIn()
    const successor = await refreshed(tokens.refresh_token)
    expect((await listWith(successor.access_token)).status).toBe(200)
    server.clock.advance(10_000)
    expect(await refreshed(tokens.refresh_token)).toEqual(successor)
  })

  it('after the grace window answers 401 session_expired and closes the live successor', async () => {
    const { email, tokens } = await signedIn()
    const witness = clientAs('witness/1')
    await witness.login(email, PASSWORD)
    const successor = await refreshed(tokens.refresh_token)
    expect((await witness.listSessions()).sessions).toHaveLength(3)

    server.clock.advance(31_000)
    await expectRefused(tokens.refresh_token)
    await expectAccessDead(successor.access_token)
    await expectRefused(successor.refresh_token)
    // Only that lineage closed: the register session and the witness remain.
    const left = (await witness.listSessions()).sessions
    expect(left).toHaveLength(2)
    expect(left.find((s) => s.current)?.user_agent).toBe('witness/1')
  })

  it("is a reuse once the successor's own refresh token was used, and closes the grandchild", async () => {
    const { tokens } = await signedIn()
    const child = await refreshed(tokens.refresh_token)
    const grandchild = await refreshed(child.refresh_token)
    expect((await listWith(grandchild.access_token)).status).toBe(200)

    await expectRefused(tokens.refresh_token) // inside the grace window of its first use
    await expectAccessDead(grandchild.access_token)
    await expectRefused(grandchild.refresh_token)
  })

  it('is a reuse when the successor was logged out, and does not bring it back', async () => {
    const { tokens } = await signedIn()
    const successor = await refreshed(tokens.refresh_token)
    expect((await raw(server, 'POST', '/v1/auth/logout', { headers: { authorization: `Bearer ${successor.access_token}` } })).status).toBe(204)
    await expectRefused(tokens.refresh_token)
    await expectAccessDead(successor.access_token)
  })

  it("answers a replay of the successor's used refresh token as a reuse too", async () => {
    const { tokens } = await signedIn()
    const child = await refreshed(tokens.refresh_token)
    const grandchild = await refreshed(child.refresh_token)
    server.clock.advance(31_000)
    await expectRefused(child.refresh_token)
    await expectAccessDead(grandchild.access_token)
  })
})

describe('refused refresh tokens', () => {
  it('answers an unknown refresh token with 401 session_expired', async () => {
    await expectRefused(`coffer_rt_${'A'.repeat(43)}`)
    await expectRefused('not-even-a-token')
  })

  it('answers a refresh token past REFRESH_TOKEN_TTL_S with 401, and the session is gone from the listing', async () => {
    const { email, tokens } = await signedIn()
    server.clock.advance(REFRESH_TTL_S * 1000 + 1)
    await expectRefused(tokens.refresh_token)
    const fresh = clientAs('after-expiry/1')
    await fresh.login(email, PASSWORD)
    const sessions = (await fresh.listSessions()).sessions
    expect(sessions).toHaveLength(1)
    expect(sessions[0]?.current).toBe(true)
  })

  it('honours a refresh token until its lifetime ends, and each refresh starts a new lifetime', async () => {
    const { tokens } = await signedIn()
    server.clock.advance(REFRESH_TTL_S * 1000 - 1000)
    const next = await refreshed(tokens.refresh_token)
    server.clock.advance(REFRESH_TTL_S * 1000 - 1000) // past the first lifetime, inside the second
    const third = await refreshed(next.refresh_token)
    server.clock.advance(REFRESH_TTL_S * 1000)
    await expectRefused(third.refresh_token)
  })

  it('answers a refresh token of a revoked session with 401', async () => {
    const member = await registered(server, 'revoked')
    const tokens = member.client.tokens!
    const [session] = (await member.client.listSessions()).sessions
    await member.client.revokeSession(session!.session_id)
    await expectRefused(tokens.refresh_token)
  })

  it('answers a body without refresh_token with 422', async () => {
    const response = await raw(server, 'POST', '/v1/auth/refresh', { headers: { 'content-type': 'application/json' }, body: '{}' })
    expect(response.status).toBe(422)
    expect(response.json?.code).toBe('error.request.invalid')
  })
})
