// LOCKOUT_THRESHOLD consecutive wrong passwords, counted across login, reauthenticate and
// change password, lock the account for LOCKOUT_DURATION_S: 423 with Retry-After even for the
// right password; the lock ends by itself and a right password resets the count.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CofferClient } from '../../src/sdk/client.ts'
import { PASSWORD, raw, uniqueEmail } from '../support/actors.ts'
import { startServer, type TestServer } from '../support/server.ts'

const THRESHOLD = 3
const DURATION_S = 60
const WRONG = 'definitely not the password'
const NEW_PASSWORD = 'the new password'

let server: TestServer
beforeAll(async () => {
  server = await startServer({ LOCKOUT_THRESHOLD: String(THRESHOLD), LOCKOUT_DURATION_S: String(DURATION_S) })
})
afterAll(() => server.close())

const json = { 'content-type': 'application/json' }

function login(email: string, password: string) {
  return raw(server, 'POST', '/v1/auth/login', { headers: json, body: JSON.stringify({ email, password }) })
}

function reauthenticate(accessToken: string, password: string) {
  return raw(server, 'POST', '/v1/auth/reauthenticate', { headers: { ...json, authorization: `Bearer ${accessToken}` }, body: JSON.stringify({ password }) })
}

function changePassword(accessToken: string, current: string, next: string) {
  return raw(server, 'POST', '/v1/auth/password', {
    headers: { ...json, authorization: `Bearer ${accessToken}` },
    body: JSON.stringify({ current_password: current, new_password: next }),
  })
}

/** An account and the access token of its register session (kept for the bearer operations). */
async function account() {
  const email = uniqueEmail('lockout')
  const client = new CofferClient({ baseUrl: server.url, now: server.clock.now })
  const tokens = await client.register(email, PASSWORD)
  return { email, access: tokens.access_token }
}

type Answer = Awaited<ReturnType<typeof raw>>

function expectWrong(response: Answer): void {
  expect(response.status).toBe(401)
  expect(response.json?.code).toBe('error.auth.invalid_credentials')
  expect(response.headers.get('retry-after')).toBeNull()
}

function expectLocked(response: Answer, retryAfterS: number): void {
  expect(response.status).toBe(423)
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/)
  expect(response.json).toMatchObject({ status: 423, code: 'error.auth.account_locked' })
  expect(response.headers.get('retry-after')).toBe(String(retryAfterS))
}

async function wrongLogins(email: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) expectWrong(await login(email, WRONG))
}

