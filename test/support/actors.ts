// Client-like helpers: what a real app does to get an account into a given state.
import { randomUUID } from 'node:crypto'
import { type Secret, TOTP, URI } from 'otpauth'
import { expect } from 'vitest'
import { CofferProblem, type CofferClient } from '../../src/sdk/client.ts'
import { hashToken } from '../../src/crypto/tokens.ts'
import type { Caller } from '../../src/features/context.ts'
import type { TestServer } from './server.ts'

export const PASSWORD = 'correct horse battery staple'

export function uniqueEmail(label = 'user'): string {
  return `${label}-${randomUUID()}@example.test`
}

export interface Member {
  readonly email: string
  readonly password: string
  readonly client: CofferClient
}

export async function registered(server: Pick<TestServer, 'client'>, label?: string): Promise<Member> {
  const email = uniqueEmail(label)
  const client = server.client()
  await client.register(email, PASSWORD)
  return { email, password: PASSWORD, client }
}

/** The authenticator app's view of a provisioning URI: codes at any instant. */
export interface Authenticator {
  readonly secret: Secret
  codeAt(ms: number): string
}

/** The codes the server accepts at `ms`: one step either side. */
export function windowCodes(authenticator: Authenticator, ms: number): string[] {
  return [-1, 0, 1].map((d) => authenticator.codeAt(ms + d * THIRTY_SECONDS))
}

/** A six-digit code that is none of the codes accepted at `ms`. */
export function wrongCode(authenticator: Authenticator, ms: number): string {
  const accepted = windowCodes(authenticator, ms)
  let n = Number(authenticator.codeAt(ms))
  let code: string
  do {
    n = (n + 1) % 1_000_000
    code = String(n).padStart(6, '0')
  } while (accepted.includes(code))
  return code
}

export function authenticatorFor(provisioningUri: string): Authenticator {
  const parsed = URI.parse(provisioningUri)
  if (!(parsed instanceof TOTP)) throw new Error('not a TOTP URI')
  return { secret: parsed.secret, codeAt: (ms) => parsed.generate({ timestamp: ms }) }
}

/** Registers and enrolls a confirmed second factor, with the recovery codes confirm answered; the confirming step is the current one. */
export async function withSecondFactor(server: TestServer, label?: string): Promise<Member & { authenticator: Authenticator; recoveryCodes: string[] }> {
  const member = await registered(server, label)
  const authenticator = authenticatorFor(await member.client.startTotpEnrollment())
  const recoveryCodes = await member.client.confirmTotpEnrollment(authenticator.codeAt(server.clock.now()))
  return { ...member, authenticator, recoveryCodes }
}

/** Raw HTTP for what the SDK would never send (malformed bodies, wrong media types). */
export async function raw(server: TestServer, method: string, urlPath: string, init: { body?: string | Uint8Array; headers?: Record<string, string> } = {}) {
  const response = await fetch(server.url + urlPath, {
    method,
    headers: init.headers ?? {},
    ...(init.body === undefined ? {} : { body: init.body as NonNullable<RequestInit['body']> }),
  })
  const text = await response.text()
  let json: Record<string, unknown> | undefined
  try {
    json = JSON.parse(text) as Record<string, unknown>
  } catch {
    json = undefined
  }
  return { status: response.status, headers: response.headers, text, json }
}

export const THIRTY_SECONDS = 30_000

/** The problem a rejected SDK call carries (fails the test when the call succeeded). */
export async function problemOf(promise: Promise<unknown>): Promise<CofferProblem> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(CofferProblem)
  return error as CofferProblem
}

/** The bearer check's caller for a client's session, as a route would get it (for a service called in-process). */
export async function callerOf(server: Pick<TestServer, 'deps'>, client: CofferClient): Promise<Caller> {
  const session = (await server.deps.storage.findBearerSession(hashToken(client.tokens!.access_token)))!
  return { sessionId: session.sessionId, userId: session.account.userId, authenticatedAt: session.authenticatedAt, account: session.account }
}
