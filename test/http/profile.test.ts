// The profile reads back what PATCH set (trimmed, 1-100 characters, null clears, absent keeps),
// refuses any other display_name or body with the documented problem and no change, and never
// lets the profile surface touch email or user_id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Profile } from '../../src/sdk/client.ts'
import { type Member, PASSWORD, raw, registered, uniqueEmail } from '../support/actors.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/

function auth(member: Member): Record<string, string> {
  return { authorization: `Bearer ${member.client.tokens?.access_token}` }
}

/** PATCH /v1/profile with any body text and media type, as the SDK would never send it. */
function patch(member: Member, body: string, contentType = 'application/json') {
  return raw(server, 'PATCH', '/v1/profile', { headers: { ...auth(member), 'content-type': contentType }, body })
}

/** An account whose display name is already `name`. */
async function named(name: string): Promise<Member> {
  const member = await registered(server, 'profile')
  expect((await member.client.updateProfile({ display_name: name })).display_name).toBe(name)
  return member
}

/** The profile as a second, independent sign-in of the account reads it. */
async function profileFromAnotherSession(member: Member): Promise<Profile> {
  const other = server.client()
  expect((await other.login(member.email, PASSWORD)).kind).toBe('session')
  return other.getProfile()
}

describe('GET /v1/profile', () => {
  it('answers user_id, email and created_at (RFC 3339 UTC with Z, the registration instant), no display_name', async () => {
    const email = uniqueEmail('profile-get')
    const client = server.client()
    const before = server.clock.now()
    await client.register(email, PASSWORD)
    const after = server.clock.now()
    const response = await raw(server, 'GET', '/v1/profile', { headers: { authorization: `Bearer ${client.tokens?.access_token}` } })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^application\/json/)
    expect(Object.keys(response.json ?? {}).sort()).toEqual(['created_at', 'email', 'user_id'])
    expect(response.json?.email).toBe(email)
    expect(typeof response.json?.user_id).toBe('string')
    expect(String(response.json?.user_id).length).toBeGreaterThan(0)
    const createdAt = response.json?.created_at as string
    expect(createdAt).toMatch(RFC3339_UTC)
    expect(Date.parse(createdAt)).toBeGreaterThanOrEqual(before)
    expect(Date.parse(createdAt)).toBeLessThanOrEqual(after)
  })

  it('answers 401 error.auth.unauthenticated with WWW-Authenticate without a bearer token', async () => {
    const response = await raw(server, 'GET', '/v1/profile')
    expect(response.status).toBe(401)
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/)
    expect(response.json?.code).toBe('error.auth.unauthenticated')
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="coffer"/)
  })
})

