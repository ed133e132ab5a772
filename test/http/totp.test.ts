// The second factor moves only along SPEC's "Second factor" table (none, pending, active), each
// refused move answers its documented problem and leaves the state as it was.
import { Secret } from 'otpauth'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { totpAssociatedData } from '../../src/features/totp/totp.service.ts'
import {
  type Authenticator,
  authenticatorFor,
  type Member,
  PASSWORD,
  problemOf,
  raw,
  registered,
  THIRTY_SECONDS,
  withSecondFactor,
  windowCodes,
  wrongCode,
} from '../support/actors.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

const STEP = THIRTY_SECONDS

/** What a fresh client gets from a password sign-in: 'session' (200) or 'second_factor' (202). */
async function signInKind(member: Member): Promise<'session' | 'second_factor'> {
  return (await server.client().login(member.email, member.password)).kind
}

/**
 * Moves the clock a step at a time until `code(now)` is not accidentally one of the codes
 * accepted now (a 6-digit collision is rare but possible). Only for accounts with no spent steps
 * that matter to the test.
 */
function avoidCollision(accepted: () => string[], code: () => string): void {
  for (let i = 0; i < 50 && accepted().includes(code()); i++) server.clock.advance(STEP)
  expect(accepted()).not.toContain(code())
}

function bearer(member: Member): Record<string, string> {
  const tokens = member.client.tokens
  if (tokens === null) throw new Error('member is not signed in')
  return { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json' }
}

async function userIdOf(member: Member): Promise<string> {
  return (await member.client.getProfile()).user_id
}

/** A registered account with a pending (unconfirmed) enrollment. */
async function pending(label?: string): Promise<Member & { authenticator: Authenticator; uri: string }> {
  const member = await registered(server, label)
  const uri = await member.client.startTotpEnrollment()
  return { ...member, uri, authenticator: authenticatorFor(uri) }
}

describe('start enrollment: none -> pending', () => {
  it('answers the provisioning URI of API.md carrying a 20-byte secret', async () => {
    const member = await registered(server, 'start')
    const uri = await member.client.startTotpEnrollment()
    const escapedEmail = member.email.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    const match = new RegExp(`^otpauth://totp/Coffer:${escapedEmail}\\?secret=([A-Z2-7]+)&issuer=Coffer&algorithm=SHA1&digits=6&period=30$`).exec(uri)
    expect(match, uri).not.toBeNull()
    const secret = Secret.fromBase32(match?.[1] ?? '')
    expect(secret.bytes).toHaveLength(20)
    // An authenticator app reading the URI gets the same secret.
    expect(Buffer.from(authenticatorFor(uri).secret.bytes).equals(Buffer.from(secret.bytes))).toBe(true)
  })

  it('gives every enrollment its own secret', async () => {
    const a = await pending('a')
    const b = await pending('b')
    expect(Buffer.from(a.authenticator.secret.bytes).equals(Buffer.from(b.authenticator.secret.bytes))).toBe(false)
  })

  it('leaves sign-in unchanged: login still answers 200 with a working session while pending', async () => {
    const member = await pending('pending-login')
    const client = server.client()
    const result = await client.login(member.email, PASSWORD)
    expect(result.kind).toBe('session')
    expect((await client.getProfile()).email).toBe(member.email)
  })

  it('stores the secret sealed (AES-256-GCM box bound to the account), never in the clear', async () => {
    const member = await pending('sealed')
    const userId = await userIdOf(member)
    const secret = Buffer.from(member.authenticator.secret.bytes)
    const row = await server.deps.storage.findSecondFactor(userId)
    expect(row?.status).toBe('pending')
    const box = row?.secretBox ?? Buffer.alloc(0)
    // version byte | 12-byte nonce | 20-byte ciphertext | 16-byte tag
    expect(box).toHaveLength(1 + 12 + 20 + 16)
    expect(box.includes(secret)).toBe(false)
    expect(box.includes(Buffer.from(member.authenticator.secret.base32, 'utf8'))).toBe(false)
    // It is the secret, sealed: it opens under this account's binding only.
    expect(server.deps.totpSecrets.open(box, totpAssociatedData(userId)).equals(secret)).toBe(true)
    const other = await userIdOf(await registered(server, 'other'))
    expect(() => server.deps.totpSecrets.open(box, totpAssociatedData(other))).toThrow()
  })

  it('needs a bearer token', async () => {
    const response = await raw(server, 'POST', '/v1/auth/totp/enroll')
    expect(response.status).toBe(401)
    expect(response.json?.code).toBe('error.auth.unauthenticated')
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="coffer"/)
  })
})

