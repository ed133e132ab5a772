// A recovery code stands in for a TOTP code exactly once (sign-in, disable, new recovery
// codes; never confirm), counts in the account's code budget like any code, and exists only
// while the factor it belongs to does: confirm makes the first ten only when asked for them
// (Prefer: return=representation), regenerating replaces them all behind a fresh password proof
// and a code, and disabling or an operator's reset takes them away. Only keyed hashes are stored.
import { createHmac } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CofferAdmin } from '../../src/sdk/admin.ts'
import type { CofferClient } from '../../src/sdk/client.ts'
import {
  authenticatorFor,
  type Authenticator,
  type Member,
  PASSWORD,
  problemOf,
  raw,
  registered,
  THIRTY_SECONDS,
  withSecondFactor,
  wrongCode,
} from '../support/actors.ts'
import { readRows } from '../support/database.ts'
import { startServer, type TestServer } from '../support/server.ts'

const MAX_FAILURES = 4
const WINDOW_S = 3600
const FRESHNESS_S = 600
const ADMIN_TOKEN = 'admin-token-for-the-recovery-codes-test-0123456789'
const CODE_SHAPE = /^[0-9a-hjkmnp-tv-z]{5}-[0-9a-hjkmnp-tv-z]{5}$/

let server: TestServer
beforeAll(async () => {
  server = await startServer({ TOTP_MAX_FAILURES: String(MAX_FAILURES), TOTP_FAILURE_WINDOW_S: String(WINDOW_S), ADMIN_TOKEN })
})
afterAll(() => server.close())

/** An account whose factor was confirmed through the SDK (which asks for the recovery codes), with its id. */
async function enrolled(label: string): Promise<Member & { userId: string; authenticator: Authenticator; recoveryCodes: string[] }> {
  const member = await withSecondFactor(server, label)
  return { ...member, userId: (await member.client.getProfile()).user_id }
}

async function challenge(member: Member): Promise<string> {
  const login = await server.client().login(member.email, PASSWORD)
  if (login.kind !== 'second_factor') throw new Error('expected a second-factor challenge')
  return login.challenge.mfa_token
}

/** A sign-in finished with `code` on a fresh challenge: the new client, signed in. */
async function signInWith(member: Member, code: string): Promise<CofferClient> {
  const client = server.client()
  const login = await client.login(member.email, PASSWORD)
  if (login.kind !== 'second_factor') throw new Error('expected a second-factor challenge')
  await client.verifyLogin(login.challenge.mfa_token, code)
  return client
}

async function refusedSignIn(member: Member, code: string): Promise<[number, string]> {
  const refused = await problemOf(server.client().verifyLogin(await challenge(member), code))
  return [refused.status, refused.code]
}

function bearer(member: Member): Record<string, string> {
  return { authorization: `Bearer ${member.client.tokens?.access_token}`, 'content-type': 'application/json' }
}

/** The rows the database holds for the account, read directly. */
async function storedRows(userId: string): Promise<Record<string, unknown>[]> {
  return (await readRows(server.database, 'select * from recovery_codes')).filter((row) => row.user_id === userId)
}

/** A code of the right shape that is none of the account's. */
function notOneOf(codes: readonly string[]): string {
  const candidate = (n: number) => `zzzzz-${String(n).padStart(5, '0')}`
  let n = 0
  while (codes.includes(candidate(n))) n++
  return candidate(n)
}

