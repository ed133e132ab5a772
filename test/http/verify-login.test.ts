// A password sign-in of an account with an active second factor creates nothing but a short-lived
// challenge; only verify login with a live code opens the session, and a challenge cannot be
// guessed at, reused or outlived.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CofferClient } from '../../src/sdk/client.ts'
import { type Authenticator, type Member, PASSWORD, problemOf, raw, THIRTY_SECONDS, withSecondFactor, windowCodes, wrongCode } from '../support/actors.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

const STEP = THIRTY_SECONDS
const json = { 'content-type': 'application/json' }

type Enrolled = Member & { authenticator: Authenticator }

/** An enrolled account whose confirming step is behind it: the current step is unspent. */
async function enrolled(label?: string): Promise<Enrolled> {
  const member = await withSecondFactor(server, label)
  server.clock.advance(STEP)
  return member
}

/** Logs in with the password and returns the challenge's mfa_token (fails on a 200). */
async function challenge(member: Member, client = server.client(), advisory: { cohort_hash?: string; device_id?: string } = {}): Promise<string> {
  const login = await client.login(member.email, PASSWORD, advisory)
  if (login.kind !== 'second_factor') throw new Error('expected 202 with a second-factor challenge')
  return login.challenge.mfa_token
}

const code = (member: Enrolled, offsetSteps = 0) => member.authenticator.codeAt(server.clock.now() + offsetSteps * STEP)

describe('login of an account with an active second factor', () => {
  it('answers 202 SecondFactorChallenge: mfa_token and expires_by = now + 300 s, no tokens', async () => {
    const member = await enrolled('challenge')
    const before = Math.floor(server.clock.now() / 1000)
    const response = await raw(server, 'POST', '/v1/auth/login', { headers: json, body: JSON.stringify({ email: member.email, password: PASSWORD }) })
    expect(response.status).toBe(202)
    expect(Object.keys(response.json ?? {}).sort()).toEqual(['expires_by', 'mfa_token'])
    expect(typeof response.json?.mfa_token).toBe('string')
    expect(String(response.json?.mfa_token).length).toBeGreaterThanOrEqual(43)
    expect(response.json?.expires_by).toBe(before + 300)
  })

  it('still refuses a wrong password with 401 error.auth.invalid_credentials, no challenge', async () => {
    const member = await enrolled('challenge-wrong-password')
    const response = await raw(server, 'POST', '/v1/auth/login', { headers: json, body: JSON.stringify({ email: member.email, password: 'not it' }) })
    expect(response.status).toBe(401)
    expect(response.json?.code).toBe('error.auth.invalid_credentials')
    expect(response.json).not.toHaveProperty('mfa_token')
  })

  it('creates no session, no cohort record and no refresh token; verify records only its own identifiers', async () => {
    const member = await enrolled('nothing-yet')
    const listed = async () => member.client.listSessions() // the account's registration session looks on
    const loginCohort = `login-cohort-${randomUUID()}`
    const verifyCohort = `verify-cohort-${randomUUID()}`

    const response = await raw(server, 'POST', '/v1/auth/login', {
      headers: json,
      body: JSON.stringify({ email: member.email, password: PASSWORD, cohort_hash: loginCohort, device_id: randomUUID() }),
    })
    expect(response.status).toBe(202)
    const mfaToken = response.json?.mfa_token as string
    const afterLogin = await listed()
    expect(afterLogin.sessions).toHaveLength(1)
    expect(afterLogin.sessions[0]?.current).toBe(true)
    expect(afterLogin.cohorts).toEqual([])

    // The challenge is no credential: neither a bearer token nor a refresh token.
    const asBearer = await raw(server, 'GET', '/v1/auth/sessions', { headers: { authorization: `Bearer ${mfaToken}` } })
    expect(asBearer.status).toBe(401)
    expect(asBearer.json?.code).toBe('error.auth.unauthenticated')
    const asRefresh = await raw(server, 'POST', '/v1/auth/refresh', { headers: json, body: JSON.stringify({ refresh_token: mfaToken }) })
    expect(asRefresh.status).toBe(401)
    expect(asRefresh.json?.code).toBe('error.auth.session_expired')

    const verifier = server.client()
    await verifier.verifyLogin(mfaToken, code(member), { cohort_hash: verifyCohort })
    const afterVerify = await listed()
    expect(afterVerify.sessions).toHaveLength(2)
    expect(afterVerify.cohorts.map((c) => c.cohort_hash)).toEqual([verifyCohort])
    expect(afterVerify.sessions.map((s) => s.cohort_hash)).toEqual([null, verifyCohort])
  })
})