describe('start enrollment while pending: pending -> pending (replaced)', () => {
  it('replaces the secret: a code of the first secret no longer confirms', async () => {
    const member = await pending('restart')
    const first = member.authenticator
    const second = authenticatorFor(await member.client.startTotpEnrollment())
    expect(Buffer.from(second.secret.bytes).equals(Buffer.from(first.secret.bytes))).toBe(false)
    avoidCollision(
      () => windowCodes(second, server.clock.now()),
      () => first.codeAt(server.clock.now()),
    )

    const refused = await problemOf(member.client.confirmTotpEnrollment(first.codeAt(server.clock.now())))
    expect(refused.status).toBe(422)
    expect(refused.code).toBe('error.totp.invalid_code')
    expect(await signInKind(member)).toBe('session')

    await member.client.confirmTotpEnrollment(second.codeAt(server.clock.now()))
    expect(await signInKind(member)).toBe('second_factor')
  })

  it('stores a new sealed box for the new secret', async () => {
    const member = await pending('restart-box')
    const userId = await userIdOf(member)
    const before = (await server.deps.storage.findSecondFactor(userId))?.secretBox
    const second = authenticatorFor(await member.client.startTotpEnrollment())
    const after = await server.deps.storage.findSecondFactor(userId)
    expect(after?.status).toBe('pending')
    expect(after?.secretBox.equals(before ?? Buffer.alloc(0))).toBe(false)
    expect(server.deps.totpSecrets.open(after?.secretBox ?? Buffer.alloc(0), totpAssociatedData(userId)).equals(Buffer.from(second.secret.bytes))).toBe(true)
  })
})

