// No text a client sends may hold U+0000 (decision 0044): PostgreSQL's text columns cannot store
// it, so both engines refuse it at the validator, before anything is read or written: 422 in a
// body, 400 in a query. The advisory cohort_hash is dropped instead (API.md section 1).
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PASSWORD, raw, uniqueEmail } from '../support/actors.ts'
import { album, uploader, type Uploader } from '../support/albums.ts'
import { bearer } from '../support/bundles.ts'
import { everyRow, readRows } from '../support/database.ts'
import { startServer, type TestServer } from '../support/server.ts'

const ADMIN_TOKEN = randomBytes(32).toString('base64url')
const NUL = '\u0000'

let server: TestServer
let member: Uploader
let albumId: string
beforeAll(async () => {
  server = await startServer({ ADMIN_TOKEN })
  member = await uploader(server, 'text')
  albumId = await album(member)
})
afterAll(() => server.close())

const json = { 'content-type': 'application/json' }
const admin = () => ({ authorization: `Bearer ${ADMIN_TOKEN}` })

interface Refused {
  readonly method: string
  readonly path: () => string
  readonly headers: () => Record<string, string>
  readonly body?: () => unknown
}

const inBodies: ReadonlyArray<[name: string, Refused]> = [
  [
    'register: email',
    { method: 'POST', path: () => '/v1/auth/register', headers: () => json, body: () => ({ email: `a${NUL}@example.test`, password: PASSWORD }) },
  ],
  [
    'register: password',
    { method: 'POST', path: () => '/v1/auth/register', headers: () => json, body: () => ({ email: uniqueEmail(), password: `pass${NUL}` }) },
  ],
  ['login: email', { method: 'POST', path: () => '/v1/auth/login', headers: () => json, body: () => ({ email: `${member.email}${NUL}`, password: PASSWORD }) }],
  [
    'profile: display_name',
    { method: 'PATCH', path: () => '/v1/profile', headers: () => ({ ...json, ...bearer(member) }), body: () => ({ display_name: `Ann${NUL}` }) },
  ],
  [
    'operator: a suspension reason',
    {
      method: 'POST',
      path: () => `/v1/admin/accounts/${member.userId}/suspend`,
      headers: () => ({ ...json, ...admin() }),
      body: () => ({ reason: `why${NUL}` }),
    },
  ],
]

const inQueries: ReadonlyArray<[name: string, Refused]> = [
  ['operator: the account search', { method: 'GET', path: () => `/v1/admin/accounts?email=${encodeURIComponent(`${member.email}${NUL}`)}`, headers: admin }],
  ['abort upgrade: intent_id', { method: 'DELETE', path: () => `/v1/albums/${albumId}/upgrade?intent_id=a%00b`, headers: () => bearer(member) }],
]

async function send(refused: Refused) {
  return raw(server, refused.method, refused.path(), {
    headers: refused.headers(),
    ...(refused.body === undefined ? {} : { body: JSON.stringify(refused.body()) }),
  })
}

describe('a string with U+0000', () => {
  it.each(inBodies)('in a body (%s) is 422 and writes nothing', async (_name, refused) => {
    const before = await everyRow(server.database)
    const answer = await send(refused)
    expect([answer.status, answer.json?.code], answer.text).toEqual([422, 'error.request.invalid'])
    expect(answer.json?.detail).toContain('U+0000')
    expect(await everyRow(server.database)).toEqual(before)
  })

  it.each(inQueries)('in a query (%s) is 400 and writes nothing', async (_name, refused) => {
    const before = await everyRow(server.database)
    const answer = await send(refused)
    expect([answer.status, answer.json?.code], answer.text).toEqual([400, 'error.request.malformed'])
    expect(await everyRow(server.database)).toEqual(before)
  })

  it('in the advisory cohort_hash is dropped: the sign-in succeeds and records no cohort', async () => {
    const answer = await raw(server, 'POST', '/v1/auth/login', {
      headers: json,
      body: JSON.stringify({ email: member.email, password: PASSWORD, cohort_hash: `cohort${NUL}` }),
    })
    expect(answer.status, answer.text).toBe(200)
    const cohorts = await readRows(server.database, `select cohort_hash from cohorts where user_id = '${member.userId}'`)
    expect(cohorts).toEqual([])
  })

  it('is nowhere logged as a failure', () => {
    expect(server.logs.filter((line) => (JSON.parse(line) as { level: number }).level >= 50)).toEqual([])
  })
})
