// Changing the password needs the current one, then ends every other session while the
// caller keeps its session id and token pair with a fresh authenticated_at; reauthenticate
// moves only authenticated_at, and a wrong password in either changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CofferClient, type Devices, type Tokens } from '../../src/sdk/client.ts'
import { PASSWORD, problemOf, raw, uniqueEmail } from '../support/actors.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

const NEW_PASSWORD = 'a different horse, a different staple'
const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/
const iso = (ms: number) => new Date(ms).toISOString()
const json = { 'content-type': 'application/json' }

function clientAs(userAgent: string): CofferClient {
  return new CofferClient({ baseUrl: server.url, now: server.clock.now, userAgent })
}

function withBearer(accessToken: string, method = 'GET', path = '/v1/auth/sessions', body?: unknown) {
  const headers: Record<string, string> = { authorization: `Bearer ${accessToken}`, ...(body === undefined ? {} : json) }
  return raw(server, method, path, { headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
}

function loginRaw(email: string, password: string) {
  return raw(server, 'POST', '/v1/auth/login', { headers: json, body: JSON.stringify({ email, password }) })
}

function refreshRaw(refreshToken: string) {
  return raw(server, 'POST', '/v1/auth/refresh', { headers: json, body: JSON.stringify({ refresh_token: refreshToken }) })
}

/** An account with three sessions opened one second apart: the register one and two logins. */
async function accountWithThreeSessions() {
  const email = uniqueEmail('password')
  const caller = clientAs('caller/1')
  await caller.register(email, PASSWORD)
  server.clock.advance(1_000)
  const second = clientAs('second/1')
  await second.login(email, PASSWORD)
  server.clock.advance(1_000)
  const third = clientAs('third/1')
  await third.login(email, PASSWORD)
  return { email, caller, others: [second, third] }
}

function current(devices: Devices) {
  const session = devices.sessions.find((s) => s.current)
  if (session === undefined) throw new Error('no current session in the listing')
  return session
}

describe('change password', () => {
  it('refuses a wrong current password with 401 invalid_credentials and changes nothing', async () => {
    const { email, caller, others } = await accountWithThreeSessions()
    const before = await caller.listSessions()
    server.clock.advance(5_000)
    const error = await problemOf(caller.changePassword('not the password', NEW_PASSWORD))
    expect(error.status).toBe(401)
    expect(error.code).toBe('error.auth.invalid_credentials')

    expect(await caller.listSessions()).toEqual(before)
    for (const other of others) expect((await other.listSessions()).sessions).toHaveLength(3)
    expect((await loginRaw(email, PASSWORD)).status).toBe(200)
    expect((await loginRaw(email, NEW_PASSWORD)).status).toBe(401)
  })

  it("answers 204, keeps the caller's pair and session id, ends every other session", async () => {
    const { email, caller, others } = await accountWithThreeSessions()
    const callerTokens = caller.tokens as Tokens
    const otherTokens = others.map((o) => o.tokens as Tokens)
    const before = current(await caller.listSessions())

    server.clock.advance(60_000)
    const changedAt = server.clock.now()
    const response = await withBearer(callerTokens.access_token, 'POST', '/v1/auth/password', { current_password: PASSWORD, new_password: NEW_PASSWORD })
    expect(response.status).toBe(204)
    expect(response.text).toBe('')

    // The caller's access token still works, and its session is the only one left.
    const after = await withBearer(callerTokens.access_token)
    expect(after.status).toBe(200)
    const sessions = (after.json as unknown as Devices).sessions
    expect(sessions).toHaveLength(1)
    expect(sessions[0]).toEqual({ ...before, authenticated_at: iso(changedAt) })

    for (const tokens of otherTokens) {
      const access = await withBearer(tokens.access_token)
      expect(access.status).toBe(401)
      expect(access.json?.code).toBe('error.auth.unauthenticated')
      const refreshed = await refreshRaw(tokens.refresh_token)
      expect(refreshed.status).toBe(401)
      expect(refreshed.json?.code).toBe('error.auth.session_expired')
    }

    const oldLogin = await loginRaw(email, PASSWORD)
    expect(oldLogin.status).toBe(401)
    expect(oldLogin.json?.code).toBe('error.auth.invalid_credentials')
    expect((await loginRaw(email, NEW_PASSWORD)).status).toBe(200)

    // The caller's refresh token works too, and the successor inherits the new authenticated_at.
    const rotated = await refreshRaw(callerTokens.refresh_token)
    expect(rotated.status).toBe(200)
    const successor = rotated.json as unknown as Tokens
    const successorView = current((await withBearer(successor.access_token)).json as unknown as Devices)
    expect(successorView.authenticated_at).toBe(iso(changedAt))
  })

  it('also ends sessions opened after the caller, and the SDK keeps working', async () => {
    const { email, caller } = await accountWithThreeSessions()
    server.clock.advance(1_000)
    const later = clientAs('later/1')
    await later.login(email, PASSWORD)
    await caller.changePassword(PASSWORD, NEW_PASSWORD)
    expect((await caller.listSessions()).sessions.map((s) => s.user_agent)).toEqual(['caller/1'])
    expect((await withBearer(later.tokens!.access_token)).status).toBe(401)
  })

  it('refuses an empty new_password with 422 and changes nothing', async () => {
    const { email, caller, others } = await accountWithThreeSessions()
    const response = await withBearer(caller.tokens!.access_token, 'POST', '/v1/auth/password', { current_password: PASSWORD, new_password: '' })
    expect(response.status).toBe(422)
    expect(response.json?.code).toBe('error.request.invalid')
    expect((await others[0]!.listSessions()).sessions).toHaveLength(3)
    expect((await loginRaw(email, PASSWORD)).status).toBe(200)
    expect((await loginRaw(email, '')).status).toBe(401)
  })

  it('refuses a missing current_password with 422', async () => {
    const { caller } = await accountWithThreeSessions()
    const response = await withBearer(caller.tokens!.access_token, 'POST', '/v1/auth/password', { new_password: NEW_PASSWORD })
    expect(response.status).toBe(422)
    expect(response.json?.code).toBe('error.request.invalid')
  })
})

describe('reauthenticate', () => {
  it('answers 200 with authenticated_at = now, mints nothing, and moves only authenticated_at', async () => {
    const { caller, others } = await accountWithThreeSessions()
    const tokens = caller.tokens as Tokens
    const before = await caller.listSessions()
    const othersBefore = before.sessions.filter((s) => !s.current)

    server.clock.advance(120_000)
    const now = server.clock.now()
    const response = await withBearer(tokens.access_token, 'POST', '/v1/auth/reauthenticate', { password: PASSWORD })
    expect(response.status).toBe(200)
    expect(Object.keys(response.json ?? {})).toEqual(['authenticated_at'])
    const authenticatedAt = response.json?.authenticated_at as string
    expect(authenticatedAt).toMatch(RFC3339_UTC)
    expect(Date.parse(authenticatedAt)).toBe(now)

    const after = await caller.listSessions()
    expect(caller.tokens).toBe(tokens) // the SDK did not have to refresh
    const beforeCurrent = current(before)
    expect(current(after)).toEqual({ ...beforeCurrent, authenticated_at: authenticatedAt })
    expect(after.sessions.filter((s) => !s.current)).toEqual(othersBefore)
    expect(after.cohorts).toEqual(before.cohorts)
    for (const other of others) expect((await other.listSessions()).sessions).toHaveLength(3)
    expect((await refreshRaw(tokens.refresh_token)).status).toBe(200)
  })

  it('returns authenticated_at through the SDK', async () => {
    const { caller } = await accountWithThreeSessions()
    server.clock.advance(3_000)
    expect(await caller.reauthenticate(PASSWORD)).toBe(iso(server.clock.now()))
  })

  it('refuses a wrong password with 401 invalid_credentials and leaves authenticated_at alone', async () => {
    const { caller } = await accountWithThreeSessions()
    const before = await caller.listSessions()
    server.clock.advance(30_000)
    const error = await problemOf(caller.reauthenticate('wrong password'))
    expect(error.status).toBe(401)
    expect(error.code).toBe('error.auth.invalid_credentials')
    expect(await caller.listSessions()).toEqual(before)
  })

  it('refuses a missing password with 422', async () => {
    const { caller } = await accountWithThreeSessions()
    const response = await withBearer(caller.tokens!.access_token, 'POST', '/v1/auth/reauthenticate', {})
    expect(response.status).toBe(422)
    expect(response.json?.code).toBe('error.request.invalid')
  })
})