describe('confirm: pending -> active', () => {
  it('activates with a live code: 204, and sign-in now asks for the second factor', async () => {
    const member = await pending('confirm')
    expect(await signInKind(member)).toBe('session')
    const response = await raw(server, 'POST', '/v1/auth/totp/confirm', {
      headers: bearer(member),
      body: JSON.stringify({ totp_code: member.authenticator.codeAt(server.clock.now()) }),
    })
    expect(response.status).toBe(204)
    expect(response.text).toBe('')
    const login = await server.client().login(member.email, PASSWORD)
    expect(login.kind).toBe('second_factor')
    expect((await server.deps.storage.findSecondFactor(await userIdOf(member)))?.status).toBe('active')
  })

  it('keeps the sealed secret it confirmed', async () => {
    const member = await pending('confirm-box')
    const userId = await userIdOf(member)
    const box = (await server.deps.storage.findSecondFactor(userId))?.secretBox
    await member.client.confirmTotpEnrollment(member.authenticator.codeAt(server.clock.now()))
    const row = await server.deps.storage.findSecondFactor(userId)
    expect(row?.status).toBe('active')
    expect(row?.secretBox.equals(box ?? Buffer.alloc(0))).toBe(true)
  })

  it.each([
    ['one step behind', -1],
    ['one step ahead', 1],
  ])('accepts a code %s', async (_case, steps) => {
    const member = await pending('confirm-window')
    await member.client.confirmTotpEnrollment(member.authenticator.codeAt(server.clock.now() + steps * STEP))
    expect(await signInKind(member)).toBe('second_factor')
  })

  it.each([
    ['two steps behind', -2],
    ['two steps ahead', 2],
  ])('refuses a code %s with 422 and stays pending', async (_case, steps) => {
    const member = await pending('confirm-far')
    const auth = member.authenticator
    avoidCollision(
      () => windowCodes(auth, server.clock.now()),
      () => auth.codeAt(server.clock.now() + steps * STEP),
    )
    const refused = await problemOf(member.client.confirmTotpEnrollment(auth.codeAt(server.clock.now() + steps * STEP)))
    expect(refused.status).toBe(422)
    expect(refused.code).toBe('error.totp.invalid_code')
    expect(await signInKind(member)).toBe('session')
    await member.client.confirmTotpEnrollment(auth.codeAt(server.clock.now()))
    expect(await signInKind(member)).toBe('second_factor')
  })

  it('refuses a wrong code with 422 error.totp.invalid_code and stays pending', async () => {
    const member = await pending('confirm-wrong')
    const refused = await problemOf(member.client.confirmTotpEnrollment(wrongCode(member.authenticator, server.clock.now())))
    expect(refused.status).toBe(422)
    expect(refused.code).toBe('error.totp.invalid_code')
    expect(refused.problem.status).toBe(422)
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/)
    expect((await server.deps.storage.findSecondFactor(await userIdOf(member)))?.status).toBe('pending')
    expect(await signInKind(member)).toBe('session')
    await member.client.confirmTotpEnrollment(member.authenticator.codeAt(server.clock.now()))
    expect(await signInKind(member)).toBe('second_factor')
  })

  it.each([
    ['not six digits', '12345'],
    ['letters', 'abcdef'],
    ['an empty string', ''],
  ])('refuses a code that is %s with 422 error.totp.invalid_code', async (_case, code) => {
    const member = await pending('confirm-shape')
    const refused = await problemOf(member.client.confirmTotpEnrollment(code))
    expect(refused.status).toBe(422)
    expect(refused.code).toBe('error.totp.invalid_code')
    expect(await signInKind(member)).toBe('session')
  })

  it('answers 409 error.totp.nothing_pending when nothing was started, and stays at none', async () => {
    const member = await registered(server, 'confirm-none')
    const refused = await problemOf(member.client.confirmTotpEnrollment('123456'))
    expect(refused.status).toBe(409)
    expect(refused.code).toBe('error.totp.nothing_pending')
    expect(await server.deps.storage.findSecondFactor(await userIdOf(member))).toBeUndefined()
    expect(await signInKind(member)).toBe('session')
  })

  it('answers 409 error.totp.nothing_pending while active, even with a live code, and stays active', async () => {
    const member = await withSecondFactor(server, 'confirm-active')
    server.clock.advance(STEP)
    const refused = await problemOf(member.client.confirmTotpEnrollment(member.authenticator.codeAt(server.clock.now())))
    expect(refused.status).toBe(409)
    expect(refused.code).toBe('error.totp.nothing_pending')
    expect(await signInKind(member)).toBe('second_factor')
  })

  it('answers a missing totp_code with 422, malformed JSON with 400 and another media type with 415', async () => {
    const member = await pending('confirm-body')
    const missing = await raw(server, 'POST', '/v1/auth/totp/confirm', { headers: bearer(member), body: '{}' })
    expect(missing.status).toBe(422)
    expect(missing.json?.code).toBe('error.request.invalid')
    const malformed = await raw(server, 'POST', '/v1/auth/totp/confirm', { headers: bearer(member), body: '{"totp_code":' })
    expect(malformed.status).toBe(400)
    expect(malformed.json?.code).toBe('error.request.malformed')
    const text = await raw(server, 'POST', '/v1/auth/totp/confirm', {
      headers: { ...bearer(member), 'content-type': 'text/plain' },
      body: JSON.stringify({ totp_code: member.authenticator.codeAt(server.clock.now()) }),
    })
    expect(text.status).toBe(415)
    expect(text.json?.code).toBe('error.request.unsupported_media_type')
    expect(await signInKind(member)).toBe('session')
  })
})

describe('start enrollment while active', () => {
  it('answers 409 error.totp.already_active and keeps the active secret', async () => {
    const member = await withSecondFactor(server, 'start-active')
    const userId = await userIdOf(member)
    const box = (await server.deps.storage.findSecondFactor(userId))?.secretBox
    const refused = await problemOf(member.client.startTotpEnrollment())
    expect(refused.status).toBe(409)
    expect(refused.code).toBe('error.totp.already_active')
    const row = await server.deps.storage.findSecondFactor(userId)
    expect(row?.status).toBe('active')
    expect(row?.secretBox.equals(box ?? Buffer.alloc(0))).toBe(true)

    // The authenticator the user already has still signs in.
    server.clock.advance(STEP)
    const client = server.client()
    const login = await client.login(member.email, PASSWORD)
    if (login.kind !== 'second_factor') throw new Error('expected a second-factor challenge')
    await client.verifyLogin(login.challenge.mfa_token, member.authenticator.codeAt(server.clock.now()))
    expect((await client.getProfile()).email).toBe(member.email)
  })
})

