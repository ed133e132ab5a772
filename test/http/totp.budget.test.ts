// An account's wrong second-factor codes are budgeted across challenges and operations: once
// TOTP_MAX_FAILURES are counted in a window, every operation that takes a code (verify login,
// confirm, disable) answers 429 with Retry-After until the window ends, the right code included,
// and the owner finds the event in the security log.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { CofferClient } from '../../src/sdk/client.ts'
import {
  authenticatorFor,
  PASSWORD,
  problemOf,
  registered,
  THIRTY_SECONDS,
  withSecondFactor,
  wrongCode,
  type Authenticator,
  type Member,
} from '../support/actors.ts'
import { startServer, type TestServer } from '../support/server.ts'

const MAX_FAILURES = 3
const WINDOW_S = 600

let server: TestServer
beforeAll(async () => {
  server = await startServer({ TOTP_MAX_FAILURES: String(MAX_FAILURES), TOTP_FAILURE_WINDOW_S: String(WINDOW_S) })
})
afterAll(() => server.close())

type SecondFactorMember = Member & { authenticator: Authenticator }

async function challenge(member: Member): Promise<string> {
  const login = await server.client().login(member.email, PASSWORD)
  if (login.kind !== 'second_factor') throw new Error('expected a second-factor challenge')
  return login.challenge.mfa_token
}

/** A wrong code sent on a fresh challenge each time: the per-challenge cap never comes into play. */
async function wrongOnFreshChallenge(member: SecondFactorMember): Promise<void> {
  const refused = await problemOf(server.client().verifyLogin(await challenge(member), wrongCode(member.authenticator, server.clock.now())))
  expect([refused.status, refused.code]).toEqual([401, 'error.auth.invalid_code'])
}

/** A code not used before: the next step's (accepted one step either side). */
function unusedCode(member: SecondFactorMember): string {
  server.clock.advance(THIRTY_SECONDS)
  return member.authenticator.codeAt(server.clock.now())
}

async function expectBudgetSpent(call: Promise<unknown>, retryAfterS: number): Promise<void> {
  const refused = await problemOf(call)
  expect([refused.status, refused.code]).toEqual([429, 'error.rate_limited'])
  expect(refused.retryAfterS).toBe(retryAfterS)
}

describe('second-factor code budget', () => {
  it('spans fresh challenges: after the budget, even the right code on a new challenge is 429 until the window ends', async () => {
    const member = await withSecondFactor(server, 'budget-verify')
    const windowStart = server.clock.now()
    for (let i = 0; i < MAX_FAILURES; i++) await wrongOnFreshChallenge(member)
    const fresh = await challenge(member)
    await expectBudgetSpent(server.client().verifyLogin(fresh, member.authenticator.codeAt(server.clock.now())), WINDOW_S)

    // (unusedCode moves the clock one step on.)
    server.clock.set(windowStart + WINDOW_S * 1000 - THIRTY_SECONDS - 1_000)
    await expectBudgetSpent(server.client().verifyLogin(await challenge(member), unusedCode(member)), 1)
    server.clock.set(windowStart + WINDOW_S * 1000 - THIRTY_SECONDS)
    const tokens = await server.client().verifyLogin(await challenge(member), unusedCode(member))
    expect(tokens.token_type).toBe('Bearer')
  })

  it('covers disable: a stolen access token cannot guess its way to turning the factor off', async () => {
    const member = await withSecondFactor(server, 'budget-disable')
    for (let i = 0; i < MAX_FAILURES; i++) {
      const refused = await problemOf(member.client.disableTotp(wrongCode(member.authenticator, server.clock.now())))
      expect([refused.status, refused.code]).toEqual([422, 'error.totp.invalid_code'])
    }
    await expectBudgetSpent(member.client.disableTotp(unusedCode(member)), WINDOW_S - 30)
    // Sign-in is refused codes too: one budget for the account.
    await expectBudgetSpent(server.client().verifyLogin(await challenge(member), unusedCode(member)), WINDOW_S - 60)
    // And the factor is still there.
    expect((await server.client().login(member.email, PASSWORD)).kind).toBe('second_factor')
  })

  it('covers confirm, and counts wrong codes of every operation together', async () => {
    const member = await registered(server, 'budget-confirm')
    const authenticator = authenticatorFor(await member.client.startTotpEnrollment())
    const withFactor = { ...member, authenticator }
    await expect(member.client.confirmTotpEnrollment(wrongCode(authenticator, server.clock.now()))).rejects.toMatchObject({ status: 422 })
    await member.client.confirmTotpEnrollment(authenticator.codeAt(server.clock.now()))
    await wrongOnFreshChallenge(withFactor)
    await expect(member.client.disableTotp(wrongCode(authenticator, server.clock.now()))).rejects.toMatchObject({ status: 422 })
    await expectBudgetSpent(member.client.disableTotp(unusedCode(withFactor)), WINDOW_S - 30)
  })

  it('uncounts a right code only for itself: the wrong ones around it still spend the budget', async () => {
    const member = await withSecondFactor(server, 'budget-mixed')
    await wrongOnFreshChallenge(member)
    expect((await server.client().verifyLogin(await challenge(member), unusedCode(member))).token_type).toBe('Bearer')
    for (let i = 1; i < MAX_FAILURES; i++) await wrongOnFreshChallenge(member)
    await expectBudgetSpent(server.client().verifyLogin(await challenge(member), unusedCode(member)), WINDOW_S - 60)
  })

  it("is per account: another account's codes are unaffected", async () => {
    const spent = await withSecondFactor(server, 'budget-spent')
    const other = await withSecondFactor(server, 'budget-other')
    for (let i = 0; i < MAX_FAILURES; i++) await wrongOnFreshChallenge(spent)
    expect((await server.client().verifyLogin(await challenge(other), unusedCode(other))).token_type).toBe('Bearer')
  })

  it("notes a spent budget once in the owner's security log, with the request that spent it", async () => {
    const member = await withSecondFactor(server, 'budget-log')
    const owner: CofferClient = member.client
    for (let i = 0; i < MAX_FAILURES - 1; i++) await wrongOnFreshChallenge(member)
    expect((await owner.listSecurityEvents()).events).toEqual([])
    const spentAt = server.clock.now()
    await wrongOnFreshChallenge(member)
    await expectBudgetSpent(server.client().verifyLogin(await challenge(member), unusedCode(member)), WINDOW_S - 30)
    const events = (await owner.listSecurityEvents()).events
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ kind: 'second_factor_lockout', at: new Date(spentAt).toISOString(), ip_address: '127.0.0.1' })
    expect(Date.parse(events[0]!.until!)).toBeGreaterThan(spentAt)
  })
})