describe('confirm', () => {
  it('answers 204 as SPEC fixes it when no representation is asked for, and makes no recovery codes', async () => {
    for (const prefer of [undefined, 'return=minimal', 'respond-async']) {
      const member = await registered(server, 'confirm-204')
      const authenticator = authenticatorFor(await member.client.startTotpEnrollment())
      const response = await raw(server, 'POST', '/v1/auth/totp/confirm', {
        headers: { ...bearer(member), ...(prefer === undefined ? {} : { prefer }) },
        body: JSON.stringify({ totp_code: authenticator.codeAt(server.clock.now()) }),
      })
      expect([response.status, response.text], String(prefer)).toEqual([204, ''])
      expect(response.headers.get('preference-applied')).toBeNull()
      expect(await member.client.secondFactorStatus()).toEqual({ status: 'active', recovery_codes_remaining: 0 })
      expect(await storedRows((await member.client.getProfile()).user_id)).toEqual([])
    }
  })

  it('answers 200 with ten distinct recovery codes and Preference-Applied to Prefer: return=representation', async () => {
    const member = await registered(server, 'confirm-200')
    const authenticator = authenticatorFor(await member.client.startTotpEnrollment())
    const response = await raw(server, 'POST', '/v1/auth/totp/confirm', {
      headers: { ...bearer(member), prefer: 'Return="representation"; x=1' },
      body: JSON.stringify({ totp_code: authenticator.codeAt(server.clock.now()) }),
    })
    expect(response.status).toBe(200)
    expect(response.headers.get('preference-applied')).toBe('return=representation')
    expect(response.headers.get('cache-control')).toBe('no-store')
    const codes = response.json?.recovery_codes as string[]
    expect(Object.keys(response.json ?? {})).toEqual(['recovery_codes'])
    expect(codes).toHaveLength(10)
    expect(new Set(codes).size).toBe(10)
    for (const code of codes) expect(code).toMatch(CODE_SHAPE)
    expect(await member.client.secondFactorStatus()).toEqual({ status: 'active', recovery_codes_remaining: 10 })
  })

  it('makes no codes when the code is refused, and takes no recovery code in place of a TOTP code', async () => {
    const member = await registered(server, 'confirm-refused')
    const authenticator = authenticatorFor(await member.client.startTotpEnrollment())
    for (const code of [wrongCode(authenticator, server.clock.now()), 'a7k2m-9xq4t']) {
      const refused = await problemOf(member.client.confirmTotpEnrollment(code))
      expect([refused.status, refused.code]).toEqual([422, 'error.totp.invalid_code'])
    }
    expect(await member.client.secondFactorStatus()).toEqual({ status: 'pending', recovery_codes_remaining: 0 })
    expect(await storedRows((await member.client.getProfile()).user_id)).toEqual([])
  })
})

describe('status', () => {
  it('says none, pending or active, with the recovery codes left', async () => {
    const member = await registered(server, 'status')
    expect(await member.client.secondFactorStatus()).toEqual({ status: 'none', recovery_codes_remaining: 0 })
    const authenticator = authenticatorFor(await member.client.startTotpEnrollment())
    expect(await member.client.secondFactorStatus()).toEqual({ status: 'pending', recovery_codes_remaining: 0 })
    const codes = await member.client.confirmTotpEnrollment(authenticator.codeAt(server.clock.now()))
    expect(await member.client.secondFactorStatus()).toEqual({ status: 'active', recovery_codes_remaining: 10 })
    await signInWith(member, codes[3]!)
    expect(await member.client.secondFactorStatus()).toEqual({ status: 'active', recovery_codes_remaining: 9 })
  })

  it('needs a bearer token', async () => {
    const response = await raw(server, 'GET', '/v1/auth/totp')
    expect([response.status, response.json?.code]).toEqual([401, 'error.auth.unauthenticated'])
  })
})

describe('sign-in with a recovery code', () => {
  it('opens a session in place of a TOTP code, typed in any case, with or without its hyphen, once only', async () => {
    const member = await enrolled('sign-in')
    const [first, second] = member.recoveryCodes as [string, string]
    const signedIn = await signInWith(member, `  ${first.replace('-', '').toUpperCase()} `)
    expect((await signedIn.getProfile()).email).toBe(member.email)
    expect((await member.client.secondFactorStatus()).recovery_codes_remaining).toBe(9)

    for (const spelling of [first, first.toUpperCase(), first.replace('-', '')])
      expect(await refusedSignIn(member, spelling)).toEqual([401, 'error.auth.invalid_code'])
    expect((await member.client.secondFactorStatus()).recovery_codes_remaining).toBe(9)
    await signInWith(member, second)
    expect((await member.client.secondFactorStatus()).recovery_codes_remaining).toBe(8)
    // The authenticator keeps working beside them.
    server.clock.advance(THIRTY_SECONDS)
    await signInWith(member, member.authenticator.codeAt(server.clock.now()))
  })

  it('refuses another account’s recovery code, and a made-up one', async () => {
    const member = await enrolled('sign-in-other')
    const other = await enrolled('sign-in-other-b')
    expect(await refusedSignIn(member, other.recoveryCodes[0]!)).toEqual([401, 'error.auth.invalid_code'])
    expect(await refusedSignIn(member, notOneOf(member.recoveryCodes))).toEqual([401, 'error.auth.invalid_code'])
    expect((await other.client.secondFactorStatus()).recovery_codes_remaining).toBe(10)
  })

  it('notes each use in the owner’s security log, with where it came from', async () => {
    const member = await enrolled('sign-in-log')
    const usedAt = server.clock.now()
    await signInWith(member, member.recoveryCodes[0]!)
    const events = (await member.client.listSecurityEvents()).events
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ kind: 'recovery_code_used', at: new Date(usedAt).toISOString(), ip_address: '127.0.0.1' })
    expect(events[0]?.until).toBeUndefined()
  })

  it('counts wrong recovery codes in the account’s code budget: once it is spent, even a right one is 429 and stays unused', async () => {
    const member = await enrolled('budget')
    const wrong = [
      notOneOf(member.recoveryCodes),
      'not a code at all',
      `${member.recoveryCodes[0]!}x`,
      member.recoveryCodes[0]!.replace(/.$/, (c) => (c === 'z' ? 'y' : 'z')),
    ]
    expect(wrong).toHaveLength(MAX_FAILURES)
    for (const code of wrong) expect(await refusedSignIn(member, code)).toEqual([401, 'error.auth.invalid_code'])
    const refused = await problemOf(server.client().verifyLogin(await challenge(member), member.recoveryCodes[0]!))
    expect([refused.status, refused.code]).toEqual([429, 'error.rate_limited'])
    expect(refused.retryAfterS).toBeGreaterThan(0)
    expect((await member.client.secondFactorStatus()).recovery_codes_remaining).toBe(10)
    expect((await member.client.listSecurityEvents()).events.map((event) => event.kind)).toEqual(['second_factor_lockout'])
    // The window ends: the code works, and was never used up.
    server.clock.advance(WINDOW_S * 1000)
    await signInWith(member, member.recoveryCodes[0]!)
    expect((await member.client.secondFactorStatus()).recovery_codes_remaining).toBe(9)
  })
})

