// A revoke-all leaves no session alive that existed before it or that a racing refresh opened,
// a racing login survives only when it was ordered after the revoke-all (then it is listed like
// any new session), and `revoked` counts each session it ended exactly once. One challenge
// sent many times at once, good and bad proofs mixed, on one instance or two, is used once.
import { encode } from 'cborg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Devices, Tokens } from '../../src/sdk/client.ts'
import { IdentityKey } from '../../src/sdk/identity.ts'
import { PASSWORD, raw, registered } from '../support/actors.ts'
import { testEngine } from '../support/database.ts'
import { startInstances, startServer, type TestServer } from '../support/server.ts'

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

const ROUNDS = 5
const json = { 'content-type': 'application/json' }

function loginRaw(email: string, on: TestServer = server) {
  return raw(on, 'POST', '/v1/auth/login', { headers: json, body: JSON.stringify({ email, password: PASSWORD }) })
}

function refreshRaw(refreshToken: string) {
  return raw(server, 'POST', '/v1/auth/refresh', { headers: json, body: JSON.stringify({ refresh_token: refreshToken }) })
}

function revokeRaw(challenge: string, proof: string, on: TestServer = server) {
  return raw(on, 'POST', '/v1/auth/sessions/revoke-all', { headers: json, body: JSON.stringify({ challenge, proof }) })
}

function sessionsWith(accessToken: string) {
  return raw(server, 'GET', '/v1/auth/sessions', { headers: { authorization: `Bearer ${accessToken}` } })
}

async function expectDead(tokens: Tokens, what: string): Promise<void> {
  expect((await sessionsWith(tokens.access_token)).status, `${what}: access token`).toBe(401)
  expect((await refreshRaw(tokens.refresh_token)).status, `${what}: refresh token`).toBe(401)
}

/** The id of the session an access token belongs to, or null when the token is refused. */
async function sessionIdOf(accessToken: string): Promise<string | null> {
  const answer = await sessionsWith(accessToken)
  if (answer.status === 401) return null
  expect(answer.status).toBe(200)
  return (answer.json as unknown as Devices).sessions.find((s) => s.current)!.session_id
}

/** An account with a bound identity key and `extra` sessions beside its registration's. */
async function account(label: string, extra: number, on: TestServer = server) {
  const member = await registered(on, label)
  const identity = IdentityKey.generate()
  await member.client.publishDirectory(encode({ directory_version: 1 }), identity)
  const { user_id: userId } = await member.client.getProfile()
  const pairs: Tokens[] = [member.client.tokens!]
  for (let i = 0; i < extra; i++) {
    const answer = await loginRaw(member.email, on)
    expect(answer.status).toBe(200)
    pairs.push(answer.json as unknown as Tokens)
  }
  expect((await member.client.listSessions()).sessions).toHaveLength(extra + 1)
  return { ...member, identity, userId, pairs }
}

async function signedChallenge(accessToken: string, userId: string, identity: IdentityKey, on: TestServer = server) {
  const answer = await raw(on, 'POST', '/v1/auth/sessions/revoke-all/challenge', { headers: { authorization: `Bearer ${accessToken}` } })
  expect(answer.status).toBe(200)
  const challenge = answer.json!.challenge as string
  return { challenge, proof: await identity.proveRevokeAll(userId, challenge) }
}

describe.each([[2], [6]])('revoke-all racing %i refreshes and as many logins', (width) => {
  it('ends every earlier session and every refreshed one; a surviving login is one ordered after it', async () => {
    let deadLogins = 0
    let liveLogins = 0
    for (let round = 0; round < ROUNDS; round++) {
      const alice = await account(`race-${width}`, width)
      const before = alice.pairs.length
      const { challenge, proof } = await signedChallenge(alice.pairs[0]!.access_token, alice.userId, alice.identity)

      // Everything at once: the revoke-all, a refresh of each login session, and new logins.
      const [revoke, refreshes, logins] = await Promise.all([
        revokeRaw(challenge, proof),
        Promise.all(alice.pairs.slice(1).map((pair) => refreshRaw(pair.refresh_token))),
        Promise.all(Array.from({ length: width }, () => loginRaw(alice.email))),
      ])

      expect(revoke.status, revoke.text).toBe(200)
      const revoked = revoke.json!.revoked as number

      // Every session from before is over, whichever side of the race its refresh fell on.
      for (const [i, pair] of alice.pairs.entries()) await expectDead(pair, `round ${round}, session ${i} from before`)
      // A refresh racing the revoke-all either lost (401) or opened a successor that is dead too.
      for (const [i, answer] of refreshes.entries()) {
        expect([200, 401], `round ${round}, refresh ${i}: ${answer.text}`).toContain(answer.status)
        if (answer.status === 200) await expectDead(answer.json as unknown as Tokens, `round ${round}, successor of refresh ${i}`)
        else expect(answer.json?.code).toBe('error.auth.session_expired')
      }

      // A racing login either died with the rest or was ordered after the revoke-all.
      const survivors: string[] = []
      for (const [i, answer] of logins.entries()) {
        expect(answer.status, `round ${round}, login ${i}: ${answer.text}`).toBe(200)
        const tokens = answer.json as unknown as Tokens
        const id = await sessionIdOf(tokens.access_token)
        if (id === null) {
          expect((await refreshRaw(tokens.refresh_token)).status, `round ${round}, dead login ${i}: refresh token`).toBe(401)
          deadLogins++
        } else {
          survivors.push(id)
          liveLogins++
        }
      }

      // Each session alive at the revoke-all counts once; a login that died with them may count too.
      const diedLogins = width - survivors.length
      expect(revoked, `round ${round}: revoked ${revoked} of ${before} (+${diedLogins} racing logins that died)`).toBeGreaterThanOrEqual(before)
      expect(revoked).toBeLessThanOrEqual(before + diedLogins)

      // A fresh login sees itself and the surviving racing logins, nothing else.
      const fresh = await loginRaw(alice.email)
      const freshId = await sessionIdOf((fresh.json as unknown as Tokens).access_token)
      const listed = (await sessionsWith((fresh.json as unknown as Tokens).access_token)).json as unknown as Devices
      expect(listed.sessions.map((s) => s.session_id).sort()).toEqual([freshId!, ...survivors].sort())
    }
    expect(deadLogins + liveLogins).toBe(ROUNDS * width)
  })
})

