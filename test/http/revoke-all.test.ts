// Revoke-all ends every session of the account, the caller's own included, only for a proof
// made with the account's bound identity key over a live single-use challenge, so a stolen
// session token can end no session but its own.
import { encode } from 'cborg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { revokeAllSigningBytes } from '../../src/contract/signing.ts'
import { CofferClient, type Tokens } from '../../src/sdk/client.ts'
import { IdentityKey } from '../../src/sdk/identity.ts'
import { type Member, PASSWORD, problemOf, raw, registered } from '../support/actors.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

const REVOKE_CHALLENGE_TTL_MS = 300_000
const json = { 'content-type': 'application/json' }

interface Owner extends Member {
  readonly userId: string
  readonly identity: IdentityKey
}

/** A registered account whose identity key is bound by a first directory publish. */
async function owner(label: string): Promise<Owner> {
  const member = await registered(server, label)
  const identity = IdentityKey.generate()
  await member.client.publishDirectory(encode({ directory_version: 1 }), identity)
  const { user_id: userId } = await member.client.getProfile()
  return { ...member, userId, identity }
}

async function loginAs(email: string): Promise<CofferClient> {
  const client = server.client()
  const result = await client.login(email, PASSWORD)
  expect(result.kind).toBe('session')
  return client
}

function revokeRaw(body: unknown, headers: Record<string, string> = json) {
  return raw(server, 'POST', '/v1/auth/sessions/revoke-all', { headers, body: typeof body === 'string' ? body : JSON.stringify(body) })
}

function sessionsWith(accessToken: string) {
  return raw(server, 'GET', '/v1/auth/sessions', { headers: { authorization: `Bearer ${accessToken}` } })
}

function refreshRaw(refreshToken: string) {
  return raw(server, 'POST', '/v1/auth/refresh', { headers: json, body: JSON.stringify({ refresh_token: refreshToken }) })
}

async function liveSessionCount(client: CofferClient): Promise<number> {
  return (await client.listSessions()).sessions.length
}

async function expectPairDead(tokens: Tokens): Promise<void> {
  const access = await sessionsWith(tokens.access_token)
  expect(access.status).toBe(401)
  expect(access.json?.code).toBe('error.auth.unauthenticated')
  const refreshed = await refreshRaw(tokens.refresh_token)
  expect(refreshed.status).toBe(401)
  expect(refreshed.json?.code).toBe('error.auth.session_expired')
}

async function expectPairAlive(tokens: Tokens): Promise<void> {
  expect((await sessionsWith(tokens.access_token)).status).toBe(200)
}

function expectProofRequired(answer: { status: number; headers: Headers; json: Record<string, unknown> | undefined }): void {
  expect(answer.status, JSON.stringify(answer.json)).toBe(401)
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/)
  expect(answer.json?.code).toBe('error.auth.proof_required')
}

