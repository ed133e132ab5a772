// Every JSON-body operation of the account, session and second-factor surface answers an
// unparsable body 400, a non-JSON media type 415 and a schema breach 422, each as a catalog
// problem, and a refused request changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type Authenticator,
  authenticatorFor,
  type Member,
  PASSWORD,
  raw,
  registered,
  THIRTY_SECONDS,
  uniqueEmail,
  withSecondFactor,
} from '../support/actors.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

const NEW_PASSWORD = 'a brand new password nobody has used'

/** One prepared request: a body the operation accepts, and what must still hold after a refusal. */
interface Subject {
  readonly headers: Record<string, string>
  readonly valid: Record<string, unknown>
  /** Asserts that a refused request left the account as it was. */
  unchanged(): Promise<void>
}

interface Operation {
  readonly name: string
  readonly path: string
  /** Every required member of the request object. */
  readonly required: readonly string[]
  /** The status of the well-formed request (the control case). */
  readonly success: number
  prepare(): Promise<Subject>
}

const bearerOf = (member: Member): Record<string, string> => ({ authorization: `Bearer ${member.client.tokens?.access_token}` })

const codeNow = (authenticator: Authenticator) => authenticator.codeAt(server.clock.now())

/** An account with a confirmed second factor whose current step is unspent. */
async function enrolled(label: string) {
  const member = await withSecondFactor(server, label)
  server.clock.advance(THIRTY_SECONDS)
  return member
}

async function loginKind(email: string, password: string): Promise<number> {
  const response = await raw(server, 'POST', '/v1/auth/login', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) })
  return response.status
}

const operations: readonly Operation[] = [
  {
    name: 'register',
    path: '/v1/auth/register',
    required: ['email', 'password'],
    success: 200,
    async prepare() {
      const email = uniqueEmail('statuses-register')
      return {
        headers: {},
        valid: { email, password: PASSWORD },
        async unchanged() {
          expect(await loginKind(email, PASSWORD)).toBe(401) // no account was created
        },
      }
    },
  },
  {
    name: 'login',
    path: '/v1/auth/login',
    required: ['email', 'password'],
    success: 200,
    async prepare() {
      const member = await registered(server, 'statuses-login')
      return {
        headers: {},
        valid: { email: member.email, password: PASSWORD },
        async unchanged() {
          expect((await member.client.listSessions()).sessions).toHaveLength(1) // no session opened
        },
      }
    },
  },
  {
    name: 'refresh',
    path: '/v1/auth/refresh',
    required: ['refresh_token'],
    success: 200,
    async prepare() {
      const member = await registered(server, 'statuses-refresh')
      const refreshToken = member.client.tokens?.refresh_token
      return {
        headers: {},
        valid: { refresh_token: refreshToken },
        async unchanged() {
          // The refresh token is still unused: it rotates once, and the old access token still works.
          expect((await member.client.listSessions()).sessions).toHaveLength(1)
          const rotated = await raw(server, 'POST', '/v1/auth/refresh', {
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ refresh_token: refreshToken }),
          })
          expect(rotated.status).toBe(200)
        },
      }
    },
  },
  {
    name: 'verify login',
    path: '/v1/auth/login/verify',
    required: ['mfa_token', 'totp_code'],
    success: 200,
    async prepare() {
      const member = await enrolled('statuses-verify')
      const login = await server.client().login(member.email, PASSWORD)
      if (login.kind !== 'second_factor') throw new Error('expected a second-factor challenge')
      const mfaToken = login.challenge.mfa_token
      const code = codeNow(member.authenticator)
      return {
        headers: {},
        valid: { mfa_token: mfaToken, totp_code: code },
        async unchanged() {
          // Neither the challenge nor the code's step was spent: together they still open a session.
          const tokens = await server.client().verifyLogin(mfaToken, code)
          expect(tokens.token_type).toBe('Bearer')
        },
      }
    },
  },
  {
    name: 'change password',
    path: '/v1/auth/password',
    required: ['current_password', 'new_password'],
    success: 204,
    async prepare() {
      const member = await registered(server, 'statuses-password')
      return {
        headers: bearerOf(member),
        valid: { current_password: PASSWORD, new_password: NEW_PASSWORD },
        async unchanged() {
          expect(await loginKind(member.email, PASSWORD)).toBe(200)
          expect(await loginKind(member.email, NEW_PASSWORD)).toBe(401)
          expect((await member.client.listSessions()).sessions.length).toBeGreaterThanOrEqual(1)
        },
      }
    },
  },
  {
    name: 'reauthenticate',
    path: '/v1/auth/reauthenticate',
    required: ['password'],
    success: 200,
    async prepare() {
      const member = await registered(server, 'statuses-reauth')
      const authenticatedAt = (await member.client.listSessions()).sessions.find((s) => s.current)?.authenticated_at
      expect(authenticatedAt).toBeDefined()
      server.clock.advance(2_000) // a reauthentication now would move authenticated_at
      return {
        headers: bearerOf(member),
        valid: { password: PASSWORD },
        async unchanged() {
          const after = (await member.client.listSessions()).sessions.find((s) => s.current)
          expect(after?.authenticated_at).toBe(authenticatedAt)
        },
      }
    },
  },
  {
    name: 'confirm TOTP',
    path: '/v1/auth/totp/confirm',
    required: ['totp_code'],
    success: 204,
    async prepare() {
      const member = await registered(server, 'statuses-confirm')
      const authenticator = authenticatorFor(await member.client.startTotpEnrollment())
      const code = codeNow(authenticator)
      return {
        headers: bearerOf(member),
        valid: { totp_code: code },
        async unchanged() {
          // Still no active second factor; the pending secret and the code's step are intact.
          expect(await loginKind(member.email, PASSWORD)).toBe(200)
          await member.client.confirmTotpEnrollment(code)
          expect(await loginKind(member.email, PASSWORD)).toBe(202)
        },
      }
    },
  },
  {
    name: 'disable TOTP',
    path: '/v1/auth/totp/disable',
    required: ['totp_code'],
    success: 204,
    async prepare() {
      const member = await enrolled('statuses-disable')
      const code = codeNow(member.authenticator)
      return {
        headers: bearerOf(member),
        valid: { totp_code: code },
        async unchanged() {
          // The second factor is still active, and the code's step is still unspent.
          expect(await loginKind(member.email, PASSWORD)).toBe(202)
          await member.client.disableTotp(code)
          expect(await loginKind(member.email, PASSWORD)).toBe(200)
        },
      }
    },
  },
  {
    name: 'new recovery codes',
    path: '/v1/auth/totp/recovery-codes',
    required: ['totp_code'],
    success: 200,
    async prepare() {
      const member = await enrolled('statuses-recovery-codes')
      const code = codeNow(member.authenticator)
      return {
        headers: bearerOf(member),
        valid: { totp_code: code },
        async unchanged() {
          // The codes confirm made still sign in, and the code's step is still unspent.
          const login = await server.client().login(member.email, PASSWORD)
          if (login.kind !== 'second_factor') throw new Error('expected a second-factor challenge')
          await server.client().verifyLogin(login.challenge.mfa_token, member.recoveryCodes[0]!)
          expect(await member.client.regenerateRecoveryCodes(code)).toHaveLength(10)
        },
      }
    },
  },
]

