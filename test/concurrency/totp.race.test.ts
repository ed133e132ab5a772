// Concurrent uses of one TOTP code, one recovery code, or of one challenge, succeed exactly once:
// the replay ledger, the recovery code and the challenge are claimed atomically, and a loser
// leaves nothing behind. Concurrent wrong codes never get more looked at than the challenge's
// cap or the account's budget allow.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CofferProblem } from '../../src/sdk/client.ts'
import { authenticatorFor, PASSWORD, registered, THIRTY_SECONDS, withSecondFactor, wrongCode, type Member } from '../support/actors.ts'
import { readRows } from '../support/database.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

const STEP = THIRTY_SECONDS
const ROUNDS = 5

async function challenge(member: Member): Promise<string> {
  const login = await server.client().login(member.email, PASSWORD)
  if (login.kind !== 'second_factor') throw new Error('expected 202 with a second-factor challenge')
  return login.challenge.mfa_token
}

/** Settles every promise; answers the successes and the problems of the failures. */
async function settle<T>(promises: Promise<T>[]): Promise<{ won: T[]; lost: CofferProblem[] }> {
  const results = await Promise.allSettled(promises)
  const won = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))
  const lost = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []))
  for (const reason of lost) expect(reason).toBeInstanceOf(CofferProblem)
  return { won, lost: lost as CofferProblem[] }
}

async function sessionCount(member: Member): Promise<number> {
  return (await member.client.listSessions()).sessions.length
}

describe('one code, two uses at once', () => {
  it('two sign-ins verified at once with the same code open exactly one session', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const member = await withSecondFactor(server, `race-login-${round}`)
      server.clock.advance(STEP)
      const code = member.authenticator.codeAt(server.clock.now())
      const [first, second] = await Promise.all([challenge(member), challenge(member)])
      const { won, lost } = await settle([first, second].map((token) => server.client().verifyLogin(token, code)))
      expect(won, `round ${round}`).toHaveLength(1)
      expect(lost.map((p) => [p.status, p.code])).toEqual([[401, 'error.auth.invalid_code']])
      expect(await sessionCount(member)).toBe(2) // registration + the one winner
    }
  })

  it('two disables at once with the same code: one 204, one refusal, and the factor is gone', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const member = await withSecondFactor(server, `race-disable-${round}`)
      server.clock.advance(STEP)
      const code = member.authenticator.codeAt(server.clock.now())
      const { won, lost } = await settle([member.client.disableTotp(code), member.client.disableTotp(code)])
      expect(won, `round ${round}`).toHaveLength(1)
      expect(lost).toHaveLength(1)
      // The loser either lost the ledger entry (422) or found the factor already gone (409).
      expect([
        ['error.totp.invalid_code', 422],
        ['error.totp.not_enrolled', 409],
      ]).toContainEqual([lost[0]?.code, lost[0]?.status])
      expect((await server.client().login(member.email, PASSWORD)).kind).toBe('session')
    }
  })

  it('two confirms at once with the same code: one 204, one refusal, and the factor is active', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const member = await registered(server, `race-confirm-${round}`)
      const authenticator = authenticatorFor(await member.client.startTotpEnrollment())
      const code = authenticator.codeAt(server.clock.now())
      const { won, lost } = await settle([member.client.confirmTotpEnrollment(code), member.client.confirmTotpEnrollment(code)])
      expect(won, `round ${round}`).toHaveLength(1)
      expect(lost).toHaveLength(1)
      expect([
        ['error.totp.invalid_code', 422],
        ['error.totp.nothing_pending', 409],
      ]).toContainEqual([lost[0]?.code, lost[0]?.status])
      expect((await server.client().login(member.email, PASSWORD)).kind).toBe('second_factor')
    }
  })
})

