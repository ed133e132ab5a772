// The devices listing shows every live session of the account (and only the caller as
// current) with what its opening request recorded, revoke and logout end sessions for good,
// and every bearer operation refuses a missing or dead token with a Bearer challenge.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CofferClient, type Tokens } from '../../src/sdk/client.ts'
import { PASSWORD, problemOf, raw, registered, uniqueEmail } from '../support/actors.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

const iso = (ms: number) => new Date(ms).toISOString()
const json = { 'content-type': 'application/json' }

function clientAs(userAgent: string, extra: { tokens?: Tokens; now?: () => number; fetch?: typeof fetch } = {}): CofferClient {
  return new CofferClient({ baseUrl: server.url, now: server.clock.now, userAgent, ...extra })
}

function withBearer(accessToken: string, method = 'GET', path = '/v1/auth/sessions') {
  return raw(server, method, path, { headers: { authorization: `Bearer ${accessToken}` } })
}

function refreshRaw(refreshToken: string) {
  return raw(server, 'POST', '/v1/auth/refresh', { headers: json, body: JSON.stringify({ refresh_token: refreshToken }) })
}

/** Both halves of a pair are refused. */
async function expectPairDead(tokens: Tokens): Promise<void> {
  const access = await withBearer(tokens.access_token)
  expect(access.status).toBe(401)
  expect(access.json?.code).toBe('error.auth.unauthenticated')
  const refreshed = await refreshRaw(tokens.refresh_token)
  expect(refreshed.status).toBe(401)
  expect(refreshed.json?.code).toBe('error.auth.session_expired')
}

async function loginAs(email: string, userAgent: string, advisory: { cohort_hash?: unknown; device_id?: unknown } = {}) {
  const response = await raw(server, 'POST', '/v1/auth/login', {
    headers: { ...json, 'user-agent': userAgent },
    body: JSON.stringify({ email, password: PASSWORD, ...advisory }),
  })
  expect(response.status, response.text).toBe(200)
  const tokens = response.json as unknown as Tokens
  return { tokens, client: clientAs(userAgent, { tokens }) }
}

