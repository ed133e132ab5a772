// No token, password, TOTP secret, TOTP code or recovery code ever appears in a log line, at the
// most verbose level, whatever the request did, succeeded or failed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { authenticatorFor, raw, uniqueEmail } from '../support/actors.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

describe('log lines', () => {
  it('carry none of the secrets a full account life handles', async () => {
    const secrets: string[] = []
    const keep = <T extends string>(value: T): T => {
      secrets.push(value)
      return value
    }
    const email = uniqueEmail('logs')
    const password = keep('Pa55word-that-must-not-be-logged')
    const newPassword = keep('An0ther-secret-password')
    const client = server.client()

    const registered = await client.register(email, password)
    keep(registered.access_token)
    keep(registered.refresh_token)
    // A wrong password, a malformed body quoting the password, and a bad bearer token.
    await raw(server, 'POST', '/v1/auth/login', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: keep('wrong-password-guess') }),
    })
    await raw(server, 'POST', '/v1/auth/login', { headers: { 'content-type': 'application/json' }, body: `{"email":"${email}","password":"${password}" oops}` })
    await raw(server, 'GET', '/v1/profile', { headers: { authorization: `Bearer ${keep('coffer_at_forgedforgedforgedforged')}` } })

    const uri = keep(await client.startTotpEnrollment())
    const authenticator = authenticatorFor(uri)
    keep(authenticator.secret.base32)
    const confirmCode = keep(authenticator.codeAt(server.clock.now()))
    /** Recovery codes, in both spellings a person may type them. */
    const keepRecoveryCodes = (codes: string[]): string[] => {
      for (const code of codes) keep(code.replace('-', ''))
      return codes.map(keep)
    }
    const recoveryCodes = keepRecoveryCodes(await client.confirmTotpEnrollment(confirmCode))

    server.clock.advance(60_000)
    const login = await server.client().login(email, password, { cohort_hash: 'cohort-1' })
    if (login.kind !== 'second_factor') throw new Error('expected a second-factor challenge')
    keep(login.challenge.mfa_token)
    await raw(server, 'POST', '/v1/auth/login/verify', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        mfa_token: login.challenge.mfa_token,
        totp_code: keep(authenticator.codeAt(server.clock.now() - 30_000).replace(/^./, (d) => String((Number(d) + 1) % 10))),
      }),
    })
    const second = server.client()
    const verified = await second.verifyLogin(login.challenge.mfa_token, keep(authenticator.codeAt(server.clock.now())))
    keep(verified.access_token)
    keep(verified.refresh_token)

    // A sign-in with a recovery code, the same code again (refused), and new codes made with another.
    for (const expected of [200, 401]) {
      const challenge = await server.client().login(email, password)
      if (challenge.kind !== 'second_factor') throw new Error('expected a second-factor challenge')
      const answer = await raw(server, 'POST', '/v1/auth/login/verify', {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ mfa_token: keep(challenge.challenge.mfa_token), totp_code: recoveryCodes[0] }),
      })
      expect(answer.status).toBe(expected)
      if (answer.status === 200) for (const token of [answer.json?.access_token, answer.json?.refresh_token]) keep(String(token))
    }
    keepRecoveryCodes(await second.regenerateRecoveryCodes(recoveryCodes[1] ?? ''))

    await second.refresh()
    keep(second.tokens?.access_token ?? '')
    keep(second.tokens?.refresh_token ?? '')
    await raw(server, 'POST', '/v1/auth/refresh', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ refresh_token: verified.refresh_token }),
    })
    await client.reauthenticate(password)
    await client.changePassword(password, newPassword)
    await client.logout()

    expect(server.logs.length).toBeGreaterThan(20)
    const leaks = secrets.filter((secret) => secret.length >= 6 && server.logs.some((line) => line.includes(secret)))
    expect(leaks).toEqual([])
    // Codes are six digits: look for them as JSON values, not inside timestamps.
    const codes = secrets.filter((secret) => /^\d{6}$/.test(secret))
    expect(codes.length).toBeGreaterThan(0)
    for (const code of codes) expect(server.logs.filter((line) => line.includes(`"${code}"`))).toEqual([])
  })
})
