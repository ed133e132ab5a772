// A login with an unknown email is indistinguishable from one with a wrong password: the same
// answer byte for byte (apart from per-response headers), exactly one argon2 verification and
// one counting write to the database each (the work that sets their timing), and the same lock
// after the same number of failures.
import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sweepExpired } from '../../src/features/maintenance/sweep.service.ts'
import { PASSWORD, raw, registered, uniqueEmail } from '../support/actors.ts'
import { readRows } from '../support/database.ts'
import { startServer, type TestServer } from '../support/server.ts'

const THRESHOLD = 4
const DURATION_S = 120

let server: TestServer
beforeAll(async () => {
  server = await startServer({ LOCKOUT_THRESHOLD: String(THRESHOLD), LOCKOUT_DURATION_S: String(DURATION_S) })
})
afterAll(() => server.close())

/** Headers that differ between any two responses for reasons unrelated to the account. */
const PER_RESPONSE = new Set(['date', 'x-request-id', 'content-length', 'keep-alive', 'connection'])

async function verifications(): Promise<number> {
  const response = await raw(server, 'GET', '/metrics')
  expect(response.status).toBe(200)
  const line = response.text.split('\n').find((l) => l.startsWith('coffer_password_verifications_total '))
  expect(line, 'coffer_password_verifications_total is exported').toBeDefined()
  return Number(line!.split(' ')[1])
}

/** A login attempt, with how many argon2 verifications it ran. */
async function attempt(email: string, password: string) {
  const before = await verifications()
  const response = await raw(server, 'POST', '/v1/auth/login', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) })
  const ran = (await verifications()) - before
  const headers = Object.fromEntries([...response.headers.entries()].filter(([name]) => !PER_RESPONSE.has(name)))
  return { status: response.status, body: response.json, headers, ran }
}

describe('login enumeration', () => {
  it('answers an unknown email exactly as a wrong password, each after one argon2 verification', async () => {
    const member = await registered(server, 'known')
    const wrong = await attempt(member.email, 'not the password')
    const unknown = await attempt(uniqueEmail('nobody'), 'not the password')

    expect(wrong.status).toBe(401)
    expect(wrong.body).toMatchObject({ status: 401, code: 'error.auth.invalid_credentials' })
    expect(unknown.status).toBe(wrong.status)
    expect(unknown.body).toEqual(wrong.body) // code, type, title, detail, instance
    expect(unknown.headers).toEqual(wrong.headers)
    expect(wrong.headers['content-type']).toMatch(/^application\/problem\+json/)

    expect(wrong.ran).toBe(1)
    expect(unknown.ran).toBe(1)
  })

  it('counts the failure the same way either way: one row per email key, dropped once as old as a lock', async () => {
    const member = await registered(server, 'counted')
    const email = uniqueEmail('stranger')
    const subject = (address: string) => createHash('sha256').update(address.toLowerCase()).digest('hex')
    const failuresOf = async (address: string) =>
      Number((await readRows(server.database, `select failures as n from password_failures where subject = '${subject(address)}'`))[0]?.n ?? 0)
    expect([await failuresOf(member.email), await failuresOf(email)]).toEqual([0, 0])
    await attempt(member.email, 'not the password')
    await attempt(` ${email.toUpperCase()} `, 'not the password')
    await attempt(email, 'not the password')
    expect([await failuresOf(member.email), await failuresOf(email)]).toEqual([1, 2])

    server.clock.advance(DURATION_S * 1000)
    expect((await sweepExpired(server.deps)).password_failures).toBeGreaterThanOrEqual(2)
    expect([await failuresOf(member.email), await failuresOf(email)]).toEqual([0, 0])
  })

  it('locks an unknown email exactly as an account: the same answers, Retry-After included, attempt for attempt', async () => {
    const member = await registered(server, 'locked')
    const stranger = uniqueEmail('locked-stranger')
    for (let i = 0; i < THRESHOLD + 2; i++) {
      const wrong = await attempt(member.email, `wrong ${i}`)
      const unknown = await attempt(stranger, `wrong ${i}`)
      expect(wrong.status).toBe(i < THRESHOLD ? 401 : 423)
      expect(unknown.body).toEqual(wrong.body)
      expect(unknown.headers).toEqual(wrong.headers)
    }
    // The right password is refused too while the lock lasts; both locks end together.
    expect((await attempt(member.email, member.password)).status).toBe(423)
    server.clock.advance(DURATION_S * 1000)
    expect((await attempt(member.email, member.password)).status).toBe(200)
    expect((await attempt(stranger, 'wrong again')).status).toBe(401)
  })

  it('finds the account whatever the case of the email, after one verification', async () => {
    const member = await registered(server, 'cased')
    const right = await attempt(member.email.toUpperCase(), PASSWORD)
    expect(right.status).toBe(200)
    expect(right.ran).toBe(1)
  })

  it('runs one verification for the right password too', async () => {
    const member = await registered(server, 'right')
    const right = await attempt(member.email, member.password)
    expect(right.status).toBe(200)
    expect(right.ran).toBe(1)
  })

  it('stays identical across repeated attempts', async () => {
    const member = await registered(server, 'repeat')
    for (let i = 0; i < 3; i++) {
      const wrong = await attempt(member.email, `wrong ${i}`)
      const unknown = await attempt(uniqueEmail('ghost'), `wrong ${i}`)
      expect(unknown.body).toEqual(wrong.body)
      expect(unknown.headers).toEqual(wrong.headers)
      expect([wrong.ran, unknown.ran]).toEqual([1, 1])
    }
  })
})