describe('list sessions', () => {
  it('lists every live session oldest first, with current true only for the caller', async () => {
    const email = uniqueEmail('list')
    const t0 = server.clock.now()
    await clientAs('agent-register/1').register(email, PASSWORD)
    server.clock.advance(1_000)
    const second = await loginAs(email, 'agent-second/2')
    server.clock.advance(1_000)
    const third = await loginAs(email, 'agent-third/3')

    const fromSecond = (await second.client.listSessions()).sessions
    expect(fromSecond.map((s) => s.user_agent)).toEqual(['agent-register/1', 'agent-second/2', 'agent-third/3'])
    expect(fromSecond.map((s) => s.created_at)).toEqual([iso(t0), iso(t0 + 1_000), iso(t0 + 2_000)])
    expect(fromSecond.map((s) => s.current)).toEqual([false, true, false])
    for (const session of fromSecond) {
      expect(session.last_active_at).toBe(session.created_at)
      expect(session.authenticated_at).toBe(session.created_at)
      expect(session.ip_address).toBe('127.0.0.1')
    }
    expect(new Set(fromSecond.map((s) => s.session_id)).size).toBe(3)

    const fromThird = (await third.client.listSessions()).sessions
    expect(fromThird.map((s) => s.session_id)).toEqual(fromSecond.map((s) => s.session_id))
    expect(fromThird.map((s) => s.current)).toEqual([false, false, true])
  })

  it('shows nothing of another account', async () => {
    const a = await registered(server, 'mine')
    const b = await registered(server, 'theirs')
    const mine = (await a.client.listSessions()).sessions
    const theirs = (await b.client.listSessions()).sessions
    expect(mine).toHaveLength(1)
    expect(theirs).toHaveLength(1)
    expect(mine[0]?.session_id).not.toBe(theirs[0]?.session_id)
  })

  it('records the advisory cohort_hash and device_id of a login', async () => {
    const email = uniqueEmail('advisory')
    await server.client().register(email, PASSWORD)
    const device = randomUUID()
    const { client } = await loginAs(email, 'advisory/1', { cohort_hash: 'c'.repeat(128), device_id: device })
    const current = (await client.listSessions()).sessions.find((s) => s.current)
    expect(current?.cohort_hash).toBe('c'.repeat(128))
    expect(current?.device_id).toBe(device)
  })

  it('normalizes an uppercase device UUID to lowercase', async () => {
    const email = uniqueEmail('upper')
    await server.client().register(email, PASSWORD)
    const device = randomUUID()
    const { client } = await loginAs(email, 'upper/1', { device_id: device.toUpperCase() })
    const current = (await client.listSessions()).sessions.find((s) => s.current)
    expect(current?.device_id).toBe(device)
  })

  it.each([
    ['a number cohort_hash', { cohort_hash: 42 }],
    ['a cohort_hash of 129 characters', { cohort_hash: 'h'.repeat(129) }],
    ['an empty cohort_hash', { cohort_hash: '' }],
    ['an object cohort_hash', { cohort_hash: { value: 'x' } }],
    ['a null cohort_hash and device_id', { cohort_hash: null, device_id: null }],
    ['a non-UUID device_id', { device_id: 'my-phone' }],
    ['a device UUID without hyphens', { device_id: randomUUID().replaceAll('-', '') }],
    ['a number device_id', { device_id: 7 }],
  ])('drops %s: still 200, stored as null, no cohort recorded', async (_case, advisory) => {
    const email = uniqueEmail('drop')
    await server.client().register(email, PASSWORD)
    const { client } = await loginAs(email, 'drop/1', advisory)
    const devices = await client.listSessions()
    const current = devices.sessions.find((s) => s.current)
    expect(current).toBeDefined()
    expect(current?.cohort_hash).toBeNull()
    expect(current?.device_id).toBeNull()
    expect(devices.cohorts).toEqual([])
  })

  it('keeps a usable field when the other one is dropped', async () => {
    const email = uniqueEmail('half')
    await server.client().register(email, PASSWORD)
    const { client } = await loginAs(email, 'half/1', { cohort_hash: 'kept-cohort', device_id: 'not-a-uuid' })
    const current = (await client.listSessions()).sessions.find((s) => s.current)
    expect(current?.cohort_hash).toBe('kept-cohort')
    expect(current?.device_id).toBeNull()
  })

  it('lists cohorts by first sighting, and they outlive the sessions that carried them', async () => {
    const email = uniqueEmail('cohorts')
    await server.client().register(email, PASSWORD)
    // Sighting order is the reverse of alphabetical order, so the order must come from time.
    const t1 = server.clock.now()
    const zulu = await loginAs(email, 'cohort/z', { cohort_hash: 'zulu' })
    server.clock.advance(1_000)
    const alpha = await loginAs(email, 'cohort/a', { cohort_hash: 'alpha' })
    server.clock.advance(1_000)
    await loginAs(email, 'cohort/z2', { cohort_hash: 'zulu' }) // a second sighting moves only last_seen

    const zuluSession = (await zulu.client.listSessions()).sessions.find((s) => s.current)
    await zulu.client.revokeSession(zuluSession!.session_id)
    const devices = await alpha.client.listSessions()
    expect(devices.sessions.some((s) => s.session_id === zuluSession!.session_id)).toBe(false)
    expect(devices.cohorts).toEqual([
      { cohort_hash: 'zulu', first_seen: iso(t1), last_seen: iso(t1 + 2_000) },
      { cohort_hash: 'alpha', first_seen: iso(t1 + 1_000), last_seen: iso(t1 + 1_000) },
    ])

    // Every session carrying 'zulu' gone: the cohort is still listed.
    for (const session of devices.sessions.filter((s) => s.cohort_hash === 'zulu')) await alpha.client.revokeSession(session.session_id)
    const after = await alpha.client.listSessions()
    expect(after.sessions.some((s) => s.cohort_hash === 'zulu')).toBe(false)
    expect(after.cohorts.map((c) => c.cohort_hash)).toEqual(['zulu', 'alpha'])
  })
})