describe('the ceremony through the SDK', () => {
  it('ends every live session of the account, the caller’s own included, and counts them', async () => {
    const alice = await owner('alice')
    const second = await loginAs(alice.email)
    const third = await loginAs(alice.email)
    const beforeRefresh = second.tokens!
    await second.refresh() // a rotated record now exists beside the live successor
    const bystander = await owner('bystander')
    const bystanderSessions = (await bystander.client.listSessions()).sessions

    const pairs = [alice.client.tokens!, beforeRefresh, second.tokens!, third.tokens!]
    expect(await liveSessionCount(alice.client)).toBe(3)

    const revoked = await alice.client.revokeAllSessions(alice.identity)
    expect(revoked).toBe(3)
    expect(alice.client.tokens).toBeNull()
    for (const pair of pairs) await expectPairDead(pair)

    // Another account is untouched.
    expect((await bystander.client.listSessions()).sessions).toEqual(bystanderSessions)
    await expectPairAlive(bystander.client.tokens!)
  })

  it('leaves the account usable: a new login works, and the bound key revokes again', async () => {
    const alice = await owner('again')
    await loginAs(alice.email)
    expect(await alice.client.revokeAllSessions(alice.identity)).toBe(2)

    const fresh = await loginAs(alice.email)
    const listed = (await fresh.listSessions()).sessions
    expect(listed).toHaveLength(1)
    expect(listed[0]?.current).toBe(true)
    expect(await fresh.revokeAllSessions(alice.identity)).toBe(1)
    expect((await sessionsWith(fresh.tokens?.access_token ?? 'gone')).status).toBe(401)
  })

  it('counts only live sessions: one whose refresh lifetime is over is not counted', async () => {
    const alice = await owner('expired')
    await loginAs(alice.email)
    server.clock.advance(2_592_000_000 + 1_000) // past REFRESH_TOKEN_TTL_S: both sessions are over
    const current = await loginAs(alice.email)
    expect(await liveSessionCount(current)).toBe(1)
    expect(await current.revokeAllSessions(alice.identity)).toBe(1)
  })

  it('answers a challenge with expires_at REVOKE_CHALLENGE_TTL_S after now, and a fresh challenge each time', async () => {
    const alice = await owner('challenge')
    const now = server.clock.now()
    const first = await alice.client.revokeAllChallenge()
    const second = await alice.client.revokeAllChallenge()
    expect(first.expires_at).toBe(new Date(now + REVOKE_CHALLENGE_TTL_MS).toISOString())
    expect(first.challenge).not.toBe(second.challenge)
    expect(first.challenge.length).toBeGreaterThanOrEqual(43)
  })

  it('needs a bearer token to get a challenge', async () => {
    const answer = await raw(server, 'POST', '/v1/auth/sessions/revoke-all/challenge')
    expect(answer.status).toBe(401)
    expect(answer.json?.code).toBe('error.auth.unauthenticated')
  })
})

describe('the revoke call', () => {
  it('needs no bearer token', async () => {
    const alice = await owner('no-bearer')
    const { challenge } = await alice.client.revokeAllChallenge()
    const answer = await revokeRaw({ challenge, proof: await alice.identity.proveRevokeAll(alice.userId, challenge) })
    expect(answer.status).toBe(200)
    expect(answer.json).toEqual({ revoked: 1 })
    await expectPairDead(alice.client.tokens!)
  })

  it('acts on the challenge’s account, never on a bearer token sent along', async () => {
    const alice = await owner('target')
    const bob = await owner('bystander-bearer')
    const { challenge } = await alice.client.revokeAllChallenge()
    const proof = await alice.identity.proveRevokeAll(alice.userId, challenge)
    const answer = await revokeRaw({ challenge, proof }, { ...json, authorization: `Bearer ${bob.client.tokens!.access_token}` })
    expect(answer.json).toEqual({ revoked: 1 })
    await expectPairDead(alice.client.tokens!)
    await expectPairAlive(bob.client.tokens!)
  })
})