describe('recovery codes at once', () => {
  it('two sign-ins verified at once with the same recovery code open exactly one session and use the code once', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const member = await withSecondFactor(server, `race-recovery-${round}`)
      const code = member.recoveryCodes[0] ?? ''
      const [first, second] = await Promise.all([challenge(member), challenge(member)])
      const { won, lost } = await settle([first, second].map((token) => server.client().verifyLogin(token, code)))
      expect(won, `round ${round}`).toHaveLength(1)
      expect(lost.map((p) => [p.status, p.code])).toEqual([[401, 'error.auth.invalid_code']])
      expect(await sessionCount(member)).toBe(2) // registration + the one winner
      expect((await member.client.secondFactorStatus()).recovery_codes_remaining).toBe(9)
      expect((await member.client.listSecurityEvents()).events.map((event) => event.kind)).toEqual(['recovery_code_used'])
    }
  })

  it('a sign-in, a regeneration and a disable at once, each with its own recovery code, queue on the factor: no fault, and no code outlives it', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const member = await withSecondFactor(server, `race-recovery-mixed-${round}`)
      const [forSignIn = '', forRegenerate = '', forDisable = ''] = member.recoveryCodes
      const mfaToken = await challenge(member)
      const [signIn, regenerate, disable] = await Promise.allSettled([
        server.client().verifyLogin(mfaToken, forSignIn),
        member.client.regenerateRecoveryCodes(forRegenerate),
        member.client.disableTotp(forDisable),
      ])
      // Each either succeeds or finds its code gone (replaced by the regeneration, or removed with the factor).
      const refusal = (result: PromiseSettledResult<unknown>) => {
        if (result.status === 'fulfilled') return 'ok'
        expect(result.reason, `round ${round}`).toBeInstanceOf(CofferProblem)
        const problem = result.reason as CofferProblem
        return `${problem.status} ${problem.code}`
      }
      expect(['ok', '401 error.auth.invalid_code'], `round ${round}`).toContain(refusal(signIn))
      expect(['ok', '422 error.totp.invalid_code', '409 error.totp.not_enrolled'], `round ${round}`).toContain(refusal(regenerate))
      expect(['ok', '422 error.totp.invalid_code'], `round ${round}`).toContain(refusal(disable))
      // The disable fails only when the regeneration replaced its code first; then ten new codes stand.
      expect(regenerate.status === 'fulfilled' || disable.status === 'fulfilled', `round ${round}`).toBe(true)
      const { user_id: userId } = await member.client.getProfile()
      const rows = await readRows(server.database, 'select user_id from recovery_codes')
      const stored = rows.filter((row) => row.user_id === userId).length
      const status = await member.client.secondFactorStatus()
      expect(status, `round ${round}`).toEqual(
        disable.status === 'fulfilled' ? { status: 'none', recovery_codes_remaining: 0 } : { status: 'active', recovery_codes_remaining: 10 },
      )
      expect(stored).toBe(status.recovery_codes_remaining)
    }
  })
})

describe('one challenge, two codes at once', () => {
  it('verifying one mfa_token with the current and the previous step at once opens exactly one session', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const member = await withSecondFactor(server, `race-token-${round}`)
      server.clock.advance(2 * STEP) // the previous step is unspent too
      const codes = [member.authenticator.codeAt(server.clock.now()), member.authenticator.codeAt(server.clock.now() - STEP)]
      const mfaToken = await challenge(member)
      const results = await Promise.allSettled(codes.map((code) => server.client().verifyLogin(mfaToken, code)))
      const winners = results.filter((r) => r.status === 'fulfilled')
      expect(winners, `round ${round}`).toHaveLength(1)
      const loserIndex = results.findIndex((r) => r.status === 'rejected')
      const loser = results[loserIndex]
      const problem = loser?.status === 'rejected' ? (loser.reason as CofferProblem) : undefined
      expect(problem).toBeInstanceOf(CofferProblem)
      expect([problem?.status, problem?.code]).toEqual([401, 'error.auth.challenge_expired'])
      expect(await sessionCount(member)).toBe(2)
      // The loser's step was rolled back with its failed attempt: it completes a new sign-in.
      await server.client().verifyLogin(await challenge(member), codes[loserIndex] ?? '')
      expect(await sessionCount(member)).toBe(3)
    }
  })
})