describe('revoke one session', () => {
  it('ends another session of the account with 204; its tokens stop working', async () => {
    const email = uniqueEmail('revoke')
    const owner = clientAs('owner/1')
    await owner.register(email, PASSWORD)
    const other = await loginAs(email, 'other/1')
    const target = (await other.client.listSessions()).sessions.find((s) => s.current)!
    const response = await withBearer(owner.tokens!.access_token, 'DELETE', `/v1/auth/sessions/${target.session_id}`)
    expect(response.status).toBe(204)
    expect(response.text).toBe('')
    await expectPairDead(other.tokens)
    const left = (await owner.listSessions()).sessions
    expect(left.map((s) => s.user_agent)).toEqual(['owner/1'])
  })

  it('ends the current session with 204; its own tokens stop working', async () => {
    const member = await registered(server, 'self')
    const tokens = member.client.tokens!
    const [own] = (await member.client.listSessions()).sessions
    await member.client.revokeSession(own!.session_id)
    await expectPairDead(tokens)
  })

  it('answers a session of another account with 404 exactly like an unknown id, and leaves it alone', async () => {
    const attacker = await registered(server, 'attacker')
    const victim = await registered(server, 'victim')
    const [victimSession] = (await victim.client.listSessions()).sessions
    const token = attacker.client.tokens!.access_token
    const foreign = await withBearer(token, 'DELETE', `/v1/auth/sessions/${victimSession!.session_id}`)
    const unknown = await withBearer(token, 'DELETE', `/v1/auth/sessions/${randomUUID()}`)
    expect(foreign.status).toBe(404)
    expect(unknown.status).toBe(404)
    expect(foreign.json?.code).toBe('error.not_found')
    const { instance: foreignInstance, ...foreignBody } = foreign.json!
    const { instance: unknownInstance, ...unknownBody } = unknown.json!
    expect(foreignBody).toEqual(unknownBody)
    expect(foreignInstance).toBe(`/v1/auth/sessions/${victimSession!.session_id}`)
    expect(unknownInstance).toMatch(/^\/v1\/auth\/sessions\//)
    expect(foreign.headers.get('content-type')).toBe(unknown.headers.get('content-type'))
    // The victim's session is untouched.
    expect((await victim.client.listSessions()).sessions.map((s) => s.session_id)).toEqual([victimSession!.session_id])
  })

  it('answers an already closed session with 404', async () => {
    const email = uniqueEmail('twice')
    const owner = clientAs('owner/2')
    await owner.register(email, PASSWORD)
    const other = await loginAs(email, 'other/2')
    const target = (await other.client.listSessions()).sessions.find((s) => s.current)!
    await owner.revokeSession(target.session_id)
    const again = await problemOf(owner.revokeSession(target.session_id))
    expect(again.status).toBe(404)
    expect(again.code).toBe('error.not_found')
  })

  it('answers a rotated (closed) predecessor id with 404', async () => {
    const member = await registered(server, 'rotated')
    const [before] = (await member.client.listSessions()).sessions
    await member.client.refresh()
    const error = await problemOf(member.client.revokeSession(before!.session_id))
    expect(error.status).toBe(404)
    expect((await member.client.listSessions()).sessions).toHaveLength(1)
  })

  it.each([['not-a-uuid'], ['1234'], [randomUUID().toUpperCase()]])('answers a malformed id %s with 400', async (id) => {
    const member = await registered(server, 'malformed')
    const response = await withBearer(member.client.tokens!.access_token, 'DELETE', `/v1/auth/sessions/${id}`)
    expect(response.status).toBe(400)
    expect(response.json?.code).toBe('error.request.malformed')
    expect((await member.client.listSessions()).sessions).toHaveLength(1)
  })
})

describe('logout', () => {
  it('answers 204 and ends the session; the same token again is 204', async () => {
    const email = uniqueEmail('logout')
    const keeper = clientAs('keeper/1')
    await keeper.register(email, PASSWORD)
    const leaving = await loginAs(email, 'leaving/1')
    const first = await withBearer(leaving.tokens.access_token, 'POST', '/v1/auth/logout')
    expect(first.status).toBe(204)
    expect(first.text).toBe('')
    await expectPairDead(leaving.tokens)
    expect((await keeper.listSessions()).sessions.map((s) => s.user_agent)).toEqual(['keeper/1'])
    const second = await withBearer(leaving.tokens.access_token, 'POST', '/v1/auth/logout')
    expect(second.status).toBe(204)
    expect((await keeper.listSessions()).sessions).toHaveLength(1)
  })

  it('drops the tokens the SDK held', async () => {
    const member = await registered(server, 'sdk-logout')
    const tokens = member.client.tokens!
    await member.client.logout()
    expect(member.client.tokens).toBeNull()
    await expectPairDead(tokens)
  })

  it('answers 204 to an expired access token and ends its session', async () => {
    const member = await registered(server, 'expired-logout')
    const tokens = member.client.tokens!
    server.clock.set(tokens.expires_by * 1000 + 1_000)
    expect((await withBearer(tokens.access_token)).status).toBe(401)
    const response = await withBearer(tokens.access_token, 'POST', '/v1/auth/logout')
    expect(response.status).toBe(204)
    const refreshed = await refreshRaw(tokens.refresh_token)
    expect(refreshed.status).toBe(401)
  })

  it('answers 204 to a token that was never issued', async () => {
    const response = await withBearer(`coffer_at_${'x'.repeat(43)}`, 'POST', '/v1/auth/logout')
    expect(response.status).toBe(204)
  })

  it.each(['Bearer !!!bad', 'Bearer a b', 'bearer !!!bad'])('answers a malformed token (%s) with 204 and closes nothing', async (authorization) => {
    const member = await registered(server, 'malformed-logout')
    const response = await raw(server, 'POST', '/v1/auth/logout', { headers: { authorization } })
    expect(response.status).toBe(204)
    expect(response.text).toBe('')
    expect((await withBearer(member.client.tokens!.access_token)).status).toBe(200)
    expect((await refreshRaw(member.client.tokens!.refresh_token)).status).toBe(200)
  })

  it.each([
    ['no Authorization header', undefined],
    ['a bare Bearer', 'Bearer'],
    ['the Basic scheme', 'Basic dXNlcjpwYXNzd29yZA=='],
  ])('answers %s with 401 and the bare Bearer challenge', async (_case, authorization) => {
    const response = await raw(server, 'POST', '/v1/auth/logout', authorization === undefined ? {} : { headers: { authorization } })
    expect(response.status).toBe(401)
    expect(response.json?.code).toBe('error.auth.unauthenticated')
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="coffer"')
  })
})

describe('bearer operations', () => {
  const operations: [string, string, string?][] = [
    ['GET', '/v1/auth/sessions'],
    ['DELETE', `/v1/auth/sessions/${randomUUID()}`],
    ['POST', '/v1/auth/reauthenticate', JSON.stringify({ password: PASSWORD })],
    ['POST', '/v1/auth/password', JSON.stringify({ current_password: PASSWORD, new_password: 'another one' })],
    ['GET', '/v1/profile'],
  ]

  it.each(operations)('%s %s without Authorization answers 401 with a bare Bearer challenge', async (method, path, body) => {
    const response = await raw(server, method, path, body === undefined ? {} : { headers: json, body })
    expect(response.status).toBe(401)
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/)
    expect(response.json).toMatchObject({ status: 401, code: 'error.auth.unauthenticated' })
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="coffer"')
  })

  it.each(operations)('%s %s with an unknown token answers 401 invalid_token', async (method, path, body) => {
    const headers: Record<string, string> = { authorization: `Bearer coffer_at_${'Z'.repeat(43)}`, ...(body === undefined ? {} : json) }
    const response = await raw(server, method, path, { headers, ...(body === undefined ? {} : { body }) })
    expect(response.status).toBe(401)
    expect(response.json).toMatchObject({ status: 401, code: 'error.auth.unauthenticated' })
    const challenge = response.headers.get('www-authenticate')
    expect(challenge).toMatch(/^Bearer realm="coffer"/)
    expect(challenge).toContain('error="invalid_token"')
  })

  it('honours an access token until expires_by and answers 401 invalid_token from then on', async () => {
    const member = await registered(server, 'expiry')
    const tokens = member.client.tokens!
    const issuedAt = server.clock.now()
    expect(tokens.expires_by).toBe(Math.floor(issuedAt / 1000) + 900)
    server.clock.set(tokens.expires_by * 1000 - 1)
    expect((await withBearer(tokens.access_token)).status).toBe(200)
    server.clock.set(issuedAt + 900_000)
    const response = await withBearer(tokens.access_token)
    expect(response.status).toBe(401)
    expect(response.json?.code).toBe('error.auth.unauthenticated')
    const challenge = response.headers.get('www-authenticate')
    expect(challenge).toMatch(/^Bearer realm="coffer"/)
    expect(challenge).toContain('error="invalid_token"')
    // The refresh token of that session still works: an expired access token is not a closed session.
    expect((await refreshRaw(tokens.refresh_token)).status).toBe(200)
  })

  it('refuses a refresh token presented as a bearer credential', async () => {
    const member = await registered(server, 'wrong-kind')
    const response = await withBearer(member.client.tokens!.refresh_token)
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toContain('error="invalid_token"')
  })
})