describe('verify login', () => {
  it('answers 200 with a working token pair and opens a session from the verify request', async () => {
    const member = await enrolled('verify')
    // The password step comes from one agent, the code from another: the session is the verify's.
    const login = await raw(server, 'POST', '/v1/auth/login', {
      headers: { ...json, 'user-agent': 'LoginAgent/1.0' },
      body: JSON.stringify({ email: member.email, password: PASSWORD, cohort_hash: 'from-login', device_id: randomUUID() }),
    })
    expect(login.status).toBe(202)
    const deviceId = randomUUID()
    const client = new CofferClient({ baseUrl: server.url, now: server.clock.now, userAgent: 'VerifyAgent/2.0' })
    const before = Math.floor(server.clock.now() / 1000)
    const tokens = await client.verifyLogin(login.json?.mfa_token as string, code(member), { cohort_hash: 'from-verify', device_id: deviceId.toUpperCase() })
    expect(tokens.token_type).toBe('Bearer')
    expect(tokens.expires_by).toBe(before + 900)
    expect(tokens.access_token).not.toBe(tokens.refresh_token)
    expect((await client.getProfile()).email).toBe(member.email)

    const devices = await client.listSessions()
    const current = devices.sessions.find((s) => s.current)
    expect(current).toMatchObject({ cohort_hash: 'from-verify', device_id: deviceId, user_agent: 'VerifyAgent/2.0' })
    expect(current?.ip_address).toMatch(/127\.0\.0\.1$/)
    expect(current?.authenticated_at).toBe(new Date(server.clock.now()).toISOString())
    expect(devices.cohorts.map((c) => c.cohort_hash)).toEqual(['from-verify'])

    // The refresh token of the verified session works like any other.
    await client.refresh()
    expect((await client.getProfile()).email).toBe(member.email)
  })

  it('drops unusable advisory values instead of refusing them', async () => {
    const member = await enrolled('verify-advisory')
    const mfaToken = await challenge(member)
    const response = await raw(server, 'POST', '/v1/auth/login/verify', {
      headers: json,
      body: JSON.stringify({ mfa_token: mfaToken, totp_code: code(member), cohort_hash: 'x'.repeat(129), device_id: 'not-a-uuid' }),
    })
    expect(response.status).toBe(200)
    const client = new CofferClient({ baseUrl: server.url, now: server.clock.now, tokens: response.json as never })
    const current = (await client.listSessions()).sessions.find((s) => s.current)
    expect(current?.cohort_hash).toBeNull()
    expect(current?.device_id).toBeNull()
  })

  it('answers an unknown mfa_token with 401 error.auth.challenge_expired and spends nothing', async () => {
    const member = await enrolled('verify-unknown')
    const live = code(member)
    const refused = await problemOf(server.client().verifyLogin(`coffer_mfa_${randomUUID()}`, live))
    expect(refused.status).toBe(401)
    expect(refused.code).toBe('error.auth.challenge_expired')
    // The code was not entered in the replay ledger: it still completes a real sign-in.
    const client = server.client()
    await client.verifyLogin(await challenge(member), live)
    expect((await client.getProfile()).email).toBe(member.email)
  })

  it('answers an expired challenge with 401 error.auth.challenge_expired (MFA_CHALLENGE_TTL_S, 300 s)', async () => {
    const early = await enrolled('verify-early')
    const late = await enrolled('verify-late')
    const issuedAt = server.clock.now()
    const earlyToken = await challenge(early)
    const lateToken = await challenge(late)

    server.clock.set(issuedAt + 300_000 - 1)
    const client = server.client()
    await client.verifyLogin(earlyToken, code(early))
    expect((await client.getProfile()).email).toBe(early.email)

    server.clock.set(issuedAt + 300_000)
    const lateCode = code(late)
    const refused = await problemOf(server.client().verifyLogin(lateToken, lateCode))
    expect(refused.status).toBe(401)
    expect(refused.code).toBe('error.auth.challenge_expired')
    // It was the challenge that expired, not the code: a new sign-in with the same code works.
    await server.client().verifyLogin(await challenge(late), lateCode)
  })

  it('answers a used mfa_token with 401 error.auth.challenge_expired', async () => {
    const member = await enrolled('verify-used')
    const mfaToken = await challenge(member)
    await server.client().verifyLogin(mfaToken, code(member))
    server.clock.advance(STEP)
    const refused = await problemOf(server.client().verifyLogin(mfaToken, code(member)))
    expect(refused.status).toBe(401)
    expect(refused.code).toBe('error.auth.challenge_expired')
    expect((await member.client.listSessions()).sessions).toHaveLength(2)
  })

  it('answers a wrong code with 401 error.auth.invalid_code and keeps the challenge', async () => {
    const member = await enrolled('verify-wrong')
    const mfaToken = await challenge(member)
    const refused = await problemOf(server.client().verifyLogin(mfaToken, wrongCode(member.authenticator, server.clock.now())))
    expect(refused.status).toBe(401)
    expect(refused.code).toBe('error.auth.invalid_code')
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/)
    expect((await member.client.listSessions()).sessions).toHaveLength(1)
    await server.client().verifyLogin(mfaToken, code(member))
    expect((await member.client.listSessions()).sessions).toHaveLength(2)
  })

  it('refuses the code of another account', async () => {
    const member = await enrolled('verify-mine')
    const other = await enrolled('verify-theirs')
    for (let i = 0; i < 50 && windowCodes(member.authenticator, server.clock.now()).includes(code(other)); i++) server.clock.advance(STEP)
    const theirs = code(other)
    expect(windowCodes(member.authenticator, server.clock.now())).not.toContain(theirs)
    const refused = await problemOf(server.client().verifyLogin(await challenge(member), theirs))
    expect(refused.code).toBe('error.auth.invalid_code')
  })

  it.each([
    ['one step behind', -1],
    ['one step ahead', 1],
  ])('accepts a code %s', async (_case, steps) => {
    const member = await enrolled('verify-window')
    server.clock.advance(STEP) // the confirming step is now two behind
    const client = server.client()
    await client.verifyLogin(await challenge(member), code(member, steps))
    expect((await client.getProfile()).email).toBe(member.email)
  })

  it.each([
    ['two steps behind', -2],
    ['two steps ahead', 2],
  ])('refuses a code %s with 401 error.auth.invalid_code', async (_case, steps) => {
    const member = await enrolled('verify-far')
    server.clock.advance(2 * STEP)
    for (let i = 0; i < 50 && windowCodes(member.authenticator, server.clock.now()).includes(code(member, steps)); i++) server.clock.advance(STEP)
    expect(windowCodes(member.authenticator, server.clock.now())).not.toContain(code(member, steps))
    const refused = await problemOf(server.client().verifyLogin(await challenge(member), code(member, steps)))
    expect(refused.status).toBe(401)
    expect(refused.code).toBe('error.auth.invalid_code')
  })

  it('the 5th wrong code (VERIFY_MAX_ATTEMPTS) answers 429 with Retry-After and burns the challenge', async () => {
    const member = await enrolled('verify-cap')
    const mfaToken = await challenge(member)
    const wrong = wrongCode(member.authenticator, server.clock.now())
    for (let attempt = 1; attempt <= 4; attempt++) {
      const refused = await problemOf(server.client().verifyLogin(mfaToken, wrong))
      expect(refused.status, `attempt ${attempt}`).toBe(401)
      expect(refused.code).toBe('error.auth.invalid_code')
    }
    const limited = await problemOf(server.client().verifyLogin(mfaToken, wrong))
    expect(limited.status).toBe(429)
    expect(limited.code).toBe('error.rate_limited')
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/)

    const live = code(member)
    const burned = await problemOf(server.client().verifyLogin(mfaToken, live))
    expect(burned.status).toBe(401)
    expect(burned.code).toBe('error.auth.challenge_expired')
    expect((await member.client.listSessions()).sessions).toHaveLength(1)
    // Only that challenge is burned: a new sign-in with the same live code succeeds.
    await server.client().verifyLogin(await challenge(member), live)
    expect((await member.client.listSessions()).sessions).toHaveLength(2)
  })

  it('counts wrong codes per challenge: four wrong, then the right code, answers 200', async () => {
    const member = await enrolled('verify-below-cap')
    const mfaToken = await challenge(member)
    for (let attempt = 1; attempt <= 4; attempt++) {
      const refused = await problemOf(server.client().verifyLogin(mfaToken, wrongCode(member.authenticator, server.clock.now())))
      expect(refused.code).toBe('error.auth.invalid_code')
    }
    // Failures on a second challenge do not add up with the first one's.
    const other = await challenge(member)
    await problemOf(server.client().verifyLogin(other, wrongCode(member.authenticator, server.clock.now())))
    const client = server.client()
    await client.verifyLogin(mfaToken, code(member))
    expect((await client.getProfile()).email).toBe(member.email)
  })

  it('answers a missing totp_code with 422, malformed JSON with 400 and another media type with 415', async () => {
    const member = await enrolled('verify-body')
    const mfaToken = await challenge(member)
    const missing = await raw(server, 'POST', '/v1/auth/login/verify', { headers: json, body: JSON.stringify({ mfa_token: mfaToken }) })
    expect(missing.status).toBe(422)
    expect(missing.json?.code).toBe('error.request.invalid')
    const malformed = await raw(server, 'POST', '/v1/auth/login/verify', { headers: json, body: '{"mfa_token":' })
    expect(malformed.status).toBe(400)
    expect(malformed.json?.code).toBe('error.request.malformed')
    const text = await raw(server, 'POST', '/v1/auth/login/verify', {
      headers: { 'content-type': 'text/plain' },
      body: JSON.stringify({ mfa_token: mfaToken, totp_code: code(member) }),
    })
    expect(text.status).toBe(415)
    // None of these counted against or consumed the challenge.
    await server.client().verifyLogin(mfaToken, code(member))
  })
})

