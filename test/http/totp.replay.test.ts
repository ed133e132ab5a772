// Each TOTP step of an account is usable once across confirm, disable and verify login (the
// replay ledger), and only an operation that succeeds spends its step.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { authenticatorFor, type Member, PASSWORD, problemOf, registered, THIRTY_SECONDS, withSecondFactor } from '../support/actors.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

const STEP = THIRTY_SECONDS

async function challenge(member: Member): Promise<string> {
  const login = await server.client().login(member.email, PASSWORD)
  if (login.kind !== 'second_factor') throw new Error('expected 202 with a second-factor challenge')
  return login.challenge.mfa_token
}

async function sessionCount(member: Member): Promise<number> {
  return (await member.client.listSessions()).sessions.length
}

describe('the replay ledger', () => {
  it('keeps the confirming code from completing a later sign-in', async () => {
    const member = await registered(server, 'confirm-then-login')
    const authenticator = authenticatorFor(await member.client.startTotpEnrollment())
    const confirming = authenticator.codeAt(server.clock.now())
    await member.client.confirmTotpEnrollment(confirming)

    const mfaToken = await challenge(member)
    const replayed = await problemOf(server.client().verifyLogin(mfaToken, confirming))
    expect(replayed.status).toBe(401)
    expect(replayed.code).toBe('error.auth.invalid_code')
    expect(await sessionCount(member)).toBe(1)

    // The challenge is still good; the next step's code completes it.
    server.clock.advance(STEP)
    await server.client().verifyLogin(mfaToken, authenticator.codeAt(server.clock.now()))
    expect(await sessionCount(member)).toBe(2)
  })

  it('keeps the confirming step spent even when its code is presented one step later', async () => {
    const member = await withSecondFactor(server, 'confirm-then-late-login')
    const confirming = member.authenticator.codeAt(server.clock.now())
    server.clock.advance(STEP) // the confirming step is now "one step behind", inside the window
    const replayed = await problemOf(server.client().verifyLogin(await challenge(member), confirming))
    expect(replayed.code).toBe('error.auth.invalid_code')
  })

  it('keeps the confirming code from disabling', async () => {
    const member = await withSecondFactor(server, 'confirm-then-disable')
    const refused = await problemOf(member.client.disableTotp(member.authenticator.codeAt(server.clock.now())))
    expect(refused.status).toBe(422)
    expect(refused.code).toBe('error.totp.invalid_code')
    expect((await server.client().login(member.email, PASSWORD)).kind).toBe('second_factor')
  })

  it('keeps a code that completed a sign-in from completing a second one, from any client', async () => {
    const member = await withSecondFactor(server, 'login-twice')
    server.clock.advance(STEP)
    const used = member.authenticator.codeAt(server.clock.now())
    const first = await challenge(member)
    const second = await challenge(member)
    await server.client().verifyLogin(first, used)
    const replayed = await problemOf(server.client().verifyLogin(second, used))
    expect(replayed.status).toBe(401)
    expect(replayed.code).toBe('error.auth.invalid_code')
    expect(await sessionCount(member)).toBe(2)
    // Still at the same instant, the second challenge takes the next step's code.
    await server.client().verifyLogin(second, member.authenticator.codeAt(server.clock.now() + STEP))
    expect(await sessionCount(member)).toBe(3)
  })

  it('keeps a code that completed a sign-in from disabling', async () => {
    const member = await withSecondFactor(server, 'login-then-disable')
    server.clock.advance(STEP)
    const used = member.authenticator.codeAt(server.clock.now())
    await server.client().verifyLogin(await challenge(member), used)
    const refused = await problemOf(member.client.disableTotp(used))
    expect(refused.status).toBe(422)
    expect(refused.code).toBe('error.totp.invalid_code')
    expect((await server.client().login(member.email, PASSWORD)).kind).toBe('second_factor')
    server.clock.advance(STEP)
    await member.client.disableTotp(member.authenticator.codeAt(server.clock.now()))
    expect((await server.client().login(member.email, PASSWORD)).kind).toBe('session')
  })

  it('keeps the step a disable used from completing a later sign-in, under a new secret too', async () => {
    const member = await withSecondFactor(server, 'disable-then-login')
    server.clock.advance(STEP)
    const disabledAt = server.clock.now()
    await member.client.disableTotp(member.authenticator.codeAt(disabledAt))

    // Enrol again at the same instant, confirm with the next step's code.
    const fresh = authenticatorFor(await member.client.startTotpEnrollment())
    server.clock.advance(STEP)
    await member.client.confirmTotpEnrollment(fresh.codeAt(server.clock.now()))

    // Now the window holds the disable's step (one behind), the confirm's (current) and the next.
    const mfaToken = await challenge(member)
    const disableStep = await problemOf(server.client().verifyLogin(mfaToken, fresh.codeAt(disabledAt)))
    expect(disableStep.status).toBe(401)
    expect(disableStep.code).toBe('error.auth.invalid_code')
    const confirmStep = await problemOf(server.client().verifyLogin(mfaToken, fresh.codeAt(server.clock.now())))
    expect(confirmStep.code).toBe('error.auth.invalid_code')
    await server.client().verifyLogin(mfaToken, fresh.codeAt(server.clock.now() + STEP))
    expect(await sessionCount(member)).toBe(2)
  })

  it('counts a replayed code as a wrong attempt toward VERIFY_MAX_ATTEMPTS', async () => {
    const member = await withSecondFactor(server, 'replay-counts')
    const confirming = member.authenticator.codeAt(server.clock.now())
    const mfaToken = await challenge(member)
    for (let attempt = 1; attempt <= 4; attempt++) {
      expect((await problemOf(server.client().verifyLogin(mfaToken, confirming))).code).toBe('error.auth.invalid_code')
    }
    const limited = await problemOf(server.client().verifyLogin(mfaToken, confirming))
    expect(limited.status).toBe(429)
    expect(limited.code).toBe('error.rate_limited')
  })
})

describe('a refused operation spends nothing', () => {
  it('a disable refused while pending leaves its code usable to confirm', async () => {
    const member = await registered(server, 'pending-disable')
    const authenticator = authenticatorFor(await member.client.startTotpEnrollment())
    const live = authenticator.codeAt(server.clock.now())
    expect((await problemOf(member.client.disableTotp(live))).code).toBe('error.totp.not_enrolled')
    await member.client.confirmTotpEnrollment(live)
    expect((await server.client().login(member.email, PASSWORD)).kind).toBe('second_factor')
  })

  it('a confirm refused while active leaves its code usable to sign in', async () => {
    const member = await withSecondFactor(server, 'active-confirm')
    server.clock.advance(STEP)
    const live = member.authenticator.codeAt(server.clock.now())
    expect((await problemOf(member.client.confirmTotpEnrollment(live))).code).toBe('error.totp.nothing_pending')
    await server.client().verifyLogin(await challenge(member), live)
    expect(await sessionCount(member)).toBe(2)
  })
})
