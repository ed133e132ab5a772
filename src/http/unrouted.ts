// Requests refused before any route runs, answered as catalog problems like every other error
// (nothing names the framework): what Node's HTTP parser refuses (clientError), what the
// router refuses (a path that is not percent-encoded UTF-8, an overlong path parameter), an
// Expect other than 100-continue, CONNECT, and an HTTP/1.1 request without exactly one Host.
import { randomUUID } from 'node:crypto'
import type { FastifyError, FastifyHttpOptions, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { maxHeaderSize, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { errorCatalog } from '../contract/errors.ts'
import { AppError } from '../errors.ts'
import { logClientAbort } from './logging.ts'
import { answerError, PROBLEM_MEDIA, problemDocument } from './problem.ts'
import { requestId } from './request-id.ts'
import { UNROUTED_HEADERS } from './response-headers.ts'

/** Parser errors with a status of their own (Node's choices); any other one is a 400. */
const PARSER_REFUSALS: ReadonlyMap<string | undefined, () => AppError> = new Map([
  // Node counts the request line in the header section: an overlong URL lands here too.
  ['HPE_HEADER_OVERFLOW', () => new AppError('error.request.headers_too_large', `The request line and header fields exceed ${maxHeaderSize / 1024} KiB`)],
  ['HPE_CHUNK_EXTENSIONS_OVERFLOW', () => new AppError('error.request.too_large', 'The chunk extensions of the body exceed the limit')],
  ['ERR_HTTP_REQUEST_TIMEOUT', () => new AppError('error.request.timeout', 'The request did not arrive in time')],
])

/**
 * The whole HTTP/1.1 message of a problem written straight to a socket; it closes the
 * connection. `instance` is the path of the request it answers, when one was read.
 */
function rawProblem(error: AppError, id: string, instance: string | undefined): string {
  const status = errorCatalog[error.code].status
  const body = JSON.stringify(problemDocument(error, instance))
  const headers: Record<string, string> = {
    date: new Date().toUTCString(),
    'content-type': PROBLEM_MEDIA,
    'content-length': String(Buffer.byteLength(body)),
    ...UNROUTED_HEADERS,
    'x-request-id': id,
    connection: 'close',
  }
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n${body}`
}

/** Per connection, the response to its latest request (`response.req` is that request). */
const latestResponse = new WeakMap<Duplex, ServerResponse>()

/** Fastify's clientErrorHandler: Node's parser gave up on the bytes of a connection. */
function answerParserError(this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
  // A reset connection has nobody left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const refusal = PARSER_REFUSALS.get(error.code)?.() ?? new AppError('error.request.malformed', 'The request is not well-formed HTTP/1.1')
  const latest = latestResponse.get(socket)
  // The error is in the body of the latest request when that request never completed, else in
  // the head of a new one: then no request was read, and a fresh id still ties the answer to its
  // log line (API.md: every response carries X-Request-Id).
  const request = latest !== undefined && !latest.req.complete ? latest.req : undefined
  const id = request === undefined ? randomUUID() : requestId(request)
  // The connection ended inside a request's body: its client went away (a reload) or stopped
  // sending; it is still answered below if it reads on.
  if (error.code === 'HPE_INVALID_EOF_STATE' && request !== undefined) {
    logClientAbort(this.log, request, { request_id: id, cause: error.code, remoteAddress: socket.remoteAddress })
  } else {
    this.log.warn({ request_id: id, code: refusal.code, cause: error.code, remoteAddress: socket.remoteAddress }, 'request refused')
  }
  // Never splice an answer into a response already going out, nor answer a request twice.
  const answered = latest !== undefined && (request === undefined ? !latest.writableFinished : latest.headersSent)
  if (!socket.writable || answered) return void socket.destroy()
  socket.end(rawProblem(refusal, id, request?.url?.split('?')[0]), () => socket.destroy())
}

/** The router refused the path before any hook ran: the request id is set here. */
function answerRouterError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id).headers(UNROUTED_HEADERS)
  answerError(error, request, reply)
}

/** Options of the Fastify constructor that route these refusals here. */
export const unroutedOptions = {
  clientErrorHandler: answerParserError,
  frameworkErrors: answerRouterError,
  // Node's own answer to a missing Host is an empty 400; the hook below answers a problem.
  http: { requireHostHeader: false },
} satisfies FastifyHttpOptions<Server>

/** The number of Host field lines of a request. */
function hostLines(request: IncomingMessage): number {
  let count = 0
  for (let i = 0; i < request.rawHeaders.length; i += 2) if (request.rawHeaders[i]?.toLowerCase() === 'host') count++
  return count
}

export function registerUnroutedAnswers(app: FastifyInstance): void {
  app.server.on('request', (request: IncomingMessage, response: ServerResponse) => latestResponse.set(request.socket, response))

  // RFC 9110: an expectation other than 100-continue may be refused with 417 (Node sends an empty one).
  app.server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const refusal = new AppError('error.request.expectation_failed', 'Only Expect: 100-continue is supported')
    const id = requestId(request)
    app.log.warn({ request_id: id, code: refusal.code }, 'request refused')
    const body = JSON.stringify(problemDocument(refusal, request.url?.split('?')[0]))
    response.writeHead(417, { 'content-type': PROBLEM_MEDIA, 'content-length': Buffer.byteLength(body), ...UNROUTED_HEADERS, 'x-request-id': id }).end(body)
  })

  // This is no proxy: CONNECT is an operation that does not exist (Node would drop the connection silently).
  app.server.on('connect', (request: IncomingMessage, socket: Duplex) => {
    const refusal = new AppError('error.not_found', 'No operation CONNECT')
    const id = requestId(request)
    app.log.warn({ request_id: id, code: refusal.code }, 'request refused')
    // Its target is an authority, not a path: the problem names no instance.
    socket.end(rawProblem(refusal, id, undefined), () => socket.destroy())
  })

  // RFC 9112 section 3.2: exactly one Host in HTTP/1.1, at most one in HTTP/1.0.
  app.addHook('onRequest', (request, _reply, done) => {
    const hosts = hostLines(request.raw)
    const valid = request.raw.httpVersion === '1.1' ? hosts === 1 : hosts <= 1
    done(valid ? undefined : new AppError('error.request.malformed', 'An HTTP/1.1 request needs exactly one Host header'))
  })
}
