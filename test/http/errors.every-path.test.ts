// Every path of the committed OpenAPI document answers whatever no operation of it takes with a
// catalog problem: every method it does not declare (405, Allow naming those it does), a path
// parameter of the wrong form, too long, or not percent-encoded UTF-8 (400), a bearer operation
// without a credential (401), a body of the wrong media type (415) or JSON cut short (400); the
// status matches the catalog and nothing names the framework or leaks internals.
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { errorCatalog, type ErrorCode } from '../../src/contract/errors.ts'
import { registered } from '../support/actors.ts'
import { startServer, type TestServer } from '../support/server.ts'

interface Operation {
  readonly security?: readonly unknown[]
  readonly requestBody?: { readonly content: Record<string, unknown> }
}

const document = JSON.parse(readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8')) as { paths: Record<string, Record<string, Operation>> }
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'PROPFIND'] as const

/** The path with every parameter replaced by `value`. */
const withParameters = (template: string, value: string) => template.replace(/\{[^}]+\}/g, value)
const SAMPLE_ID = '3f0b0f46-4a4a-4c4c-8d8d-123456789abc'

/** Whether `template` matches the concrete `path` (a parameter is one segment). */
const matches = (template: string, path: string) => new RegExp(`^${withParameters(template, '[^/]+')}$`).test(path)

/**
 * Each path with the methods served on it: those declared by every operation whose template
 * matches it (/v1/auth/sessions/revoke-all is also /v1/auth/sessions/{session_id}), HEAD with GET.
 */
const paths = Object.entries(document.paths).map(([template, operations]) => {
  const path = withParameters(template, SAMPLE_ID)
  const declared = Object.entries(document.paths)
    .filter(([other]) => matches(other, path))
    .flatMap(([, ops]) => Object.keys(ops).map((m) => m.toUpperCase()))
  return { template, operations, declared: [...new Set(declared.includes('GET') ? [...declared, 'HEAD'] : declared)] }
})

/** What must never reach a client: framework names, stack frames, file paths, SQL. */
const INTERNALS = /fastify|FST_|find-my-way|avvio|node_modules|\bat [^ ]+ \(|\.ts:\d+|\bselect\b .* \bfrom\b|sqlite|postgres|kysely/i

const ADMIN_TOKEN = 'operator-token-of-at-least-thirty-two-characters'

let server: TestServer
let memberBearer: string
beforeAll(async () => {
  server = await startServer({ ADMIN_TOKEN })
  memberBearer = `Bearer ${(await registered(server, 'every-path')).client.tokens!.access_token}`
})

/** The credential an operation of this path takes: the operator's, or a member's. */
const bearerFor = (template: string) => (template.startsWith('/v1/admin/') ? `Bearer ${ADMIN_TOKEN}` : memberBearer)
afterAll(() => server.close())

async function send(method: string, path: string, init: { headers?: Record<string, string>; body?: string } = {}) {
  const response = await fetch(server.url + path, { method, headers: init.headers ?? {}, ...(init.body === undefined ? {} : { body: init.body }) })
  return { response, text: await response.text() }
}

/** A catalog problem with this status, consistent on every count, that leaks nothing. */
function expectProblem({ response, text }: Awaited<ReturnType<typeof send>>, status: number, method: string): Record<string, unknown> | undefined {
  expect(response.status, text).toBe(status)
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/)
  expect(response.headers.get('x-request-id')).toBeTruthy()
  expect(response.headers.get('x-content-type-options')).toBe('nosniff')
  expect([...response.headers.entries()].join('\n')).not.toMatch(INTERNALS)
  if (method === 'HEAD') return undefined // no body to read
  const problem = JSON.parse(text) as Record<string, unknown>
  expect(text).not.toMatch(INTERNALS)
  const code = problem.code as ErrorCode
  expect(errorCatalog[code], `${String(code)} is in the catalog`).toBeDefined()
  expect([problem.status, errorCatalog[code].status]).toEqual([status, status])
  return problem
}

describe('every path of openapi.json', () => {
  it('has paths to walk', () => {
    expect(paths.length).toBeGreaterThan(40)
  })

  it.each(paths.flatMap(({ template, declared }) => METHODS.filter((m) => !declared.includes(m)).map((method) => [method, template, declared] as const)))(
    '%s %s: 405 with Allow naming what it takes',
    async (method, template, declared) => {
      const answer = await send(method, withParameters(template, SAMPLE_ID), { headers: { authorization: bearerFor(template) } })
      const problem = expectProblem(answer, 405, method)
      if (problem !== undefined) expect(problem.code).toBe('error.request.method_not_allowed')
      expect(answer.response.headers.get('allow')?.split(', ').sort()).toEqual([...declared].sort())
    },
  )

  const parameterized = paths.filter(({ template }) => template.includes('{'))
  it.each(
    parameterized.flatMap(({ template, declared }) =>
      declared
        .filter((m) => m !== 'HEAD')
        .flatMap((method) => [
          [method, template, 'a parameter over the router limit', 'a'.repeat(2_000)] as const,
          [method, template, 'a parameter that is not percent-encoded UTF-8', '%E0%A4%A'] as const,
        ]),
    ),
  )('%s %s, %s: 400', async (method, template, _case, value) => {
    const problem = expectProblem(await send(method, withParameters(template, value), { headers: { authorization: bearerFor(template) } }), 400, method)
    expect(problem?.code).toBe('error.request.malformed')
  })

  const bearerOperations = paths.flatMap(({ template, operations }) =>
    Object.entries(operations)
      .filter(([, operation]) => (operation.security ?? []).length > 0)
      .map(([method]) => [method.toUpperCase(), template] as const),
  )
  it.each(bearerOperations)('%s %s without a credential: 401 with a challenge', async (method, template) => {
    const answer = await send(method, withParameters(template, SAMPLE_ID))
    const problem = expectProblem(answer, 401, method)
    expect(problem?.code).toBe('error.auth.unauthenticated')
    expect(answer.response.headers.get('www-authenticate')).toMatch(/^Bearer realm="coffer"/)
  })

  const bodyOperations = paths.flatMap(({ template, operations }) =>
    Object.entries(operations)
      .filter(([, operation]) => operation.requestBody !== undefined)
      .map(([method, operation]) => [method.toUpperCase(), template, Object.keys(operation.requestBody!.content)] as const),
  )
  it.each(bodyOperations)('%s %s with a body of a media type it does not take: 415', async (method, template) => {
    const problem = expectProblem(
      await send(method, withParameters(template, SAMPLE_ID), { headers: { authorization: bearerFor(template), 'content-type': 'text/x-nothing' }, body: 'x' }),
      415,
      method,
    )
    expect(problem?.code).toBe('error.request.unsupported_media_type')
  })

  it.each(bodyOperations.filter(([, , media]) => media.includes('application/json')))('%s %s with JSON cut short: 400', async (method, template) => {
    const problem = expectProblem(
      await send(method, withParameters(template, SAMPLE_ID), {
        headers: { authorization: bearerFor(template), 'content-type': 'application/json' },
        body: '{"a":',
      }),
      400,
      method,
    )
    expect(problem?.code).toBe('error.request.malformed')
  })
})