describe('new recovery codes', () => {
  const regenerate = (member: Member, code: string) =>
    raw(server, 'POST', '/v1/auth/totp/recovery-codes', { headers: bearer(member), body: JSON.stringify({ totp_code: code }) })

  it('replace every earlier code: 200 with ten new ones; the old ones are refused, the new ones sign in', async () => {
    const member = await enrolled('regenerate')
    server.clock.advance(THIRTY_SECONDS)
    const response = await regenerate(member, member.authenticator.codeAt(server.clock.now()))
    expect(response.status).toBe(200)
    const fresh = response.json?.recovery_codes as string[]
    expect(fresh).toHaveLength(10)
    for (const code of fresh) expect(code).toMatch(CODE_SHAPE)
    expect(fresh.filter((code) => member.recoveryCodes.includes(code))).toEqual([])
    expect(await member.client.secondFactorStatus()).toEqual({ status: 'active', recovery_codes_remaining: 10 })
    for (const old of member.recoveryCodes.slice(0, 3)) expect(await refusedSignIn(member, old)).toEqual([401, 'error.auth.invalid_code'])
    await signInWith(member, fresh[0]!)
    expect((await member.client.secondFactorStatus()).recovery_codes_remaining).toBe(9)
  })

  it('take a recovery code as the proof, which is used up with the rest', async () => {
    const member = await enrolled('regenerate-recovery')
    const fresh = await member.client.regenerateRecoveryCodes(member.recoveryCodes[9]!)
    expect(fresh).toHaveLength(10)
    expect((await member.client.secondFactorStatus()).recovery_codes_remaining).toBe(10)
    expect(await refusedSignIn(member, member.recoveryCodes[9]!)).toEqual([401, 'error.auth.invalid_code'])
    expect((await member.client.listSecurityEvents()).events.map((event) => event.kind)).toEqual(['recovery_code_used'])
  })

  it('need a recent password proof: 403 when the sign-in is older than FRESHNESS_WINDOW_S, nothing spent or changed; reauthenticate, then it works', async () => {
    const member = await enrolled('regenerate-fresh')
    server.clock.advance((FRESHNESS_S + 1) * 1000)
    for (let i = 0; i < MAX_FAILURES + 1; i++) {
      const stale = await regenerate(member, member.authenticator.codeAt(server.clock.now()))
      expect([stale.status, stale.json?.code]).toEqual([403, 'error.auth.reauthentication_required'])
    }
    expect((await member.client.secondFactorStatus()).recovery_codes_remaining).toBe(10)
    await member.client.reauthenticate(PASSWORD)
    const fresh = await member.client.regenerateRecoveryCodes(member.authenticator.codeAt(server.clock.now()))
    expect(fresh.filter((code) => member.recoveryCodes.includes(code))).toEqual([])
    expect(await refusedSignIn(member, member.recoveryCodes[0]!)).toEqual([401, 'error.auth.invalid_code'])
  })

  it('answer 409 error.totp.not_enrolled without an active factor (none or pending)', async () => {
    const member = await registered(server, 'regenerate-none')
    const none = await regenerate(member, '123456')
    expect([none.status, none.json?.code]).toEqual([409, 'error.totp.not_enrolled'])
    const authenticator = authenticatorFor(await member.client.startTotpEnrollment())
    const pending = await regenerate(member, authenticator.codeAt(server.clock.now()))
    expect([pending.status, pending.json?.code]).toEqual([409, 'error.totp.not_enrolled'])
    expect(await member.client.secondFactorStatus()).toEqual({ status: 'pending', recovery_codes_remaining: 0 })
  })

  it('answer 422 error.totp.invalid_code to a wrong code and keep the codes; wrong codes count in the budget (429)', async () => {
    const member = await enrolled('regenerate-wrong')
    for (const code of [
      wrongCode(member.authenticator, server.clock.now()),
      notOneOf(member.recoveryCodes),
      member.authenticator.codeAt(server.clock.now()),
      'nonsense',
    ]) {
      // (The current TOTP code is spent: confirm used its step.)
      const refused = await regenerate(member, code)
      expect([refused.status, refused.json?.code], code).toEqual([422, 'error.totp.invalid_code'])
    }
    const spent = await regenerate(member, member.recoveryCodes[0]!)
    expect([spent.status, spent.json?.code]).toEqual([429, 'error.rate_limited'])
    expect(spent.headers.get('retry-after')).toMatch(/^[1-9]\d*$/)
    expect((await member.client.secondFactorStatus()).recovery_codes_remaining).toBe(10)
    server.clock.advance(WINDOW_S * 1000)
    await signInWith(member, member.recoveryCodes[0]!)
  })
})