describe('the challenge is single-use, burned by its first attempt whatever the outcome', () => {
  it('a bad proof burns it: the right proof with the same challenge is then refused', async () => {
    const alice = await owner('burn-bad')
    const { challenge } = await alice.client.revokeAllChallenge()
    const wrong = await IdentityKey.generate().proveRevokeAll(alice.userId, challenge)
    expectProofRequired(await revokeRaw({ challenge, proof: wrong }))
    expectProofRequired(await revokeRaw({ challenge, proof: await alice.identity.proveRevokeAll(alice.userId, challenge) }))
    await expectPairAlive(alice.client.tokens!)
    expect(await liveSessionCount(alice.client)).toBe(1)
  })

  it('a good proof works once; the same request again is refused', async () => {
    const alice = await owner('burn-good')
    const { challenge } = await alice.client.revokeAllChallenge()
    const body = { challenge, proof: await alice.identity.proveRevokeAll(alice.userId, challenge) }
    expect((await revokeRaw(body)).json).toEqual({ revoked: 1 })
    // A new session after the revoke: a replayed proof must not end it.
    const fresh = await loginAs(alice.email)
    expectProofRequired(await revokeRaw(body))
    await expectPairAlive(fresh.tokens!)
  })

  it('an expired attempt burns it: the clock set back does not revive it', async () => {
    const alice = await owner('burn-expired')
    const { challenge, expires_at: expiresAt } = await alice.client.revokeAllChallenge()
    const proof = await alice.identity.proveRevokeAll(alice.userId, challenge)
    server.clock.set(Date.parse(expiresAt))
    expectProofRequired(await revokeRaw({ challenge, proof }))
    server.clock.set(Date.parse(expiresAt) - 1)
    expectProofRequired(await revokeRaw({ challenge, proof }))
    await expectPairAlive(alice.client.tokens!)
  })

  it('a bad proof after a good one under the same key (its parse kept) is still refused, and burns', async () => {
    const alice = await owner('burn-after-good')
    const first = await alice.client.revokeAllChallenge()
    expect((await revokeRaw({ challenge: first.challenge, proof: await alice.identity.proveRevokeAll(alice.userId, first.challenge) })).json).toEqual({
      revoked: 1,
    })
    const fresh = await loginAs(alice.email)
    const { challenge } = await fresh.revokeAllChallenge()
    // Signed by the right key over the earlier challenge: valid bytes, wrong message.
    expectProofRequired(await revokeRaw({ challenge, proof: await alice.identity.proveRevokeAll(alice.userId, first.challenge) }))
    expectProofRequired(await revokeRaw({ challenge, proof: await alice.identity.proveRevokeAll(alice.userId, challenge) }))
    await expectPairAlive(fresh.tokens!)
  })

  it('a proof that is not base64 burns it', async () => {
    const alice = await owner('burn-b64')
    const { challenge } = await alice.client.revokeAllChallenge()
    expectProofRequired(await revokeRaw({ challenge, proof: '*** not base64 ***' }))
    expectProofRequired(await revokeRaw({ challenge, proof: await alice.identity.proveRevokeAll(alice.userId, challenge) }))
    await expectPairAlive(alice.client.tokens!)
  })

  it('an attempt with no bound identity key burns it: binding a key afterwards does not revive it', async () => {
    const member = await registered(server, 'unbound')
    const { user_id: userId } = await member.client.getProfile()
    const identity = IdentityKey.generate()
    const { challenge } = await member.client.revokeAllChallenge()
    expectProofRequired(await revokeRaw({ challenge, proof: await identity.proveRevokeAll(userId, challenge) }))
    await expectPairAlive(member.client.tokens!)

    await member.client.publishDirectory(encode({ directory_version: 1 }), identity)
    expectProofRequired(await revokeRaw({ challenge, proof: await identity.proveRevokeAll(userId, challenge) }))
    await expectPairAlive(member.client.tokens!)
  })

  it('a request refused by the schema (422) is no attempt: the challenge still works', async () => {
    const alice = await owner('schema-first')
    const { challenge } = await alice.client.revokeAllChallenge()
    const proof = await alice.identity.proveRevokeAll(alice.userId, challenge)
    expect((await revokeRaw({ challenge, proof, extra: true })).status).toBe(422)
    expect((await revokeRaw({ challenge, proof }, { 'content-type': 'text/plain' })).status).toBe(415)
    await expectPairAlive(alice.client.tokens!)
    expect((await revokeRaw({ challenge, proof })).json).toEqual({ revoked: 1 })
  })
})

