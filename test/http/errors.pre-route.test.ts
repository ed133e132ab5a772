// Every request refused before an operation runs is answered with a catalog problem with the
// right status, nosniff and no-store, its X-Request-Id, and nothing that names the framework;
// none of them is a 500.
import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { errorCatalog, problemType, type ErrorCode } from '../../src/contract/errors.ts'
import { startServer, type TestServer } from '../support/server.ts'

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

interface RawAnswer {
  readonly status: number
  readonly head: string
  readonly headers: ReadonlyMap<string, string>
  readonly body: string
}

/** One response read off a socket, framed by its Content-Length. */
function parseAnswer(received: Buffer): RawAnswer | null {
  const end = received.indexOf('\r\n\r\n')
  if (end < 0) return null
  const head = received.subarray(0, end).toString('latin1')
  const [statusLine = '', ...lines] = head.split('\r\n')
  const headers = new Map(lines.map((line) => [line.slice(0, line.indexOf(':')).trim().toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]))
  const length = Number(headers.get('content-length'))
  if (!Number.isInteger(length) || received.length < end + 4 + length) return null
  return { status: Number(statusLine.split(' ')[1]), head, headers, body: received.subarray(end + 4, end + 4 + length).toString('utf8') }
}

/** Writes raw bytes on a fresh connection (what fetch would never send) and reads the answer. */
function exchange(request: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(server.url).port), '127.0.0.1')
    let received = Buffer.alloc(0)
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk])
      const answer = parseAnswer(received)
      if (answer === null) return
      socket.destroy()
      resolve(answer)
    })
    // The server may close while a large request is still being written.
    socket.on('error', () => {})
    socket.on('close', () => reject(new Error(`connection closed without a whole answer: ${JSON.stringify(received.toString('latin1'))}`)))
    socket.write(request)
  })
}

const FRAMEWORK = /fastify|FST_|find-my-way|avvio|Route [A-Z]+:.* not found|express|node\.js/i

/** A catalog problem on every count: status, media type, members, headers, no framework name. */
function expectProblem(answer: RawAnswer, status: number, code: ErrorCode): Record<string, unknown> {
  expect(answer.status, answer.head).toBe(status)
  expect(answer.headers.get('content-type'), answer.head).toMatch(/^application\/problem\+json/)
  const problem = JSON.parse(answer.body) as Record<string, unknown>
  expect(problem).toMatchObject({ type: problemType(code), title: errorCatalog[code].title, status, code, detail: expect.any(String) })
  expect(answer.headers.get('x-content-type-options')).toBe('nosniff')
  expect(answer.headers.get('cache-control')).toBe('no-store')
  expect(answer.headers.get('x-request-id')).toBe('edge-case-1')
  expect(answer.headers.has('server')).toBe(false)
  expect(answer.headers.has('x-powered-by')).toBe(false)
  expect(answer.head + answer.body).not.toMatch(FRAMEWORK)
  return problem
}

const HOST = 'Host: coffer.test\r\nX-Request-Id: edge-case-1\r\n'

describe('refused by the docs page’s file server', () => {
  it.each([
    ['an unsatisfiable range', 416, 'error.request.range_not_satisfiable', 'index.css', 'Range: bytes=99999999-\r\n'],
    ['an If-Match that does not hold', 412, 'error.request.precondition_failed', 'index.css', 'If-Match: "not-this-one"\r\n'],
    ['an If-Unmodified-Since that does not hold', 412, 'error.request.precondition_failed', 'index.css', 'If-Unmodified-Since: Thu, 01 Jan 1970 00:00:00 GMT\r\n'],
    ['a NUL byte in the path', 404, 'error.not_found', '%00', ''],
    ['an encoded dot-dot path', 404, 'error.not_found', '..%5c..%5cpackage.json', ''],
    ['a file that is not there', 404, 'error.not_found', 'nothing.js', ''],
  ] as const)('%s: %i %s', async (_case, status, code, file, header) => {
    const problem = expectProblem(await exchange(`GET /docs/static/${file} HTTP/1.1\r\n${HOST}${header}\r\n`), status, code)
    expect(problem.instance).toBe(`/docs/static/${file}`)
  })
})
