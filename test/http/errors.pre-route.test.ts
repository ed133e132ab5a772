// Every request refused before an operation runs (by Node's HTTP parser, by the router, by
// the protocol checks, by the docs page's file server) is answered with a catalog problem
// with the right status, nosniff and no-store, an X-Request-Id when a request was read, and
// nothing that names the framework; none of them is a 500.
import { randomBytes } from 'node:crypto'
import { connect, type Socket } from 'node:net'
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

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/**
 * A catalog problem on every count: status, media type, members, headers, no framework name.
 * Its X-Request-Id is the one sent when a request was read, else a fresh one.
 */
function expectProblem(answer: RawAnswer, status: number, code: ErrorCode, requestId: 'echoed' | 'generated'): Record<string, unknown> {
  expect(answer.status, answer.head).toBe(status)
  expect(answer.headers.get('content-type'), answer.head).toMatch(/^application\/problem\+json/)
  const problem = JSON.parse(answer.body) as Record<string, unknown>
  expect(problem).toMatchObject({ type: problemType(code), title: errorCatalog[code].title, status, code, detail: expect.any(String) })
  expect(answer.headers.get('x-content-type-options')).toBe('nosniff')
  expect(answer.headers.get('cache-control')).toBe('no-store')
  if (requestId === 'echoed') expect(answer.headers.get('x-request-id')).toBe('edge-case-1')
  else expect(answer.headers.get('x-request-id')).toMatch(UUID)
  expect(answer.headers.has('server')).toBe(false)
  expect(answer.headers.has('x-powered-by')).toBe(false)
  expect(answer.head + answer.body).not.toMatch(FRAMEWORK)
  return problem
}

const HOST = 'Host: coffer.test\r\nX-Request-Id: edge-case-1\r\n'
const CHANNEL = randomBytes(32).toString('base64url')
const json = (body: string) => `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`

describe('refused by the router', () => {
  it.each([
    ['bad percent-encoding in the path', 400, 'error.request.malformed', `GET /v1/albums/%E0%A4%A HTTP/1.1\r\n${HOST}\r\n`],
    ['bad percent-encoding in a docs asset path', 400, 'error.request.malformed', `GET /docs/static/%E0%A4%A HTTP/1.1\r\n${HOST}\r\n`],
    [
      'a path parameter over the router limit',
      400,
      'error.request.malformed',
      `GET /v1/auth/devices/enroll/channel/${'a'.repeat(101)}?direction=to_initiator HTTP/1.1\r\n${HOST}\r\n`,
    ],
    [
      'bad percent-encoding in a query value',
      400,
      'error.request.malformed',
      `GET /v1/auth/devices/enroll/channel/${CHANNEL}?direction=%E0%A4%A HTTP/1.1\r\n${HOST}\r\n`,
    ],
    ['an unknown route', 404, 'error.not_found', `GET /v1/nothing-here HTTP/1.1\r\n${HOST}\r\n`],
    ['a method the path does not have', 405, 'error.request.method_not_allowed', `PROPFIND /v1/profile HTTP/1.1\r\n${HOST}\r\n`],
  ] as const)('%s: %i %s', async (_case, status, code, request) => {
    const problem = expectProblem(await exchange(request), status, code, 'echoed')
    expect(problem.instance).toBe(request.split(' ')[1]?.split('?')[0])
  })
})