describe('refusals: 401 error.auth.proof_required, and every session stays', () => {
  it('an expired challenge (REVOKE_CHALLENGE_TTL_S has passed) is refused', async () => {
    const alice = await owner('expired-challenge')
    const { challenge } = await alice.client.revokeAllChallenge()
    const proof = await alice.identity.proveRevokeAll(alice.userId, challenge)
    server.clock.advance(REVOKE_CHALLENGE_TTL_MS + 1_000)
    expectProofRequired(await revokeRaw({ challenge, proof }))
    expect(await liveSessionCount(alice.client)).toBe(1)
  })

  it('a challenge is refused from the instant of its expires_at', async () => {
    const alice = await owner('boundary-challenge')
    const { challenge, expires_at: expiresAt } = await alice.client.revokeAllChallenge()
    const proof = await alice.identity.proveRevokeAll(alice.userId, challenge)
    server.clock.set(Date.parse(expiresAt))
    expectProofRequired(await revokeRaw({ challenge, proof }))
    expect(await liveSessionCount(alice.client)).toBe(1)
  })

  it('a challenge is honoured until just before expires_at', async () => {
    const alice = await owner('live-challenge')
    const { challenge, expires_at: expiresAt } = await alice.client.revokeAllChallenge()
    const proof = await alice.identity.proveRevokeAll(alice.userId, challenge)
    server.clock.set(Date.parse(expiresAt) - 1)
    expect((await revokeRaw({ challenge, proof })).json).toEqual({ revoked: 1 })
  })

  it('an unknown challenge is refused', async () => {
    const alice = await owner('unknown')
    for (const challenge of ['A'.repeat(43), '', 'not even close']) {
      expectProofRequired(await revokeRaw({ challenge, proof: await alice.identity.proveRevokeAll(alice.userId, challenge) }))
    }
    expect(await liveSessionCount(alice.client)).toBe(1)
  })

  it('a proof by another key is refused, even the key of the account that signs for itself', async () => {
    const alice = await owner('victim')
    const mallory = await owner('mallory')
    const { challenge } = await alice.client.revokeAllChallenge()
    // Mallory signs Alice's challenge with her own bound key, over her own user id and over Alice's.
    expectProofRequired(await revokeRaw({ challenge, proof: await mallory.identity.proveRevokeAll(mallory.userId, challenge) }))
    const again = await alice.client.revokeAllChallenge()
    expectProofRequired(await revokeRaw({ challenge: again.challenge, proof: await mallory.identity.proveRevokeAll(alice.userId, again.challenge) }))
    expect(await liveSessionCount(alice.client)).toBe(1)
    expect(await liveSessionCount(mallory.client)).toBe(1)
  })

  it('a proof over the wrong user_id, context, challenge or encoding is refused', async () => {
    const alice = await owner('wrong-bytes')
    const other = await owner('other-user')
    const sign = (message: Uint8Array) => alice.identity.sign(message).then((s) => Buffer.from(s).toString('base64'))
    const wrongMessages: [string, (challenge: string) => Uint8Array][] = [
      ['another user_id', (c) => revokeAllSigningBytes(other.userId, c)],
      ['another context', (c) => encode({ context: 'coffer/revoke-all/v2', user_id: alice.userId, challenge: c })],
      ['another challenge', () => revokeAllSigningBytes(alice.userId, 'B'.repeat(43))],
      ['no context', (c) => encode({ user_id: alice.userId, challenge: c })],
      ['the right map, keys not in canonical order', (c) => nonCanonical(alice.userId, c)],
      ['the challenge alone', (c) => new TextEncoder().encode(c)],
    ]
    for (const [name, message] of wrongMessages) {
      const { challenge } = await alice.client.revokeAllChallenge()
      const answer = await revokeRaw({ challenge, proof: await sign(message(challenge)) })
      expect(answer.status, name).toBe(401)
      expect(answer.json?.code, name).toBe('error.auth.proof_required')
    }
    expect(await liveSessionCount(alice.client)).toBe(1)
  })

  it('a hybrid signature with either half broken, or cut short, is refused', async () => {
    const alice = await owner('halves')
    const broken: [string, (signature: Buffer) => Buffer][] = [
      ['Ed25519 half flipped', (s) => flip(s, 10)],
      ['ML-DSA-65 half flipped', (s) => flip(s, 64 + 1000)],
      ['last byte flipped', (s) => flip(s, s.length - 1)],
      ['one byte short', (s) => s.subarray(0, s.length - 1)],
      ['Ed25519 half only', (s) => s.subarray(0, 64)],
      ['a byte too many', (s) => Buffer.concat([s, Buffer.from([0])])],
    ]
    for (const [name, breakIt] of broken) {
      const { challenge } = await alice.client.revokeAllChallenge()
      const signature = Buffer.from(await alice.identity.proveRevokeAll(alice.userId, challenge), 'base64')
      const answer = await revokeRaw({ challenge, proof: breakIt(signature).toString('base64') })
      expect(answer.status, name).toBe(401)
      expect(answer.json?.code, name).toBe('error.auth.proof_required')
    }
    expect(await liveSessionCount(alice.client)).toBe(1)
  })

  it('a proof in base64url or without padding is refused (b64 is standard base64 with padding)', async () => {
    const alice = await owner('b64-forms')
    const forms: [string, (signature: Buffer) => string][] = [
      ['base64url', (s) => s.toString('base64url')],
      ['unpadded', (s) => s.toString('base64').replace(/=+$/, '')],
    ]
    for (const [name, spell] of forms) {
      const { challenge } = await alice.client.revokeAllChallenge()
      const signature = Buffer.from(await alice.identity.proveRevokeAll(alice.userId, challenge), 'base64')
      expect(spell(signature), name).not.toBe(signature.toString('base64'))
      const answer = await revokeRaw({ challenge, proof: spell(signature) })
      expect(answer.status, name).toBe(401)
    }
    expect(await liveSessionCount(alice.client)).toBe(1)
  })

  it('the SDK surfaces the refusal as a CofferProblem and keeps its tokens', async () => {
    const alice = await owner('sdk-refusal')
    const error = await problemOf(alice.client.revokeAllSessions(IdentityKey.generate()))
    expect(error.status).toBe(401)
    expect(error.code).toBe('error.auth.proof_required')
    expect(alice.client.tokens).not.toBeNull()
    expect(await liveSessionCount(alice.client)).toBe(1)
  })
})