interface Case {
  readonly operation: Operation
  readonly label: string
  readonly contentType: string
  body(valid: Record<string, unknown>): string
  readonly status: number
  readonly code: string
}

const cases: Case[] = operations.flatMap((operation): Case[] => [
  {
    operation,
    label: 'malformed JSON',
    contentType: 'application/json',
    body: (valid) => JSON.stringify(valid).slice(0, -1),
    status: 400,
    code: 'error.request.malformed',
  },
  {
    operation,
    label: 'an empty JSON body',
    contentType: 'application/json',
    body: () => '',
    status: 400,
    code: 'error.request.malformed',
  },
  {
    operation,
    label: 'Content-Type text/plain',
    contentType: 'text/plain',
    body: (valid) => JSON.stringify(valid),
    status: 415,
    code: 'error.request.unsupported_media_type',
  },
  ...operation.required.flatMap((field): Case[] => [
    {
      operation,
      label: `a missing ${field}`,
      contentType: 'application/json',
      body: (valid) => JSON.stringify(Object.fromEntries(Object.entries(valid).filter(([key]) => key !== field))),
      status: 422,
      code: 'error.request.invalid',
    },
    {
      operation,
      label: `a number for ${field}`,
      contentType: 'application/json',
      body: (valid) => JSON.stringify({ ...valid, [field]: 42 }),
      status: 422,
      code: 'error.request.invalid',
    },
    {
      operation,
      label: `null for ${field}`,
      contentType: 'application/json',
      body: (valid) => JSON.stringify({ ...valid, [field]: null }),
      status: 422,
      code: 'error.request.invalid',
    },
  ]),
])

describe('the table', () => {
  it.each(operations.map((operation) => [operation.name, operation] as const))('%s accepts its well-formed request (control)', async (_name, operation) => {
    const subject = await operation.prepare()
    const response = await raw(server, 'POST', operation.path, {
      headers: { ...subject.headers, 'content-type': 'application/json' },
      body: JSON.stringify(subject.valid),
    })
    expect(response.status).toBe(operation.success)
  })
})

describe('generic statuses', () => {
  it.each(cases.map((c) => [c.operation.name, c.label, c.status, c] as const))(
    '%s answers %s with %i and changes nothing',
    async (_name, _label, _status, c) => {
      const subject = await c.operation.prepare()
      const response = await raw(server, 'POST', c.operation.path, {
        headers: { ...subject.headers, 'content-type': c.contentType },
        body: c.body(subject.valid),
      })
      expect(response.status).toBe(c.status)
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/)
      expect(response.json).toMatchObject({
        status: c.status,
        code: c.code,
        type: `/problems/${c.code.replace(/^error\./, '')}`,
        instance: c.operation.path,
      })
      expect(typeof response.json?.detail).toBe('string')
      await subject.unchanged()
    },
  )
})