describe('refused by Node’s HTTP parser, before any request exists', () => {
  it.each([
    ['an unknown method token', 400, 'error.request.malformed', `BREW / HTTP/1.1\r\n${HOST}\r\n`],
    ['a malformed request line', 400, 'error.request.malformed', 'hello\r\n\r\n'],
    ['an unknown HTTP version', 400, 'error.request.malformed', `GET / HTTP/9.9\r\n${HOST}\r\n`],
    ['a request target without a slash', 400, 'error.request.malformed', `GET healthz HTTP/1.1\r\n${HOST}\r\n`],
    ['a raw control byte in the target', 400, 'error.request.malformed', `GET /heal\x01thz HTTP/1.1\r\n${HOST}\r\n`],
    ['a space before a header colon', 400, 'error.request.malformed', `GET /healthz HTTP/1.1\r\n${HOST}X-A : b\r\n\r\n`],
    ['a folded header line', 400, 'error.request.malformed', `GET /healthz HTTP/1.1\r\n${HOST}X-A: a\r\n b\r\n\r\n`],
    [
      'both Content-Length and Transfer-Encoding',
      400,
      'error.request.malformed',
      `POST /v1/auth/login HTTP/1.1\r\n${HOST}Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
    ],
    ['an HTTP/2 preface', 400, 'error.request.malformed', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'],
    ['header fields over 16 KiB', 431, 'error.request.headers_too_large', `GET /healthz HTTP/1.1\r\n${HOST}X-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`],
    ['a URL over 16 KiB', 431, 'error.request.headers_too_large', `GET /healthz?${'a'.repeat(17 * 1024)} HTTP/1.1\r\n${HOST}\r\n`],
  ] as const)('%s: %i %s, with an id its log line names', async (_case, status, code, request) => {
    const answer = await exchange(request)
    const problem = expectProblem(answer, status, code, 'generated')
    expect(problem).not.toHaveProperty('instance')
    const id = answer.headers.get('x-request-id')
    expect(server.logs.filter((line) => line.includes(`"request_id":"${id}"`) && line.includes(`"code":"${code}"`))).toHaveLength(1)
  })
})

describe('refused by Node’s HTTP parser inside the body of a request', () => {
  it.each([
    [
      'a malformed chunk size',
      400,
      'error.request.malformed',
      `POST /v1/auth/login HTTP/1.1\r\n${HOST}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n`,
    ],
    [
      'chunk extensions over the limit',
      413,
      'error.request.too_large',
      `POST /v1/auth/login HTTP/1.1\r\n${HOST}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1${';a=b'.repeat(40_000)}\r\n{\r\n0\r\n\r\n`,
    ],
  ] as const)('%s: %i %s, naming the request', async (_case, status, code, request) => {
    const problem = expectProblem(await exchange(request), status, code, 'echoed')
    expect(problem.instance).toBe('/v1/auth/login')
  })
})

describe('a body cut short', () => {
  it('answers 400 when the client stops sending before Content-Length and half-closes', async () => {
    const received = await new Promise<Buffer>((resolve) => {
      const socket = connect({ port: Number(new URL(server.url).port), host: '127.0.0.1', allowHalfOpen: true })
      let bytes = Buffer.alloc(0)
      socket.on('data', (chunk: Buffer) => (bytes = Buffer.concat([bytes, chunk])))
      socket.on('error', () => {})
      socket.on('close', () => resolve(bytes))
      socket.end(`POST /v1/auth/login HTTP/1.1\r\n${HOST}Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"email":`)
    })
    const answer = parseAnswer(received)
    expect(answer, received.toString('latin1')).not.toBeNull()
    expectProblem(answer!, 400, 'error.request.malformed', 'echoed')
  })
})

/** Writes `first`, then `then` once a whole answer came back (when given); all bytes until the server closes. */
function untilClosed(first: string, then?: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(Number(new URL(server.url).port), '127.0.0.1')
    let received = Buffer.alloc(0)
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk])
      if (then !== undefined && parseAnswer(received) !== null) socket.write(then)
      then = undefined
    })
    socket.on('error', () => {})
    socket.on('close', () => resolve(received.toString('latin1')))
    socket.write(first)
  })
}

describe('a parser error on a connection whose request is being or was answered', () => {
  it('closes it without answering that request a second time', async () => {
    // The bearer check answers 401 before the body is read; the rest of that body is malformed.
    const received = await untilClosed(
      `PATCH /v1/profile HTTP/1.1\r\n${HOST}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n`,
      'zz\r\n',
    )
    expect(received.match(/^HTTP\/1\.1 /gm)).toEqual(['HTTP/1.1 '])
    expect(received).toMatch(/^HTTP\/1\.1 401 /)
  })

  it('closes it without an answer the client would take for the one of an earlier request', async () => {
    const received = await untilClosed(`POST /v1/auth/login HTTP/1.1\r\n${HOST}${json('{"email":"a@b.test","password":"x"}')}hello\r\n\r\n`)
    expect(received).toBe('')
  })
})

describe('refused by the protocol checks', () => {
  it.each([
    ['an HTTP/1.1 request without Host', 400, 'error.request.malformed', 'GET /healthz HTTP/1.1\r\nX-Request-Id: edge-case-1\r\n\r\n'],
    ['two Host lines', 400, 'error.request.malformed', `GET /healthz HTTP/1.1\r\n${HOST}Host: other.test\r\n\r\n`],
    ['an expectation other than 100-continue', 417, 'error.request.expectation_failed', `GET /healthz HTTP/1.1\r\n${HOST}Expect: tea\r\n\r\n`],
  ] as const)('%s: %i %s', async (_case, status, code, request) => {
    const problem = expectProblem(await exchange(request), status, code, 'echoed')
    expect(problem.instance).toBe('/healthz')
  })

  it('answers CONNECT, an operation this server does not have, as 404 and closes', async () => {
    const problem = expectProblem(await exchange(`CONNECT coffer.test:443 HTTP/1.1\r\n${HOST}\r\n`), 404, 'error.not_found', 'echoed')
    expect(problem).not.toHaveProperty('instance')
  })

  it('still serves an HTTP/1.0 request without Host', async () => {
    const answer = await exchange('GET /healthz HTTP/1.0\r\n\r\n')
    expect(answer.status).toBe(200)
    expect(JSON.parse(answer.body)).toEqual({ status: 'ok' })
  })

  it('answers a connection whose headers never complete with 408 (Node raises it after headersTimeout)', async () => {
    // Node checks headersTimeout (60 s) every 30 s: too slow to wait for here. The error it
    // raises is raised on a real, half-sent connection instead.
    const accepted = new Promise<Socket>((resolve) => server.app.server.once('connection', resolve))
    const answer = new Promise<RawAnswer>((resolve, reject) => {
      const socket = connect(Number(new URL(server.url).port), '127.0.0.1')
      let received = Buffer.alloc(0)
      socket.on('data', (chunk: Buffer) => {
        received = Buffer.concat([received, chunk])
        const parsed = parseAnswer(received)
        if (parsed !== null) resolve(parsed)
      })
      socket.on('close', () => reject(new Error('closed without an answer')))
      socket.write(`GET /healthz HTTP/1.1\r\n${HOST}X-Slow: `)
    })
    const serverSide = await accepted
    await new Promise((resolve) => setTimeout(resolve, 50))
    server.app.server.emit('clientError', Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), serverSide)
    expectProblem(await answer, 408, 'error.request.timeout', 'generated')
  })
})

describe('refused by what reads the body', () => {
  it.each([
    ['malformed JSON', 400, 'error.request.malformed', `POST /v1/auth/login HTTP/1.1\r\n${HOST}${json('{"email":')}`],
    ['an empty JSON body', 400, 'error.request.malformed', `POST /v1/auth/login HTTP/1.1\r\n${HOST}${json('')}`],
    ['a poisoned JSON body', 400, 'error.request.malformed', `POST /v1/auth/login HTTP/1.1\r\n${HOST}${json('{"__proto__":{"a":1}}')}`],
    [
      'a body over the limit',
      413,
      'error.request.too_large',
      `POST /v1/auth/login HTTP/1.1\r\n${HOST}Content-Type: application/json\r\nContent-Length: 2000000\r\n\r\n{`,
    ],
    [
      'a media type the operation does not take',
      415,
      'error.request.unsupported_media_type',
      `POST /v1/auth/login HTTP/1.1\r\n${HOST}Content-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}`,
    ],
    ['a body that breaks the schema', 422, 'error.request.invalid', `POST /v1/auth/login HTTP/1.1\r\n${HOST}${json('{}')}`],
  ] as const)('%s: %i %s', async (_case, status, code, request) => {
    const problem = expectProblem(await exchange(request), status, code, 'echoed')
    expect(problem.instance).toBe('/v1/auth/login')
  })
})

describe('refused by the docs page’s file server', () => {
  it.each([
    ['an unsatisfiable range', 416, 'error.request.range_not_satisfiable', 'index.css', 'Range: bytes=99999999-\r\n'],
    ['an If-Match that does not hold', 412, 'error.request.precondition_failed', 'index.css', 'If-Match: "not-this-one"\r\n'],
    [
      'an If-Unmodified-Since that does not hold',
      412,
      'error.request.precondition_failed',
      'index.css',
      'If-Unmodified-Since: Thu, 01 Jan 1970 00:00:00 GMT\r\n',
    ],
    ['a NUL byte in the path', 404, 'error.not_found', '%00', ''],
    ['an encoded dot-dot path', 404, 'error.not_found', '..%5c..%5cpackage.json', ''],
    ['a file that is not there', 404, 'error.not_found', 'nothing.js', ''],
  ] as const)('%s: %i %s', async (_case, status, code, file, header) => {
    const problem = expectProblem(await exchange(`GET /docs/static/${file} HTTP/1.1\r\n${HOST}${header}\r\n`), status, code, 'echoed')
    expect(problem.instance).toBe(`/docs/static/${file}`)
  })
})