describe('request shape (RevokeAllRequest is strict)', () => {
  it.each([
    ['an unknown key', { challenge: 'c', proof: 'p', user_id: 'someone' }],
    ['no proof', { challenge: 'c' }],
    ['no challenge', { proof: 'p' }],
    ['an empty object', {}],
    ['a number proof', { challenge: 'c', proof: 7 }],
    ['a null challenge', { challenge: null, proof: 'p' }],
  ])('refuses %s with 422 error.request.invalid', async (_case, body) => {
    const answer = await revokeRaw(body)
    expect(answer.status).toBe(422)
    expect(answer.json?.code).toBe('error.request.invalid')
  })

  it('refuses malformed JSON with 400 and another media type with 415', async () => {
    const malformed = await revokeRaw('{"challenge": ')
    expect(malformed.status).toBe(400)
    expect(malformed.json?.code).toBe('error.request.malformed')
    const media = await revokeRaw({ challenge: 'c', proof: 'p' }, { 'content-type': 'application/cbor' })
    expect(media.status).toBe(415)
    expect(media.json?.code).toBe('error.request.unsupported_media_type')
  })

  it('refuses an unknown key even when the challenge and proof are right, and ends nothing', async () => {
    const alice = await owner('strict')
    const { challenge } = await alice.client.revokeAllChallenge()
    const proof = await alice.identity.proveRevokeAll(alice.userId, challenge)
    const answer = await revokeRaw({ challenge, proof, user_id: alice.userId })
    expect(answer.status).toBe(422)
    expect(await liveSessionCount(alice.client)).toBe(1)
  })
})