describe('PATCH /v1/profile', () => {
  it('sets a trimmed name, answers it and keeps it for a later GET from another session', async () => {
    const member = await registered(server, 'profile-set')
    const before = await member.client.getProfile()
    const response = await patch(member, JSON.stringify({ display_name: '  Ada Lovelace \t' }))
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^application\/json/)
    expect(response.json).toEqual({ ...before, display_name: 'Ada Lovelace' })
    expect(await member.client.getProfile()).toEqual({ ...before, display_name: 'Ada Lovelace' })
    expect((await profileFromAnotherSession(member)).display_name).toBe('Ada Lovelace')
  })

  it('replaces an existing name with a new one', async () => {
    const member = await named('First Name')
    expect((await member.client.updateProfile({ display_name: 'Second Name' })).display_name).toBe('Second Name')
    expect((await member.client.getProfile()).display_name).toBe('Second Name')
  })

  it('clears the name on an explicit null: display_name is then absent, not null', async () => {
    const member = await named('To Be Cleared')
    const response = await patch(member, JSON.stringify({ display_name: null }))
    expect(response.status).toBe(200)
    expect(response.json).not.toHaveProperty('display_name')
    expect(response.text).not.toContain('display_name')
    const read = await raw(server, 'GET', '/v1/profile', { headers: auth(member) })
    expect(read.json).not.toHaveProperty('display_name')
    expect(await profileFromAnotherSession(member)).not.toHaveProperty('display_name')
  })

  it('leaves the name unchanged when the key is absent', async () => {
    const member = await named('Kept Name')
    const before = await member.client.getProfile()
    expect(await member.client.updateProfile({})).toEqual(before)
    expect(await member.client.getProfile()).toEqual(before)
    expect(before.display_name).toBe('Kept Name')
  })

  it('answers an empty object with the profile unchanged, a name-less one included', async () => {
    const member = await registered(server, 'profile-empty')
    const before = await member.client.getProfile()
    const response = await patch(member, '{}')
    expect(response.status).toBe(200)
    expect(response.json).toEqual(before)
    expect(response.json).not.toHaveProperty('display_name')
  })

  it.each([
    ['exactly 1 character', 'x', 'x'],
    ['exactly 1 character inside spaces', '   y   ', 'y'],
    ['exactly 100 characters', 'n'.repeat(100), 'n'.repeat(100)],
    ['100 characters inside spaces (101+ before trimming)', ` ${'m'.repeat(100)}  `, 'm'.repeat(100)],
  ])('accepts %s', async (_case, sent, stored) => {
    const member = await registered(server, 'profile-length')
    const response = await patch(member, JSON.stringify({ display_name: sent }))
    expect(response.status).toBe(200)
    expect(response.json?.display_name).toBe(stored)
    expect((await member.client.getProfile()).display_name).toBe(stored)
  })

  it.each([
    ['an empty string', ''],
    ['only spaces (0 characters after trimming)', '    '],
    ['only whitespace of several kinds', ' \t\n '],
    ['101 characters', 'o'.repeat(101)],
    ['101 characters inside spaces', `  ${'p'.repeat(101)}  `],
  ])('refuses %s with 422 error.request.invalid and keeps the name', async (_case, sent) => {
    const member = await named('Before Refusal')
    const response = await patch(member, JSON.stringify({ display_name: sent }))
    expect(response.status).toBe(422)
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/)
    expect(response.json).toMatchObject({ status: 422, code: 'error.request.invalid' })
    expect((await member.client.getProfile()).display_name).toBe('Before Refusal')
  })

  it.each([
    ['a number', 42],
    ['a boolean', true],
    ['an array', ['Name']],
    ['an object', { first: 'Name' }],
  ])('refuses a display_name that is %s with 422 and keeps the name', async (_case, sent) => {
    const member = await named('Typed Name')
    const response = await patch(member, JSON.stringify({ display_name: sent }))
    expect(response.status).toBe(422)
    expect(response.json?.code).toBe('error.request.invalid')
    expect((await member.client.getProfile()).display_name).toBe('Typed Name')
  })

  it.each([
    ['a JSON array', '["display_name"]'],
    ['a JSON string', '"Name"'],
    ['JSON null', 'null'],
  ])('refuses a body that is %s (not an object) with 422', async (_case, body) => {
    const member = await named('Object Only')
    const response = await patch(member, body)
    expect(response.status).toBe(422)
    expect(response.json?.code).toBe('error.request.invalid')
    expect((await member.client.getProfile()).display_name).toBe('Object Only')
  })

  it('answers malformed JSON with 400 error.request.malformed and keeps the name', async () => {
    const member = await named('Malformed Guard')
    const response = await patch(member, '{"display_name": "Half')
    expect(response.status).toBe(400)
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/)
    expect(response.json).toMatchObject({ status: 400, code: 'error.request.malformed' })
    expect((await member.client.getProfile()).display_name).toBe('Malformed Guard')
  })

  it.each([['text/plain'], ['application/x-www-form-urlencoded'], ['application/cbor']])(
    'answers Content-Type %s with 415 and keeps the name',
    async (type) => {
      const member = await named('Media Guard')
      const response = await patch(member, JSON.stringify({ display_name: 'Sent As Other Media' }), type)
      expect(response.status).toBe(415)
      expect(response.json).toMatchObject({ status: 415, code: 'error.request.unsupported_media_type' })
      expect((await member.client.getProfile()).display_name).toBe('Media Guard')
    },
  )

  it.each([['application/merge-patch+json'], ['application/merge-patch+json; charset=utf-8'], ['application/json; charset=utf-8']])(
    'accepts Content-Type %s',
    async (type) => {
      const member = await named('Before Merge Patch')
      const response = await patch(member, JSON.stringify({ display_name: ' Merged ' }), type)
      expect(response.status).toBe(200)
      expect(response.json?.display_name).toBe('Merged')
      expect((await member.client.getProfile()).display_name).toBe('Merged')
    },
  )

  it('clears the name with null under application/merge-patch+json', async () => {
    const member = await named('Merge Cleared')
    const response = await patch(member, JSON.stringify({ display_name: null }), 'application/merge-patch+json')
    expect(response.status).toBe(200)
    expect(response.json).not.toHaveProperty('display_name')
    expect(await member.client.getProfile()).not.toHaveProperty('display_name')
  })

  it('ignores unknown keys (UpdateProfileRequest is not a strict object)', async () => {
    const member = await named('Unknown Keys')
    const withName = await patch(member, JSON.stringify({ display_name: 'Applied', nickname: 'ignored', theme: { dark: true } }))
    expect(withName.status).toBe(200)
    expect(withName.json?.display_name).toBe('Applied')
    expect(withName.json).not.toHaveProperty('nickname')
    expect(withName.json).not.toHaveProperty('theme')
    const without = await patch(member, JSON.stringify({ nickname: 'ignored again' }))
    expect(without.status).toBe(200)
    expect(without.json?.display_name).toBe('Applied')
    expect(await member.client.getProfile()).not.toHaveProperty('nickname')
  })

  it('treats email and user_id as read-only: a body carrying them changes neither', async () => {
    const member = await registered(server, 'profile-readonly')
    const before = await member.client.getProfile()
    const otherEmail = uniqueEmail('profile-takeover')
    const response = await patch(
      member,
      JSON.stringify({ email: otherEmail, user_id: '00000000-0000-4000-8000-000000000000', created_at: '2000-01-01T00:00:00Z', display_name: 'Read Only' }),
    )
    expect(response.status).toBe(200)
    expect(response.json).toEqual({ ...before, display_name: 'Read Only' })
    expect(await member.client.getProfile()).toEqual({ ...before, display_name: 'Read Only' })
    // The account still signs in under its own email, and the sent one names no account.
    expect((await server.client().login(member.email, PASSWORD)).kind).toBe('session')
    const other = await raw(server, 'POST', '/v1/auth/login', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: otherEmail, password: PASSWORD }),
    })
    expect(other.status).toBe(401)
    expect(other.json?.code).toBe('error.auth.invalid_credentials')
  })

  it('keeps created_at when the name changes', async () => {
    const member = await registered(server, 'profile-created')
    const before = await member.client.getProfile()
    server.clock.advance(5_000)
    const after = await member.client.updateProfile({ display_name: 'Later' })
    expect(after.created_at).toBe(before.created_at)
    expect(after.created_at).toMatch(RFC3339_UTC)
  })

  it('answers 401 with WWW-Authenticate without a bearer token, and changes nothing', async () => {
    const member = await named('No Bearer')
    const response = await raw(server, 'PATCH', '/v1/profile', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ display_name: 'Anonymous' }),
    })
    expect(response.status).toBe(401)
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/)
    expect(response.json?.code).toBe('error.auth.unauthenticated')
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="coffer"/)
    expect((await member.client.getProfile()).display_name).toBe('No Bearer')
  })

  it('answers 401 with error="invalid_token" for an unknown bearer token', async () => {
    const response = await raw(server, 'PATCH', '/v1/profile', {
      headers: { authorization: 'Bearer coffer_at_unknownunknownunknownunknownunknownunk', 'content-type': 'application/json' },
      body: JSON.stringify({ display_name: 'Forged' }),
    })
    expect(response.status).toBe(401)
    expect(response.json?.code).toBe('error.auth.unauthenticated')
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="coffer".*error="invalid_token"/)
  })
})