describe('the SDK and an expired access token', () => {
  function counting() {
    const calls: string[] = []
    const counted: typeof fetch = (input, init) => {
      const url = input instanceof Request ? input.url : String(input)
      calls.push(`${init?.method ?? 'GET'} ${new URL(url).pathname}`)
      return fetch(input, init)
    }
    return { calls, counted }
  }

  it('refreshes once by itself before the call, and the call succeeds', async () => {
    const { calls, counted } = counting()
    const email = uniqueEmail('sdk')
    const client = clientAs('sdk/1', { fetch: counted })
    const first = await client.register(email, PASSWORD)
    const [before] = (await client.listSessions()).sessions
    calls.length = 0

    server.clock.advance(901_000)
    const devices = await client.listSessions()
    expect(calls).toEqual(['POST /v1/auth/refresh', 'GET /v1/auth/sessions'])
    expect(client.tokens?.access_token).not.toBe(first.access_token)
    expect(devices.sessions).toHaveLength(1)
    expect(devices.sessions[0]?.current).toBe(true)
    expect(devices.sessions[0]?.session_id).not.toBe(before!.session_id)
  })

  it('shares one refresh among concurrent calls', async () => {
    const { calls, counted } = counting()
    const client = clientAs('sdk/2', { fetch: counted })
    await client.register(uniqueEmail('sdk-many'), PASSWORD)
    calls.length = 0
    server.clock.advance(901_000)
    const answers = await Promise.all([client.listSessions(), client.getProfile(), client.listSessions()])
    expect(calls.filter((c) => c === 'POST /v1/auth/refresh')).toHaveLength(1)
    expect(answers[0].sessions).toHaveLength(1)
  })

  it('refreshes once when the server says 401 though the local clock thinks the token is live', async () => {
    const { calls, counted } = counting()
    const client = clientAs('sdk/3', { fetch: counted, now: () => 0 })
    await client.register(uniqueEmail('sdk-401'), PASSWORD)
    calls.length = 0
    server.clock.advance(901_000)
    const devices = await client.listSessions()
    expect(calls).toEqual(['GET /v1/auth/sessions', 'POST /v1/auth/refresh', 'GET /v1/auth/sessions'])
    expect(devices.sessions).toHaveLength(1)
  })

  it('gives up with a 401 problem and drops its tokens when the session is gone', async () => {
    const { calls, counted } = counting()
    const email = uniqueEmail('sdk-gone')
    const client = clientAs('sdk/4', { fetch: counted })
    await client.register(email, PASSWORD)
    const other = await loginAs(email, 'killer/1')
    const [mine] = (await client.listSessions()).sessions.filter((s) => s.current)
    await other.client.revokeSession(mine!.session_id)
    calls.length = 0
    const error = await problemOf(client.listSessions())
    expect(error.status).toBe(401)
    expect(calls.filter((c) => c === 'POST /v1/auth/refresh')).toHaveLength(1)
    expect(client.tokens).toBeNull()
  })
})