describe('a stolen session token of an account that never published', () => {
  it('cannot bind a key of its own to then revoke every session, once its password proof is stale', async () => {
    // Its own server: the clock moves past the freshness window.
    const own = await startServer()
    try {
      const victim = await registered(own, 'unbound')
      const laptop = own.client()
      expect((await laptop.login(victim.email, PASSWORD)).kind).toBe('session')
      const thief = new CofferClient({ baseUrl: own.url, now: own.clock.now, tokens: laptop.tokens! })
      own.clock.advance(own.deps.config.freshnessWindowS * 1000 + 1)
      await thief.refresh()
      const thiefKey = IdentityKey.generate()
      const bind = await problemOf(thief.publishDirectory(encode({ directory_version: 1 }), thiefKey))
      expect([bind.status, bind.code]).toEqual([403, 'error.auth.reauthentication_required'])
      expect((await problemOf(thief.revokeAllSessions(thiefKey))).code).toBe('error.auth.proof_required')
      // The victim's own session is untouched.
      expect((await victim.client.getProfile()).email).toBe(victim.email)
    } finally {
      await own.close()
    }
  })
})

describe('a stolen session token', () => {
  it('gets a challenge but no proof, cannot rebind the key, and its logout ends only its own session', async () => {
    const alice = await owner('stolen')
    const laptop = await loginAs(alice.email)
    const phoneTokens = alice.client.tokens!
    // The thief holds the laptop's access and refresh tokens, nothing else.
    const thief = new CofferClient({ baseUrl: server.url, now: server.clock.now, tokens: laptop.tokens! })
    const thiefKey = IdentityKey.generate()

    const { challenge } = await thief.revokeAllChallenge()
    const { user_id: userId } = await thief.getProfile()
    expect(userId).toBe(alice.userId)
    expectProofRequired(await revokeRaw({ challenge, proof: await thiefKey.proveRevokeAll(userId, challenge) }))
    expect((await problemOf(thief.revokeAllSessions(thiefKey))).code).toBe('error.auth.proof_required')

    // Nor can the thief bind a key of its own over Alice's.
    const rebind = await problemOf(thief.publishDirectory(encode({ directory_version: 2 }), thiefKey))
    expect(rebind.status).toBe(409)
    expect(rebind.code).toBe('error.directory.identity_key_mismatch')

    // A refresh with the stolen refresh token rotates only that lineage.
    await thief.refresh()
    expect(await liveSessionCount(alice.client)).toBe(2)

    const stolenTokens = thief.tokens!
    await thief.logout()
    await expectPairDead(stolenTokens)
    await expectPairAlive(phoneTokens)
    const left = (await alice.client.listSessions()).sessions
    expect(left).toHaveLength(1)
    expect(left[0]?.current).toBe(true)

    // Alice, with her key, still can end everything.
    expect(await alice.client.revokeAllSessions(alice.identity)).toBe(1)
  })
})

function flip(bytes: Buffer, index: number): Buffer {
  const copy = Buffer.from(bytes)
  copy[index] = copy[index]! ^ 0x01
  return copy
}

/** The signing map with the right content, encoded with its keys in the reverse of canonical order. */
function nonCanonical(userId: string, challenge: string): Uint8Array {
  const canonical = Buffer.from(revokeAllSigningBytes(userId, challenge))
  // Canonical order is by encoded key bytes: "context" (0x67...), "user_id" (0x67 'u'), "challenge" (0x69...).
  const entries = [
    ['challenge', challenge],
    ['user_id', userId],
    ['context', 'coffer/revoke-all/v1'],
  ].map(([k, v]) => Buffer.concat([Buffer.from(encode(k!)), Buffer.from(encode(v!))]))
  const bytes = Buffer.concat([Buffer.from([0xa3]), ...entries])
  expect(bytes.equals(canonical)).toBe(false)
  expect(bytes.length).toBe(canonical.length)
  return bytes
}