describe('two revoke-alls at once', () => {
  it('both answer 200, every session ends, and together they count each session once', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const alice = await account('double', 3)
      const first = await signedChallenge(alice.pairs[0]!.access_token, alice.userId, alice.identity)
      const second = await signedChallenge(alice.pairs[1]!.access_token, alice.userId, alice.identity)
      const answers = await Promise.all([revokeRaw(first.challenge, first.proof), revokeRaw(second.challenge, second.proof)])
      for (const answer of answers) expect(answer.status, answer.text).toBe(200)
      const counts = answers.map((a) => a.json!.revoked as number)
      expect(counts[0]! + counts[1]!, `round ${round}: ${counts.join(' + ')}`).toBe(alice.pairs.length)
      for (const [i, pair] of alice.pairs.entries()) await expectDead(pair, `round ${round}, session ${i}`)
    }
  })
})

describe('revoke-all racing a refresh of the caller’s own session', () => {
  it('never leaves the refreshed successor alive', async () => {
    for (let round = 0; round < ROUNDS * 2; round++) {
      const alice = await account('own', 0)
      const [own] = alice.pairs
      const { challenge, proof } = await signedChallenge(own!.access_token, alice.userId, alice.identity)
      const [revoke, refresh] = await Promise.all([revokeRaw(challenge, proof), refreshRaw(own!.refresh_token)])
      expect(revoke.json).toEqual({ revoked: 1 })
      await expectDead(own!, `round ${round}, the caller`)
      if (refresh.status === 200) await expectDead(refresh.json as unknown as Tokens, `round ${round}, the refreshed caller`)
      else expect(refresh.status).toBe(401)
    }
  })
})

const BURST = 8

/** A burst of one challenge: good proofs, and bad ones (another key's) at the odd places when `mixed`. */
async function burstOfOneChallenge(on: readonly TestServer[], mixed: boolean) {
  const alice = await account('burst', 2, on[0])
  const { challenge, proof } = await signedChallenge(alice.pairs[0]!.access_token, alice.userId, alice.identity, on[0])
  const wrong = await IdentityKey.generate().proveRevokeAll(alice.userId, challenge)
  const answers = await Promise.all(Array.from({ length: BURST }, (_, i) => revokeRaw(challenge, mixed && i % 2 === 1 ? wrong : proof, on[i % on.length])))
  const accepted = answers.filter((answer) => answer.status === 200)
  for (const answer of answers) if (answer.status !== 200) expect(answer.json?.code, answer.text).toBe('error.auth.proof_required')
  // Spent whatever happened: the good proof again is refused.
  expect((await revokeRaw(challenge, proof, on[0])).status).toBe(401)
  return { alice, accepted }
}

describe(`one challenge sent ${BURST} times at once`, () => {
  it('with good proofs: exactly one is accepted, and it ends every session', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { alice, accepted } = await burstOfOneChallenge([server], false)
      expect(
        accepted.map((answer) => answer.json),
        `round ${round}`,
      ).toEqual([{ revoked: alice.pairs.length }])
      for (const [i, pair] of alice.pairs.entries()) await expectDead(pair, `round ${round}, session ${i}`)
    }
  })

  it('with good and bad proofs mixed: at most one is accepted, and only it ends sessions', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { alice, accepted } = await burstOfOneChallenge([server], true)
      expect(accepted.length, `round ${round}`).toBeLessThanOrEqual(1)
      if (accepted.length === 0) expect((await sessionsWith(alice.pairs[0]!.access_token)).status).toBe(200)
      else for (const pair of alice.pairs) await expectDead(pair, `round ${round}`)
    }
  })
})

// SQLite is for one instance (README, "PostgreSQL and several instances").
if (testEngine === 'postgres')
  describe(`one challenge sent ${BURST} times at once across two instances`, () => {
    it('is accepted exactly once with good proofs, at most once with bad ones mixed in', async () => {
      const pair = await startInstances(2)
      try {
        for (let round = 0; round < ROUNDS; round++) {
          expect((await burstOfOneChallenge(pair.instances, false)).accepted, `round ${round}`).toHaveLength(1)
          expect((await burstOfOneChallenge(pair.instances, true)).accepted.length, `round ${round}`).toBeLessThanOrEqual(1)
        }
      } finally {
        await pair.close()
      }
    })
  })