describe('removing the factor removes its recovery codes', () => {
  it('disable takes a recovery code: 204, the factor and every code are gone, sign-in needs the password alone', async () => {
    const member = await enrolled('disable')
    await member.client.disableTotp(member.recoveryCodes[4]!.toUpperCase())
    expect(await member.client.secondFactorStatus()).toEqual({ status: 'none', recovery_codes_remaining: 0 })
    expect(await storedRows(member.userId)).toEqual([])
    expect((await server.client().login(member.email, PASSWORD)).kind).toBe('session')
    expect((await member.client.listSecurityEvents()).events.map((event) => event.kind)).toEqual(['recovery_code_used'])
  })

  it('disable with an authenticator code removes them too', async () => {
    const member = await enrolled('disable-totp')
    server.clock.advance(THIRTY_SECONDS)
    await member.client.disableTotp(member.authenticator.codeAt(server.clock.now()))
    expect(await member.client.secondFactorStatus()).toEqual({ status: 'none', recovery_codes_remaining: 0 })
    expect(await storedRows(member.userId)).toEqual([])
    expect((await member.client.listSecurityEvents()).events).toEqual([])
  })

  it('a used recovery code does not disable, and leaves the factor as it was', async () => {
    const member = await enrolled('disable-used')
    await signInWith(member, member.recoveryCodes[0]!)
    const refused = await problemOf(member.client.disableTotp(member.recoveryCodes[0]!))
    expect([refused.status, refused.code]).toEqual([422, 'error.totp.invalid_code'])
    expect(await member.client.secondFactorStatus()).toEqual({ status: 'active', recovery_codes_remaining: 9 })
  })

  it('an operator’s reset removes them with the factor; a new factor starts with none of the old codes', async () => {
    const member = await enrolled('reset')
    expect(await storedRows(member.userId)).toHaveLength(10)
    await new CofferAdmin({ baseUrl: server.url, adminToken: ADMIN_TOKEN }).resetSecondFactor(member.userId, 'lost phone, identity checked')
    expect(await storedRows(member.userId)).toEqual([])
    const client = server.client()
    const login = await client.login(member.email, PASSWORD)
    expect(login.kind).toBe('session')
    expect(await client.secondFactorStatus()).toEqual({ status: 'none', recovery_codes_remaining: 0 })

    const authenticator = authenticatorFor(await client.startTotpEnrollment())
    server.clock.advance(THIRTY_SECONDS) // the first factor's confirm spent this step
    const codes = await client.confirmTotpEnrollment(authenticator.codeAt(server.clock.now()))
    expect(codes.filter((code) => member.recoveryCodes.includes(code))).toEqual([])
    expect(await refusedSignIn(member, member.recoveryCodes[1]!)).toEqual([401, 'error.auth.invalid_code'])
    expect((await client.secondFactorStatus()).recovery_codes_remaining).toBe(10)
  })
})

describe('storage', () => {
  it('keeps only the HMAC-SHA-256 of each code under the key derived from SECRET_KEY, bound to the account, never the code', async () => {
    const member = await enrolled('storage')
    const rows = await storedRows(member.userId)
    const expected = member.recoveryCodes.map((code) =>
      createHmac('sha256', server.deps.recoveryCodeKey)
        .update(`${member.userId}\0${code.replace('-', '')}`)
        .digest('hex'),
    )
    expect(rows.map((row) => row.code_hash).sort()).toEqual([...expected].sort())
    const everyCell = JSON.stringify(await readRows(server.database, 'select * from recovery_codes')).toLowerCase()
    for (const code of member.recoveryCodes) {
      expect(everyCell).not.toContain(code)
      expect(everyCell).not.toContain(code.replace('-', ''))
    }
  })
})