describe('verify login limits are configuration', () => {
  let tight: TestServer
  beforeAll(async () => {
    tight = await startServer({ VERIFY_MAX_ATTEMPTS: '2', MFA_CHALLENGE_TTL_S: '60' })
  })
  afterAll(() => tight.close())

  it('uses MFA_CHALLENGE_TTL_S for expires_by and VERIFY_MAX_ATTEMPTS for the cap', async () => {
    const member = await withSecondFactor(tight, 'tight')
    tight.clock.advance(STEP)
    const before = Math.floor(tight.clock.now() / 1000)
    const login = await tight.client().login(member.email, PASSWORD)
    if (login.kind !== 'second_factor') throw new Error('expected a challenge')
    expect(login.challenge.expires_by).toBe(before + 60)

    const wrong = wrongCode(member.authenticator, tight.clock.now())
    expect((await problemOf(tight.client().verifyLogin(login.challenge.mfa_token, wrong))).status).toBe(401)
    expect((await problemOf(tight.client().verifyLogin(login.challenge.mfa_token, wrong))).status).toBe(429)

    const second = await tight.client().login(member.email, PASSWORD)
    if (second.kind !== 'second_factor') throw new Error('expected a challenge')
    tight.clock.advance(60_000)
    const expired = await problemOf(tight.client().verifyLogin(second.challenge.mfa_token, member.authenticator.codeAt(tight.clock.now())))
    expect(expired.code).toBe('error.auth.challenge_expired')
  })
})