describe('disable: active -> none', () => {
  it('with a live code answers 204 and sign-in is password-only again', async () => {
    const member = await withSecondFactor(server, 'disable')
    server.clock.advance(STEP)
    const response = await raw(server, 'POST', '/v1/auth/totp/disable', {
      headers: bearer(member),
      body: JSON.stringify({ totp_code: member.authenticator.codeAt(server.clock.now()) }),
    })
    expect(response.status).toBe(204)
    expect(response.text).toBe('')
    expect(await signInKind(member)).toBe('session')
    expect(await server.deps.storage.findSecondFactor(await userIdOf(member))).toBeUndefined()
    // Back at none: a new enrollment can start, and confirm has nothing pending before it.
    const confirmAtNone = await problemOf(member.client.confirmTotpEnrollment(member.authenticator.codeAt(server.clock.now())))
    expect(confirmAtNone.code).toBe('error.totp.nothing_pending')
    expect(await member.client.startTotpEnrollment()).toMatch(/^otpauth:\/\/totp\/Coffer:/)
  })

  it.each([
    ['one step behind', -1],
    ['one step ahead', 1],
  ])('accepts a code %s', async (_case, steps) => {
    const member = await withSecondFactor(server, 'disable-window')
    server.clock.advance(2 * STEP) // the confirming step and the one after stay out of reach
    await member.client.disableTotp(member.authenticator.codeAt(server.clock.now() + steps * STEP))
    expect(await signInKind(member)).toBe('session')
  })

  it.each([
    ['two steps behind', -2],
    ['two steps ahead', 2],
  ])('refuses a code %s with 422 and stays active', async (_case, steps) => {
    const member = await withSecondFactor(server, 'disable-far')
    const auth = member.authenticator
    server.clock.advance(3 * STEP)
    avoidCollision(
      () => windowCodes(auth, server.clock.now()),
      () => auth.codeAt(server.clock.now() + steps * STEP),
    )
    const refused = await problemOf(member.client.disableTotp(auth.codeAt(server.clock.now() + steps * STEP)))
    expect(refused.status).toBe(422)
    expect(refused.code).toBe('error.totp.invalid_code')
    expect(await signInKind(member)).toBe('second_factor')
  })

  it('refuses a wrong code with 422 error.totp.invalid_code and stays active', async () => {
    const member = await withSecondFactor(server, 'disable-wrong')
    server.clock.advance(STEP)
    const refused = await problemOf(member.client.disableTotp(wrongCode(member.authenticator, server.clock.now())))
    expect(refused.status).toBe(422)
    expect(refused.code).toBe('error.totp.invalid_code')
    expect(await signInKind(member)).toBe('second_factor')
    // The right code still disables: the wrong one spent nothing.
    await member.client.disableTotp(member.authenticator.codeAt(server.clock.now()))
    expect(await signInKind(member)).toBe('session')
  })

  it('needs a code: a session alone is not enough (missing totp_code 422, empty code 422)', async () => {
    const member = await withSecondFactor(server, 'disable-nocode')
    const missing = await raw(server, 'POST', '/v1/auth/totp/disable', { headers: bearer(member), body: '{}' })
    expect(missing.status).toBe(422)
    expect(missing.json?.code).toBe('error.request.invalid')
    const emptyBody = await raw(server, 'POST', '/v1/auth/totp/disable', { headers: bearer(member) })
    expect(emptyBody.status).toBe(400)
    expect(emptyBody.json?.code).toBe('error.request.malformed')
    const empty = await raw(server, 'POST', '/v1/auth/totp/disable', { headers: bearer(member), body: JSON.stringify({ totp_code: '' }) })
    expect(empty.status).toBe(422)
    expect(empty.json?.code).toBe('error.totp.invalid_code')
    expect(await signInKind(member)).toBe('second_factor')
  })

  it('answers 409 error.totp.not_enrolled when there is no second factor', async () => {
    const member = await registered(server, 'disable-none')
    const refused = await problemOf(member.client.disableTotp('123456'))
    expect(refused.status).toBe(409)
    expect(refused.code).toBe('error.totp.not_enrolled')
    expect(await server.deps.storage.findSecondFactor(await userIdOf(member))).toBeUndefined()
  })

  it('answers 409 error.totp.not_enrolled while pending, even with a live code, and the enrollment stays pending', async () => {
    const member = await pending('disable-pending')
    const refused = await problemOf(member.client.disableTotp(member.authenticator.codeAt(server.clock.now())))
    expect(refused.status).toBe(409)
    expect(refused.code).toBe('error.totp.not_enrolled')
    expect((await server.deps.storage.findSecondFactor(await userIdOf(member)))?.status).toBe('pending')
    expect(await signInKind(member)).toBe('session')
    // The pending secret still confirms.
    await member.client.confirmTotpEnrollment(member.authenticator.codeAt(server.clock.now()))
    expect(await signInKind(member)).toBe('second_factor')
  })
})
