// Which Authorization headers count as a presented bearer token (RFC 6750): the Bearer scheme,
// any case, with anything after it, malformed or not. A bearer operation refuses a presented
// token it cannot honour with error="invalid_token", and a malformed one without a lookup;
// no header, a bare `Bearer` or another scheme gets the bare challenge.
import { randomBytes, randomUUID } from 'node:crypto'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { hashToken } from '../../src/crypto/tokens.ts'
import { bearerToken, presentedBearer } from '../../src/http/bearer.ts'
import { raw, registered } from '../support/actors.ts'
import { startServer, type TestServer } from '../support/server.ts'

const ADMIN_TOKEN = randomBytes(32).toString('base64url')

let server: TestServer
beforeAll(async () => {
  server = await startServer({ ADMIN_TOKEN })
})
afterAll(() => server.close())
afterEach(() => {
  vi.restoreAllMocks()
})

const malformed: [string, string][] = [
  ['characters outside the token alphabet', 'Bearer !!!bad'],
  ['two words', 'Bearer a b'],
  ['padding inside the token', 'Bearer abc=def'],
  ['a lowercase scheme', 'bearer !!!bad'],
  ['an uppercase scheme', 'BEARER a b'],
]

const notPresented: [string, string | undefined][] = [
  ['no header', undefined],
  ['a bare Bearer', 'Bearer'],
  ['a Bearer with only spaces after it', 'Bearer   '],
  ['the Basic scheme', 'Basic dXNlcjpwYXNzd29yZA=='],
  ['another scheme', 'Token abc'],
  ['a scheme glued to the token', 'Bearerabc'],
]

function get(path: string, authorization: string | undefined) {
  return raw(server, 'GET', path, authorization === undefined ? {} : { headers: { authorization } })
}

describe('the header parsers', () => {
  it.each(malformed)('presentedBearer takes %s as presented; bearerToken finds no token in it', (_case, header) => {
    expect(presentedBearer(header)).toBe(header.replace(/^bearer +/i, ''))
    expect(bearerToken(header)).toBeNull()
  })

  it.each(notPresented)('neither finds anything in %s', (_case, header) => {
    expect(presentedBearer(header)).toBeNull()
    expect(bearerToken(header)).toBeNull()
  })

  it('both return a well-formed token, whatever the scheme case and trailing spaces', () => {
    for (const header of ['Bearer coffer_at_AbC-9.~+/==', 'bearer  coffer_at_AbC-9.~+/==  ']) {
      expect(bearerToken(header)).toBe('coffer_at_AbC-9.~+/==')
      expect(presentedBearer(header)).toBe('coffer_at_AbC-9.~+/==')
    }
  })
})

describe('a bearer operation', () => {
  it.each([
    ...malformed.map(([name, header]) => [name, header, 'Bearer realm="coffer", error="invalid_token"'] as const),
    ...notPresented.map(([name, header]) => [name, header, 'Bearer realm="coffer"'] as const),
  ])('answers %s with 401 and the challenge %s, without a lookup', async (_case, authorization, challenge) => {
    const lookups = vi.spyOn(server.deps.storage, 'findBearerSession')
    const response = await get('/v1/profile', authorization)
    expect(response.status).toBe(401)
    expect(response.json).toMatchObject({ status: 401, code: 'error.auth.unauthenticated' })
    expect(response.headers.get('www-authenticate')).toBe(challenge)
    expect(lookups).not.toHaveBeenCalled()
  })

  it('looks a well-formed token up once: unknown is 401 invalid_token, live is served (scheme in any case)', async () => {
    const lookups = vi.spyOn(server.deps.storage, 'findBearerSession')
    const unknown = await get('/v1/profile', `Bearer coffer_at_${'Z'.repeat(43)}`)
    expect(unknown.status).toBe(401)
    expect(unknown.headers.get('www-authenticate')).toBe('Bearer realm="coffer", error="invalid_token"')
    expect(lookups).toHaveBeenCalledTimes(1)
    const member = await registered(server, 'bearer-case')
    lookups.mockClear()
    const live = await get('/v1/profile', `bEaReR ${member.client.tokens!.access_token}`)
    expect(live.status).toBe(200)
    expect(lookups).toHaveBeenCalledTimes(1)
  })
})

// The lookup runs on the engine's own client, beside Kysely (storage/kysely/bearer-lookup.ts):
// it must read what is committed, every time, and map the row as the rest of the port does.
describe('the bearer lookup', () => {
  it('reads the session and its account as the port reads the account', async () => {
    const member = await registered(server, 'bearer-shape')
    const session = await server.deps.storage.findBearerSession(hashToken(member.client.tokens!.access_token))
    expect(session).toBeDefined()
    expect(session!.account).toEqual(await server.deps.storage.findAccount(session!.account.userId))
    expect(session).toMatchObject({ sessionId: expect.any(String), rotatedAt: null, epoch: 0, accountEpoch: 0 })
    expect(session!.accessExpiresAt).toBeGreaterThan(session!.authenticatedAt)
  })

  it('refuses a closed session at once: nothing is kept between requests', async () => {
    const member = await registered(server, 'bearer-closed')
    const token = member.client.tokens!.access_token
    expect((await get('/v1/profile', `Bearer ${token}`)).status).toBe(200)
    await server.deps.storage.closeSessionByAccessHash(hashToken(token))
    expect((await get('/v1/profile', `Bearer ${token}`)).status).toBe(401)
  })

  it("never sees another transaction's uncommitted writes", async () => {
    const member = await registered(server, 'bearer-isolation')
    const accessHash = hashToken(member.client.tokens!.access_token)
    let duringTransaction: Promise<unknown> | undefined
    await expect(
      server.deps.storage.transaction(async (tx) => {
        await tx.closeSessionByAccessHash(accessHash)
        // Not awaited inside: on SQLite it waits for this transaction's end.
        duringTransaction = server.deps.storage.findBearerSession(accessHash)
        // Let a lookup that does not wait run now, inside the transaction's window.
        await new Promise((resolve) => setTimeout(resolve, 20))
        throw new Error('rolled back')
      }),
    ).rejects.toThrow('rolled back')
    expect(await duringTransaction).toMatchObject({ account: { email: member.email } })
    expect((await get('/v1/profile', `Bearer ${member.client.tokens!.access_token}`)).status).toBe(200)
  })
})

describe('the operator API', () => {
  it.each([
    ['a malformed token', 'Bearer !!!bad'],
    ['a wrong token', `Bearer ${'x'.repeat(43)}`],
    ['no header', undefined],
  ])('refuses %s with 401', async (_case, authorization) => {
    const response = await raw(server, 'POST', `/v1/admin/accounts/${randomUUID()}/suspend`, authorization === undefined ? {} : { headers: { authorization } })
    expect(response.status).toBe(401)
    expect(response.json?.code).toBe('error.auth.unauthenticated')
  })
})
