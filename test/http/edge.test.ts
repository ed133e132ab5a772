// The HTTP edge answers every error as a catalog problem, tags every response with a request
// id, and serves health, readiness, metrics, the OpenAPI document and its docs page.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { raw, registered } from '../support/actors.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

describe('problems', () => {
  it('answers an unknown route with a 404 problem', async () => {
    const response = await raw(server, 'GET', '/v1/nothing-here?x=1')
    expect(response.status).toBe(404)
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/)
    expect(response.json).toEqual({
      type: '/problems/not_found',
      title: 'Not found',
      status: 404,
      detail: expect.any(String),
      instance: '/v1/nothing-here',
      code: 'error.not_found',
    })
  })

  it('answers a bodyless operation that got an empty JSON body as usual', async () => {
    const member = await registered(server)
    const response = await raw(server, 'POST', '/v1/auth/totp/enroll', {
      headers: { authorization: `Bearer ${member.client.tokens?.access_token}`, 'content-type': 'application/json' },
      body: '',
    })
    expect(response.status).toBe(200)
  })

  it('refuses a JSON body with a poisoned __proto__ as 400', async () => {
    const response = await raw(server, 'POST', '/v1/auth/login', {
      headers: { 'content-type': 'application/json' },
      body: '{"email":"a@b","password":"x","__proto__":{"admin":true}}',
    })
    expect(response.status).toBe(400)
    expect(response.json?.code).toBe('error.request.malformed')
  })
})

describe('X-Request-Id', () => {
  it('echoes a usable request id, on success and on error', async () => {
    const ok = await raw(server, 'GET', '/healthz', { headers: { 'x-request-id': 'client-abc.123' } })
    expect(ok.headers.get('x-request-id')).toBe('client-abc.123')
    const missing = await raw(server, 'GET', '/v1/missing', { headers: { 'x-request-id': 'client-def' } })
    expect(missing.headers.get('x-request-id')).toBe('client-def')
    expect(server.logs.some((line) => line.includes('"request_id":"client-def"'))).toBe(true)
  })

  it.each([
    ['absent', undefined],
    ['with spaces', 'a b'],
    ['too long', 'x'.repeat(129)],
    ['with a newline-ish quote', 'a"b'],
  ])('generates a UUID when the sent one is %s', async (_case, sent) => {
    const response = await raw(server, 'GET', '/healthz', sent === undefined ? {} : { headers: { 'x-request-id': sent } })
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
  })
})

describe('operations endpoints', () => {
  it('serves /healthz and /readyz', async () => {
    expect((await raw(server, 'GET', '/healthz')).json).toEqual({ status: 'ok' })
    expect((await raw(server, 'GET', '/readyz')).json).toEqual({ status: 'ready' })
  })

  it('counts requests by route pattern and status in /metrics', async () => {
    const member = await registered(server)
    const sessions = await member.client.listSessions()
    await raw(server, 'DELETE', `/v1/auth/sessions/${sessions.sessions[0]?.session_id.replace(/.$/, '0')}`, {
      headers: { authorization: `Bearer ${member.client.tokens?.access_token}` },
    })
    const metrics = await raw(server, 'GET', '/metrics')
    expect(metrics.status).toBe(200)
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/)
    expect(metrics.text).toMatch(/coffer_http_requests_total\{method="GET",route="\/v1\/auth\/sessions",status="200"\} [1-9]/)
    expect(metrics.text).toMatch(/coffer_http_requests_total\{method="DELETE",route="\/v1\/auth\/sessions\/:session_id",status="(204|404)"\} 1/)
    expect(metrics.text).toMatch(/coffer_http_request_duration_seconds_bucket\{le="0.1",method="POST",route="\/v1\/auth\/register",status="200"\} [1-9]/)
  })

  it('serves the OpenAPI document and its docs page', async () => {
    const document = await raw(server, 'GET', '/openapi.json')
    expect(document.json).toMatchObject({ openapi: '3.1.0', info: { title: 'Coffer' } })
    const docs = await fetch(`${server.url}/docs/`, { redirect: 'follow' })
    expect(docs.status).toBe(200)
    expect(await docs.text()).toContain('swagger-ui')
  })
})

describe('faults', () => {
  it('answers a database failure with a 500 problem that carries no internals, and /readyz with 503', async () => {
    const broken = await startServer()
    try {
      const member = await registered(broken)
      await broken.deps.storage.close()
      const response = await raw(broken, 'GET', '/v1/profile', {
        headers: { authorization: `Bearer ${member.client.tokens?.access_token}`, 'x-request-id': 'fault-1' },
      })
      expect(response.status).toBe(500)
      expect(response.json).toMatchObject({ code: 'error.internal', status: 500, type: '/problems/internal' })
      expect(response.text).not.toMatch(/at |select|kysely|sqlite|postgres|stack/i)
      const logged = broken.logs
        .map((line) => JSON.parse(line) as { level: number; request_id?: string; err?: unknown })
        .find((l) => l.request_id === 'fault-1' && l.level === 50)
      expect(logged?.err).toBeDefined()
      const ready = await raw(broken, 'GET', '/readyz')
      expect(ready.status).toBe(503)
      expect(ready.json?.code).toBe('error.unavailable')
      expect(ready.headers.get('retry-after')).toBe('5')
    } finally {
      await broken.close()
    }
  })
})
