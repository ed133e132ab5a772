// No burst of password checks gets more than LOCKOUT_THRESHOLD hashes per lock, whatever the
// concurrency, the operation (login, reauthenticate), whether the email has an account, and on
// two instances sharing one database: each check is counted before its hash runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PASSWORD, raw, registered, uniqueEmail } from '../support/actors.ts'
import { testEngine } from '../support/database.ts'
import { startInstances, startServer, type Instances, type TestServer } from '../support/server.ts'

const THRESHOLD = 10
const BURST = 25
const WRONG = 'not the password'
const env = { LOCKOUT_THRESHOLD: String(THRESHOLD), LOCKOUT_DURATION_S: '900' }
const json = { 'content-type': 'application/json' }

/** Password hashes verified by these instances so far (their /metrics counters). */
async function verifications(servers: readonly TestServer[]): Promise<number> {
  let total = 0
  for (const server of servers) {
    const metrics = (await raw(server, 'GET', '/metrics')).text
    const line = metrics.split('\n').find((l) => l.startsWith('coffer_password_verifications_total '))
    expect(line, 'coffer_password_verifications_total is exported').toBeDefined()
    total += Number(line!.split(' ')[1])
  }
  return total
}

function login(server: TestServer, email: string, password: string) {
  return raw(server, 'POST', '/v1/auth/login', { headers: json, body: JSON.stringify({ email, password }) })
}

function reauthenticate(server: TestServer, accessToken: string, password: string) {
  return raw(server, 'POST', '/v1/auth/reauthenticate', { headers: { ...json, authorization: `Bearer ${accessToken}` }, body: JSON.stringify({ password }) })
}

type Answer = Awaited<ReturnType<typeof raw>>

/** Statuses of a burst, counted: { 401: n, 423: m, ... }. */
function tally(answers: readonly Answer[]): Record<number, number> {
  const counts: Record<number, number> = {}
  for (const answer of answers) counts[answer.status] = (counts[answer.status] ?? 0) + 1
  return counts
}

/** Runs `burst` and checks that exactly THRESHOLD of its checks were hashed and the rest refused unhashed. */
async function expectThresholdHashed(servers: readonly TestServer[], burst: () => Promise<Answer[]>): Promise<Answer[]> {
  const before = await verifications(servers)
  const answers = await burst()
  expect((await verifications(servers)) - before).toBe(THRESHOLD)
  for (const answer of answers.filter((a) => a.status === 423)) {
    expect(answer.json?.code).toBe('error.auth.account_locked')
    expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0)
  }
  return answers
}

describe('password checks racing, one instance', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer(env)
  })
  afterAll(() => server.close())

  it(`${BURST} wrong logins at once: ${THRESHOLD} hashed and answered 401, the rest 423; then the right password is 423`, async () => {
    const member = await registered(server, 'burst')
    const answers = await expectThresholdHashed([server], () => Promise.all(Array.from({ length: BURST }, () => login(server, member.email, WRONG))))
    expect(tally(answers)).toEqual({ 401: THRESHOLD, 423: BURST - THRESHOLD })
    expect((await login(server, member.email, PASSWORD)).status).toBe(423)
  })

  it('15 wrong logins and the right one at once: the right one signs in only as one of the first checks counted', async () => {
    const member = await registered(server, 'mixed')
    const right = 7 // its place in the burst
    const before = await verifications([server])
    const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => login(server, member.email, i === right ? PASSWORD : WRONG)))
    const hashed = (await verifications([server])) - before
    const counts = tally(answers)
    if (answers[right]!.status === 200) {
      // Serialized, the right password came before the threshold-th wrong one: it cleared the
      // count, checks counted after it start again from 0, and nothing locked.
      expect(counts).toEqual({ 200: 1, 401: hashed - 1, ...(hashed < 16 ? { 423: 16 - hashed } : {}) })
      expect((await login(server, member.email, PASSWORD)).status).toBe(200)
    } else {
      expect(answers[right]!.status).toBe(423)
      expect(hashed).toBe(THRESHOLD)
      expect(counts).toEqual({ 401: THRESHOLD, 423: 16 - THRESHOLD })
      expect((await login(server, member.email, PASSWORD)).status).toBe(423)
    }
  })

  it(`${BURST} wrong reauthentications at once: ${THRESHOLD} hashed, the rest 423, and sign-in is locked`, async () => {
    const member = await registered(server, 'reauth-burst')
    const access = member.client.tokens!.access_token
    const answers = await expectThresholdHashed([server], () => Promise.all(Array.from({ length: BURST }, () => reauthenticate(server, access, WRONG))))
    expect(tally(answers)).toEqual({ 401: THRESHOLD, 423: BURST - THRESHOLD })
    expect((await login(server, member.email, PASSWORD)).status).toBe(423)
  })

  it(`${BURST} logins at once for an unknown email: answered exactly as for an account, ${THRESHOLD} hashed, the rest 423`, async () => {
    const email = uniqueEmail('nobody-burst')
    const answers = await expectThresholdHashed([server], () => Promise.all(Array.from({ length: BURST }, () => login(server, email, WRONG))))
    expect(tally(answers)).toEqual({ 401: THRESHOLD, 423: BURST - THRESHOLD })
    expect((await login(server, email, WRONG)).status).toBe(423)
  })
})

// SQLite is for one instance (README, "PostgreSQL and several instances").
if (testEngine === 'postgres')
  describe('password checks racing on two instances sharing one database', () => {
    let pair: Instances
    beforeAll(async () => {
      pair = await startInstances(2, env)
    })
    afterAll(() => pair.close())

    it(`${BURST} wrong logins split across both: ${THRESHOLD} hashed in all, the rest 423 on either`, async () => {
      const [a, b] = pair.instances as [TestServer, TestServer]
      const member = await registered(a, 'pair-burst')
      const answers = await expectThresholdHashed(pair.instances, () =>
        Promise.all(Array.from({ length: BURST }, (_, i) => login(i % 2 === 0 ? a : b, member.email, WRONG))),
      )
      expect(tally(answers)).toEqual({ 401: THRESHOLD, 423: BURST - THRESHOLD })
      expect((await login(b, member.email, PASSWORD)).status).toBe(423)
      expect((await login(a, member.email, PASSWORD)).status).toBe(423)
    })
  })
