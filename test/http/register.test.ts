// Register creates an account and its first session, refuses a taken email in any case, and
// answers bad input with the documented problem without creating anything.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CofferProblem } from '../../src/sdk/client.ts'
import { PASSWORD, raw, uniqueEmail } from '../support/actors.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
beforeAll(async () => {
  server = await startServer({ BODY_LIMIT_BYTES: '2048' })
})
afterAll(() => server.close())

const json = { 'content-type': 'application/json' }

describe('register', () => {
  it('answers 200 with a token pair that works at once', async () => {
    const client = server.client()
    const email = uniqueEmail()
    const before = Math.floor(server.clock.now() / 1000)
    const tokens = await client.register(email, PASSWORD)
    expect(tokens.token_type).toBe('Bearer')
    expect(tokens.expires_by).toBe(before + 900)
    expect(tokens.access_token).not.toBe(tokens.refresh_token)
    const profile = await client.getProfile()
    expect(profile.email).toBe(email)
    expect(profile).not.toHaveProperty('display_name')
    expect((await client.listSessions()).sessions).toHaveLength(1)
  })

  it('trims the email and refuses the same address in another case with 409', async () => {
    const email = uniqueEmail('Case')
    await server.client().register(`  ${email} `, PASSWORD)
    const error = await server
      .client()
      .register(email.toUpperCase(), 'other')
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CofferProblem)
    expect((error as CofferProblem).status).toBe(409)
    expect((error as CofferProblem).code).toBe('error.auth.account_exists')
    expect((await server.client().login(email.toUpperCase(), PASSWORD)).kind).toBe('session')
  })

  it.each([
    ['no @', 'nobody.example.test'],
    ['two @', 'a@b@example.test'],
    ['nothing before @', '@example.test'],
    ['nothing after @', 'someone@'],
    ['only spaces', '   '],
    ['over 254 characters', `${'a'.repeat(250)}@example.test`],
  ])('refuses an email with %s as 422', async (_case, email) => {
    const response = await raw(server, 'POST', '/v1/auth/register', { headers: json, body: JSON.stringify({ email, password: PASSWORD }) })
    expect(response.status).toBe(422)
    expect(response.json?.code).toBe('error.request.invalid')
  })

  it('accepts an email of exactly 254 characters', async () => {
    const email = `${'b'.repeat(241)}@example.test`
    expect(email).toHaveLength(254)
    const response = await raw(server, 'POST', '/v1/auth/register', { headers: json, body: JSON.stringify({ email, password: PASSWORD }) })
    expect(response.status).toBe(200)
  })

  it.each([
    ['an empty password', { email: 'x@example.test', password: '' }],
    ['a missing password', { email: 'x@example.test' }],
    ['a number for the email', { email: 7, password: PASSWORD }],
    ['an unknown key (strict object)', { email: 'x@example.test', password: PASSWORD, display_name: 'X' }],
  ])('answers %s with 422 and creates nothing', async (_case, body) => {
    const response = await raw(server, 'POST', '/v1/auth/register', { headers: json, body: JSON.stringify(body) })
    expect(response.status).toBe(422)
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/)
    expect(response.json).toMatchObject({ status: 422, code: 'error.request.invalid', type: '/problems/request.invalid', instance: '/v1/auth/register' })
    const login = await raw(server, 'POST', '/v1/auth/login', { headers: json, body: JSON.stringify({ email: 'x@example.test', password: PASSWORD }) })
    expect(login.status).toBe(401)
  })

  it('answers malformed JSON with 400', async () => {
    const response = await raw(server, 'POST', '/v1/auth/register', { headers: json, body: '{"email": "x@example.test",' })
    expect(response.status).toBe(400)
    expect(response.json?.code).toBe('error.request.malformed')
  })

  it('answers an empty JSON body with 400', async () => {
    const response = await raw(server, 'POST', '/v1/auth/register', { headers: json, body: '' })
    expect(response.status).toBe(400)
    expect(response.json?.code).toBe('error.request.malformed')
  })

  it.each([['text/plain'], ['application/cbor'], ['application/x-www-form-urlencoded']])('answers Content-Type %s with 415', async (type) => {
    const response = await raw(server, 'POST', '/v1/auth/register', {
      headers: { 'content-type': type },
      body: JSON.stringify({ email: uniqueEmail(), password: PASSWORD }),
    })
    expect(response.status).toBe(415)
    expect(response.json?.code).toBe('error.request.unsupported_media_type')
  })

  it('answers a missing Content-Type with 415', async () => {
    const response = await raw(server, 'POST', '/v1/auth/register', { body: JSON.stringify({ email: uniqueEmail(), password: PASSWORD }) })
    expect(response.status).toBe(415)
  })

  it('answers a body over BODY_LIMIT_BYTES with a 413 problem', async () => {
    const response = await raw(server, 'POST', '/v1/auth/register', {
      headers: json,
      body: JSON.stringify({ email: uniqueEmail(), password: 'p'.repeat(4096) }),
    })
    expect(response.status).toBe(413)
    expect(response.json?.code).toBe('error.request.too_large')
  })

  it('keeps registering while two races for one email give one account', async () => {
    const email = uniqueEmail('race')
    const results = await Promise.allSettled([server.client().register(email, PASSWORD), server.client().register(email, PASSWORD)])
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
    const refused = results.find((r) => r.status === 'rejected')
    expect((refused as PromiseRejectedResult).reason.code).toBe('error.auth.account_exists')
  })
})
