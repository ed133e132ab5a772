// A login with an unknown email is indistinguishable from one with a wrong password: the same
// answer byte for byte (apart from per-response headers), exactly one argon2 verification and
// one counting write to the database each (the work that sets their timing).
import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sweepExpired } from '../../src/features/maintenance/sweep.service.ts'
import { PASSWORD, raw, registered, uniqueEmail } from '../support/actors.ts'
import { readRows } from '../support/database.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
beforeAll(async () => {
  server = await startServer()
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

  it('counts the failure in one database write either way: on the account, or for the unknown email (swept once a lock would have ended)', async () => {
    const member = await registered(server, 'counted')
    const email = uniqueEmail('stranger')
    const emailHash = createHash('sha256').update(email.toLowerCase()).digest('hex')
    const failuresOf = async () => ({
      account: Number((await readRows(server.database, `select failed_password_count as n from accounts where email = '${member.email}'`))[0]?.n),
      unknown: Number((await readRows(server.database, `select failures as n from unknown_sign_ins where email_hash = '${emailHash}'`))[0]?.n ?? 0),
    })
    expect(await failuresOf()).toEqual({ account: 0, unknown: 0 })
    await attempt(member.email, 'not the password')
    await attempt(` ${email.toUpperCase()} `, 'not the password')
    await attempt(email, 'not the password')
    expect(await failuresOf()).toEqual({ account: 1, unknown: 2 })

    server.clock.advance(server.deps.config.lockout.durationS * 1000 + 1)
    expect((await sweepExpired(server.deps)).unknown_sign_ins).toBeGreaterThanOrEqual(1)
    expect((await failuresOf()).unknown).toBe(0)
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