describe('lockout', () => {
  it('locks at the threshold: the last wrong password is 401, then the right one is 423 everywhere until the lock ends', async () => {
    const { email, access } = await account()
    await wrongLogins(email, THRESHOLD - 1)
    expect((await login(email, PASSWORD)).status).toBe(200) // not locked yet; this resets the count
    await wrongLogins(email, THRESHOLD) // the one reaching the threshold still answers 401
    const lockedAt = server.clock.now()

    expectLocked(await login(email, PASSWORD), DURATION_S)
    expectLocked(await reauthenticate(access, PASSWORD), DURATION_S)
    expectLocked(await changePassword(access, PASSWORD, NEW_PASSWORD), DURATION_S)
    expectLocked(await login(email, WRONG), DURATION_S)

    // Retry-After counts down in whole seconds, rounded up.
    server.clock.set(lockedAt + 20_000)
    expectLocked(await login(email, PASSWORD), DURATION_S - 20)
    server.clock.set(lockedAt + DURATION_S * 1000 - 1)
    expectLocked(await login(email, PASSWORD), 1)

    // The lock ends on its own, and nothing a locked request did extended it.
    server.clock.set(lockedAt + DURATION_S * 1000)
    expect((await login(email, PASSWORD)).status).toBe(200)
    expect((await reauthenticate(access, PASSWORD)).status).toBe(200)
    // The change of password did not happen while locked.
    expect((await login(email, NEW_PASSWORD)).status).toBe(401)
  })

  it("answers the locked account's bearer operations other than credentials as usual", async () => {
    const { email, access } = await account()
    await wrongLogins(email, THRESHOLD)
    const listing = await raw(server, 'GET', '/v1/auth/sessions', { headers: { authorization: `Bearer ${access}` } })
    expect(listing.status).toBe(200)
  })

  it('resets the count on a right password', async () => {
    const { email } = await account()
    await wrongLogins(email, THRESHOLD - 1)
    expect((await login(email, PASSWORD)).status).toBe(200)
    await wrongLogins(email, THRESHOLD - 1)
    expect((await login(email, PASSWORD)).status).toBe(200)
    // Consecutive failures still lock: the count was reset, not disabled.
    await wrongLogins(email, THRESHOLD)
    expectLocked(await login(email, PASSWORD), DURATION_S)
  })

  it('resets the count on a right password given to reauthenticate', async () => {
    const { email, access } = await account()
    await wrongLogins(email, THRESHOLD - 1)
    expect((await reauthenticate(access, PASSWORD)).status).toBe(200)
    await wrongLogins(email, THRESHOLD - 1)
    expect((await login(email, PASSWORD)).status).toBe(200)
  })

  it('forgets a count once its last wrong password is as old as a lock lasts (as it forgets an unknown email)', async () => {
    const { email } = await account()
    await wrongLogins(email, THRESHOLD - 1)
    server.clock.advance(DURATION_S * 1000 - 1)
    expectWrong(await login(email, WRONG)) // still counted: this one reaches the threshold
    expectLocked(await login(email, PASSWORD), DURATION_S)

    const other = await account()
    await wrongLogins(other.email, THRESHOLD - 1)
    server.clock.advance(DURATION_S * 1000)
    await wrongLogins(other.email, THRESHOLD - 1) // a new count
    expect((await login(other.email, PASSWORD)).status).toBe(200)
  })

  it("notes each lock once in the owner's security log, with the request that set it off", async () => {
    const email = uniqueEmail('lockout-log')
    const client = new CofferClient({ baseUrl: server.url, now: server.clock.now })
    await client.register(email, PASSWORD)
    expect((await client.listSecurityEvents()).events).toEqual([])
    await wrongLogins(email, THRESHOLD - 1)
    expect((await client.listSecurityEvents()).events).toEqual([])
    const lockedAt = server.clock.now()
    const locking = await raw(server, 'POST', '/v1/auth/login', {
      headers: { ...json, 'user-agent': 'guesser/1.0' },
      body: JSON.stringify({ email, password: WRONG }),
    })
    expectWrong(locking)
    expectLocked(await login(email, WRONG), DURATION_S) // refused unhashed: no second event
    expect((await client.listSecurityEvents()).events).toEqual([
      {
        kind: 'password_lockout',
        at: new Date(lockedAt).toISOString(),
        until: new Date(lockedAt + DURATION_S * 1000).toISOString(),
        ip_address: '127.0.0.1',
        user_agent: 'guesser/1.0',
      },
    ])
    // A wrong reauthentication that locks again later is a second event.
    server.clock.advance(DURATION_S * 1000)
    for (let i = 0; i < THRESHOLD; i++) await expect(client.reauthenticate(WRONG)).rejects.toMatchObject({ status: 401 })
    expect((await client.listSecurityEvents()).events.map((e) => e.kind)).toEqual(['password_lockout', 'password_lockout'])
  })

  it('starts the count afresh after a lock ends', async () => {
    const { email } = await account()
    await wrongLogins(email, THRESHOLD)
    server.clock.advance(DURATION_S * 1000)
    await wrongLogins(email, THRESHOLD - 1)
    expect((await login(email, PASSWORD)).status).toBe(200)
  })

  it('counts wrong passwords on reauthenticate toward the lock', async () => {
    const { email, access } = await account()
    for (let i = 0; i < THRESHOLD; i++) expectWrong(await reauthenticate(access, WRONG))
    expectLocked(await login(email, PASSWORD), DURATION_S)
    expectLocked(await reauthenticate(access, PASSWORD), DURATION_S)
  })

  it('counts a wrong password sent through the SDK once', async () => {
    const email = uniqueEmail('sdk-lockout')
    const client = new CofferClient({ baseUrl: server.url, now: server.clock.now })
    await client.register(email, PASSWORD)
    const before = client.tokens
    for (let i = 0; i < THRESHOLD - 1; i++) {
      await expect(client.reauthenticate(WRONG)).rejects.toMatchObject({ status: 401, code: 'error.auth.invalid_credentials' })
      await expect(client.changePassword(WRONG, NEW_PASSWORD)).rejects.toMatchObject({ status: 401, code: 'error.auth.invalid_credentials' })
      expect(await client.reauthenticate(PASSWORD)).toBe(new Date(server.clock.now()).toISOString())
    }
    // A wrong password is an answer, not a dead token: the SDK kept its pair.
    expect(client.tokens).toBe(before)
    expect((await login(email, PASSWORD)).status).toBe(200)
  })

  it('counts wrong passwords across login, reauthenticate and change password together', async () => {
    const { email, access } = await account()
    expectWrong(await login(email, WRONG))
    expectWrong(await reauthenticate(access, WRONG))
    expectWrong(await changePassword(access, WRONG, NEW_PASSWORD))
    expectLocked(await changePassword(access, PASSWORD, NEW_PASSWORD), DURATION_S)
    expectLocked(await login(email, PASSWORD), DURATION_S)
  })

  it('locks one account only', async () => {
    const locked = await account()
    const other = await account()
    await wrongLogins(locked.email, THRESHOLD)
    expectLocked(await login(locked.email, PASSWORD), DURATION_S)
    expect((await login(other.email, PASSWORD)).status).toBe(200)
  })
})
