// Tokens are at least 256 bits of randomness and only their SHA-256 ever reaches the database.
import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Tokens } from '../../src/sdk/client.ts'
import { PASSWORD, registered, THIRTY_SECONDS, withSecondFactor } from '../support/actors.ts'
import { readRows, tableNames } from '../support/database.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

type Kind = 'access' | 'refresh' | 'mfa'
const PREFIX: Record<Kind, string> = { access: 'coffer_at_', refresh: 'coffer_rt_', mfa: 'coffer_mfa_' }
const BASE64URL = /^[A-Za-z0-9_-]+$/

const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex')

/** The random part of a token of `kind`: what follows the prefix (fails the test on another prefix). */
function randomPart(kind: Kind, token: string): string {
  expect(token.startsWith(PREFIX[kind]), `${kind} token ${token.slice(0, 12)}… has prefix ${PREFIX[kind]}`).toBe(true)
  return token.slice(PREFIX[kind].length)
}

function expectStrongToken(kind: Kind, token: string): void {
  const rest = randomPart(kind, token)
  expect(rest).toMatch(BASE64URL)
  expect(rest.length).toBeGreaterThanOrEqual(43)
  expect(Buffer.from(rest, 'base64url').length).toBeGreaterThanOrEqual(32)
}

/** Password sign-in of an account with an active second factor: the challenge's mfa_token. */
async function mfaToken(email: string): Promise<string> {
  const login = await server.client().login(email, PASSWORD)
  if (login.kind !== 'second_factor') throw new Error('expected 202 with a second-factor challenge')
  return login.challenge.mfa_token
}

/** The string forms of a stored value: text as is, bytes as UTF-8, hex and base64. */
function forms(value: unknown): string[] {
  if (value === null || value === undefined) return []
  if (typeof value === 'string') return [value]
  if (value instanceof Uint8Array) {
    const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength)
    return [bytes.toString('utf8'), bytes.toString('hex'), bytes.toString('base64'), bytes.toString('base64url')]
  }
  if (value instanceof Date) return [value.toISOString()]
  if (typeof value === 'object') return [JSON.stringify(value)]
  return [String(value)]
}

interface Cell {
  readonly table: string
  readonly column: string
  readonly forms: readonly string[]
}

/** Every cell of every row of every table, as an operator's SQL shell would see it. */
async function everyCell(): Promise<{ tables: string[]; cells: Cell[] }> {
  const names = await tableNames(server.database)
  const cells: Cell[] = []
  for (const table of names) {
    for (const row of await readRows(server.database, `select * from "${table}"`)) {
      for (const [column, value] of Object.entries(row)) cells.push({ table, column, forms: forms(value) })
    }
  }
  return { tables: names, cells }
}

/** The spellings of a token that would betray it: whole, its random part, its bytes in hex and base64. */
function needles(kind: Kind, token: string): string[] {
  const rest = randomPart(kind, token)
  const bytes = Buffer.from(rest, 'base64url')
  return [token, rest, bytes.toString('hex'), bytes.toString('base64').replace(/=+$/, '')]
}

function cellsContaining(cells: readonly Cell[], needle: string): string[] {
  return cells.filter((cell) => cell.forms.some((form) => form.includes(needle))).map((cell) => `${cell.table}.${cell.column}`)
}

interface Issued {
  readonly kind: Kind
  readonly token: string
  readonly how: string
}

function pair(tokens: Tokens, how: string): Issued[] {
  return [
    { kind: 'access', token: tokens.access_token, how },
    { kind: 'refresh', token: tokens.refresh_token, how },
  ]
}

/** register + login + refresh + a second-factor login (and one challenge left pending). */
async function accountLife(): Promise<{ issued: Issued[]; live: Tokens[]; pendingMfa: string }> {
  const member = await registered(server, 'tokens')
  const registeredPair = member.client.tokens!
  const device = server.client()
  const loggedIn = await device.login(member.email, PASSWORD)
  if (loggedIn.kind !== 'session') throw new Error('expected a session')
  const refreshed = await device.refresh().then(() => device.tokens!)

  const enrolled = await withSecondFactor(server, 'tokens-mfa')
  const enrolledPair = enrolled.client.tokens!
  server.clock.advance(THIRTY_SECONDS)
  const usedMfa = await mfaToken(enrolled.email)
  const verified = await server.client().verifyLogin(usedMfa, enrolled.authenticator.codeAt(server.clock.now()))
  const pendingMfa = await mfaToken(enrolled.email)

  return {
    issued: [
      ...pair(registeredPair, 'register'),
      ...pair(loggedIn.tokens, 'login'),
      ...pair(refreshed, 'refresh'),
      ...pair(enrolledPair, 'register (second-factor account)'),
      { kind: 'mfa', token: usedMfa, how: 'login with a second factor (verified)' },
      ...pair(verified, 'verify login'),
      { kind: 'mfa', token: pendingMfa, how: 'login with a second factor (pending)' },
    ],
    live: [registeredPair, refreshed, enrolledPair, verified],
    pendingMfa,
  }
}

describe('token strength', () => {
  it('gives access, refresh and mfa tokens at least 43 base64url characters (32 bytes) after the prefix', async () => {
    const { issued } = await accountLife()
    expect(new Set(issued.map((i) => i.kind))).toEqual(new Set(['access', 'refresh', 'mfa']))
    for (const { kind, token } of issued) expectStrongToken(kind, token)
  })

  it('never issues the same token, or the same random part, twice', async () => {
    const issued: Issued[] = []
    for (let i = 0; i < 3; i += 1) issued.push(...(await accountLife()).issued)
    const tokens = issued.map((i) => i.token)
    expect(new Set(tokens).size).toBe(tokens.length)
    const rests = issued.map((i) => randomPart(i.kind, i.token))
    expect(new Set(rests).size).toBe(rests.length)
    // No shared structure either (a counter or a clock in the token): every head and tail differs.
    expect(new Set(rests.map((r) => r.slice(0, 11))).size).toBe(rests.length)
    expect(new Set(rests.map((r) => r.slice(-11))).size).toBe(rests.length)
  })
})

describe('token storage', () => {
  it('keeps no raw token, in any spelling, in any column of any table', async () => {
    const { issued, pendingMfa } = await accountLife()
    const { tables: names, cells } = await everyCell()
    expect(names.length).toBeGreaterThan(0)
    expect(cells.length).toBeGreaterThan(0)
    // The scan sees what the server stored: the pending challenge's hash is there.
    expect(cellsContaining(cells, sha256Hex(pendingMfa)).length).toBeGreaterThan(0)
    const leaks = issued.flatMap(({ kind, token, how }) =>
      needles(kind, token).flatMap((needle) => cellsContaining(cells, needle).map((where) => `${kind} token from ${how} found in ${where}`)),
    )
    expect(leaks).toEqual([])
  })

  it('holds the hex SHA-256 of each live access and refresh token in one row of sessions', async () => {
    const { live } = await accountLife()
    const rows = await readRows(server.database, 'select * from sessions')
    for (const tokens of live) {
      const accessHash = sha256Hex(tokens.access_token)
      const refreshHash = sha256Hex(tokens.refresh_token)
      expect(accessHash).toMatch(/^[0-9a-f]{64}$/)
      const row = rows.find((r) => Object.values(r).includes(accessHash))
      expect(row, `a sessions row holds sha256(access_token) ${accessHash}`).toBeDefined()
      expect(Object.values(row ?? {})).toContain(refreshHash)
    }
  })
})