describe('wrong codes at once', () => {
  it('cannot get past VERIFY_MAX_ATTEMPTS: four 401 invalid_code, one 429, the rest find the challenge burned', async () => {
    const member = await withSecondFactor(server, 'race-cap')
    server.clock.advance(STEP)
    const accepted = [-1, 0, 1].map((d) => member.authenticator.codeAt(server.clock.now() + d * STEP))
    const wrong: string[] = []
    for (let n = 0; wrong.length < 8; n++) {
      const candidate = String(n).padStart(6, '0')
      if (!accepted.includes(candidate)) wrong.push(candidate)
    }
    const mfaToken = await challenge(member)
    const { won, lost } = await settle(wrong.map((code) => server.client().verifyLogin(mfaToken, code)))
    expect(won).toHaveLength(0)
    const tally = (code: string, status: number) => lost.filter((p) => p.code === code && p.status === status).length
    expect(tally('error.auth.invalid_code', 401)).toBe(4)
    expect(tally('error.rate_limited', 429)).toBe(1)
    expect(tally('error.auth.challenge_expired', 401)).toBe(3)
    const burned = await settle([server.client().verifyLogin(mfaToken, member.authenticator.codeAt(server.clock.now()))])
    expect(burned.lost.map((p) => p.code)).toEqual(['error.auth.challenge_expired'])
    expect(await sessionCount(member)).toBe(1)
  })
})

describe('wrong codes at once across challenges and operations', () => {
  it('cannot get past TOTP_MAX_FAILURES for the account: that many refused as wrong, every other one 429 with Retry-After', async () => {
    const maxFailures = server.deps.config.secondFactor.maxFailures
    const member = await withSecondFactor(server, 'race-budget')
    server.clock.advance(STEP)
    const wrong = wrongCode(member.authenticator, server.clock.now())
    // One after another: 14 password checks in flight at once would meet LOCKOUT_THRESHOLD (10),
    // which counts a check before its hash runs; this test is about the code budget.
    const challenges: string[] = []
    for (let n = 0; n < 14; n++) challenges.push(await challenge(member))
    const { won, lost } = await settle<unknown>([
      ...challenges.map((mfaToken) => server.client().verifyLogin(mfaToken, wrong)),
      ...Array.from({ length: 6 }, () => member.client.disableTotp(wrong)),
    ])
    expect(won).toHaveLength(0)
    const lookedAt = lost.filter((p) => p.code === 'error.auth.invalid_code' || p.code === 'error.totp.invalid_code')
    const refused = lost.filter((p) => p.code === 'error.rate_limited')
    expect(lookedAt).toHaveLength(maxFailures)
    expect(refused).toHaveLength(20 - maxFailures)
    for (const problem of refused) expect(problem.retryAfterS).toBeGreaterThan(0)
    // The right code is refused too until the window ends, and the factor is still on.
    const right = await settle([member.client.disableTotp(member.authenticator.codeAt(server.clock.now()))])
    expect(right.lost.map((p) => p.code)).toEqual(['error.rate_limited'])
    expect((await server.client().login(member.email, PASSWORD)).kind).toBe('second_factor')
  })
})

describe('enrollment restarted while a confirm is in flight', () => {
  it('never activates a secret the confirming code did not come from', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const member = await registered(server, `race-restart-${round}`)
      const first = authenticatorFor(await member.client.startTotpEnrollment())
      const code = first.codeAt(server.clock.now())
      const [confirm, restart] = await Promise.allSettled([member.client.confirmTotpEnrollment(code), member.client.startTotpEnrollment()])
      // Both cannot succeed: either the confirm won (and the restart found the factor active),
      // or the restart replaced the secret (and the confirm's code no longer fits it).
      expect(confirm.status === 'fulfilled' && restart.status === 'fulfilled', `round ${round}`).toBe(false)
      if (confirm.status === 'fulfilled') {
        expect(restart.status === 'rejected' && (restart.reason as CofferProblem).code).toBe('error.totp.already_active')
        // Active with the first secret: the user's authenticator signs in.
        server.clock.advance(STEP)
        const mfaToken = await challenge(member)
        await server.client().verifyLogin(mfaToken, first.codeAt(server.clock.now()))
      } else {
        expect((confirm.reason as CofferProblem).code).toBe('error.totp.invalid_code')
        expect(restart.status).toBe('fulfilled')
        expect((await server.client().login(member.email, PASSWORD)).kind).toBe('session')
        // Still pending with the second secret, and the first secret's step was not spent.
        const second = authenticatorFor(restart.status === 'fulfilled' ? restart.value : '')
        await member.client.confirmTotpEnrollment(second.codeAt(server.clock.now()))
        expect((await server.client().login(member.email, PASSWORD)).kind).toBe('second_factor')
      }
    }
  })
})
