// Concurrent refreshes of one refresh token open exactly one successor: every answer carries
// the same pair and the account lists one live session for that lineage.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Devices, Tokens } from '../../src/sdk/client.ts'
import { raw, registered } from '../support/actors.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

function refreshRaw(refreshToken: string) {
  return raw(server, 'POST', '/v1/auth/refresh', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refresh_token: refreshToken }) })
}

async function race(refreshToken: string, width: number): Promise<Tokens[]> {
  const answers = await Promise.all(Array.from({ length: width }, () => refreshRaw(refreshToken)))
  for (const answer of answers) expect(answer.status, answer.text).toBe(200)
  return answers.map((a) => a.json as unknown as Tokens)
}

async function devices(accessToken: string): Promise<Devices> {
  const response = await raw(server, 'GET', '/v1/auth/sessions', { headers: { authorization: `Bearer ${accessToken}` } })
  expect(response.status, response.text).toBe(200)
  return response.json as unknown as Devices
}

describe.each([[2], [5]])('%i concurrent refreshes of one token', (width) => {
  it('open exactly one successor, and every answer carries it', async () => {
    for (let round = 0; round < 5; round++) {
      const member = await registered(server, `race${width}`)
      const original = member.client.tokens!
      const [opened] = (await devices(original.access_token)).sessions

      const answers = await race(original.refresh_token, width)
      const [first] = answers
      for (const answer of answers) expect(answer).toEqual(first)
      expect(first!.access_token).not.toBe(original.access_token)

      const listed = (await devices(first!.access_token)).sessions
      expect(listed).toHaveLength(1)
      expect(listed[0]?.current).toBe(true)
      expect(listed[0]?.session_id).not.toBe(opened!.session_id)
      expect((await raw(server, 'GET', '/v1/auth/sessions', { headers: { authorization: `Bearer ${original.access_token}` } })).status).toBe(401)
    }
  })

  it('keep the lineage going: the winner rotates again, and a race on that token opens one more', async () => {
    const member = await registered(server, `chain${width}`)
    let tokens = member.client.tokens!
    for (let step = 0; step < 3; step++) {
      const answers = await race(tokens.refresh_token, width)
      for (const answer of answers) expect(answer).toEqual(answers[0])
      tokens = answers[0]!
      expect((await devices(tokens.access_token)).sessions).toHaveLength(1)
    }
  })

  it('on several accounts at once, each gets exactly one successor', async () => {
    const members = await Promise.all(Array.from({ length: 4 }, (_, i) => registered(server, `many${width}-${i}`)))
    const results = await Promise.all(members.map((m) => race(m.client.tokens!.refresh_token, width)))
    for (const answers of results) {
      for (const answer of answers) expect(answer).toEqual(answers[0])
      expect((await devices(answers[0]!.access_token)).sessions).toHaveLength(1)
    }
  })
})
