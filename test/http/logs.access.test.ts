// One access-log line per request, with the same fields pino would write for it: level, time,
// pid, hostname, request_id, method, route pattern, status, duration, message. The line is built
// directly rather than through pino's generic path (http/logging.ts accessLine), so it is
// compared here to what pino itself writes for the same call, and read off a real request.
import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { accessLine, createLogger } from '../../src/http/logging.ts'
import { raw, registered } from '../support/actors.ts'
import { startServer, type TestServer } from '../support/server.ts'

const FIELDS = ['level', 'time', 'pid', 'hostname', 'request_id', 'method', 'route', 'statusCode', 'responseTime', 'msg']

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

function sink(written: string[]): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      written.push(chunk.toString('utf8'))
      done()
    },
  })
}

function linesOf(written: string[]): Array<Record<string, unknown>> {
  return written
    .join('')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>)
}

describe('the access line', () => {
  it('is what pino writes for the same fields, key for key', () => {
    const written: string[] = []
    const log = createLogger('info', sink(written))
    // Fastify's request logger is a child with the request id bound.
    const request = log.child({ request_id: 'req-1.a:b' })
    const fields = { method: 'PATCH', route: '/v1/albums/:albumId', statusCode: 409, responseTime: 12.345678 }
    request.info(fields, 'request completed')
    accessLine(request, fields.method, fields.route, fields.statusCode, fields.responseTime)
    const [byPino, built] = linesOf(written)
    expect(Object.keys(built!)).toEqual(Object.keys(byPino!))
    expect({ ...built, time: 0 }).toEqual({ ...byPino, time: 0 })
    expect(Object.keys(built!)).toEqual(FIELDS)
  })

  it('is written at info and not at warn', () => {
    const written: string[] = []
    const log = createLogger('warn', sink(written))
    accessLine(log.child({ request_id: 'r' }), 'GET', '/v1/profile', 200, 1)
    expect(written).toEqual([])
  })

  it('ends every request: its id, method, route pattern (never the URL), status and duration', async () => {
    const member = await registered(server, 'access-line')
    const response = await raw(server, 'GET', '/v1/profile', {
      headers: { authorization: `Bearer ${member.client.tokens!.access_token}`, 'x-request-id': 'access-line-1' },
    })
    expect(response.status).toBe(200)
    const lines = linesOf(server.logs.map((line) => `${line}\n`)).filter((line) => line.request_id === 'access-line-1' && line.msg === 'request completed')
    expect(lines).toHaveLength(1)
    expect(Object.keys(lines[0]!)).toEqual(FIELDS)
    expect(lines[0]).toMatchObject({ level: 30, method: 'GET', route: '/v1/profile', statusCode: 200, responseTime: expect.any(Number) })
  })
})
