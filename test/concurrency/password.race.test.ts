// A password change leaves no other session alive, even when other sessions of the account
// refresh, or sign in with the old password, at the same moment.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CofferClient, type Tokens } from '../../src/sdk/client.ts'
import { PASSWORD, raw, uniqueEmail } from '../support/actors.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

const NEW_PASSWORD = 'the password after the change'
const ROUNDS = 50
/** Racers per round: each is one more chance to land inside the change's window. */
const RACERS = 4
const json = { 'content-type': 'application/json' }

function clientFor(): CofferClient {
  return new CofferClient({ baseUrl: server.url, now: server.clock.now })
}

function later<T>(ms: number, work: () => Promise<T>): Promise<T> {
  return new Promise((resolve, reject) => setTimeout(() => work().then(resolve, reject), ms))
}

async function accessWorks(accessToken: string): Promise<boolean> {
  return (await raw(server, 'GET', '/v1/auth/sessions', { headers: { authorization: `Bearer ${accessToken}` } })).status === 200
}

describe('change password racing', () => {
  it('refreshes of other sessions: neither those sessions nor their successors survive', async () => {
    const survivors: string[] = []
    for (let round = 0; round < ROUNDS; round++) {
      const email = uniqueEmail('pw-refresh')
      const caller = clientFor()
      await caller.register(email, PASSWORD)
      const others: Tokens[] = []
      for (let i = 0; i < RACERS; i++) {
        const other = clientFor()
        await other.login(email, PASSWORD)
        others.push(other.tokens as Tokens)
      }

      const [, ...refreshes] = await Promise.all([
        caller.changePassword(PASSWORD, NEW_PASSWORD),
        ...others.map((tokens, i) =>
          later(i, () => raw(server, 'POST', '/v1/auth/refresh', { headers: json, body: JSON.stringify({ refresh_token: tokens.refresh_token }) })),
        ),
      ])
      // A refresh may win or lose the race; either way nothing of its lineage may remain.
      for (const refreshed of refreshes) {
        if (refreshed.status === 200 && (await accessWorks((refreshed.json as unknown as Tokens).access_token)))
          survivors.push(`round ${round}: a successor works`)
        else if (refreshed.status !== 200) expect(refreshed.json?.code).toBe('error.auth.session_expired')
      }
      const listed = (await caller.listSessions()).sessions
      if (listed.length !== 1) survivors.push(`round ${round}: ${listed.length} sessions listed`)
    }
    expect(survivors).toEqual([])
  })

  it('sign-ins with the old password: none of their sessions survives', async () => {
    const survivors: string[] = []
    for (let round = 0; round < ROUNDS; round++) {
      const email = uniqueEmail('pw-login')
      const caller = clientFor()
      await caller.register(email, PASSWORD)
      const [, ...logins] = await Promise.all([
        caller.changePassword(PASSWORD, NEW_PASSWORD),
        // Staggered by a millisecond each, so that some land after the old hash was read.
        ...Array.from({ length: RACERS }, (_, i) =>
          later(i, () => raw(server, 'POST', '/v1/auth/login', { headers: json, body: JSON.stringify({ email, password: PASSWORD }) })),
        ),
      ])
      for (const login of logins) {
        if (login.status === 200 && (await accessWorks((login.json as unknown as Tokens).access_token))) survivors.push(`round ${round}: a sign-in works`)
        else if (login.status !== 200) expect(login.json?.code).toBe('error.auth.invalid_credentials')
      }
      const listed = (await caller.listSessions()).sessions
      if (listed.length !== 1) survivors.push(`round ${round}: ${listed.length} sessions listed`)
    }
    expect(survivors).toEqual([])
  })
})
