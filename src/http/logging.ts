// pino, as Fastify's logger. Requests are logged by route pattern, never by raw URL (a path
// can carry a capability such as a channel id); headers and bodies are never logged, and the
// redaction list is a second line of defence for the headers that carry credentials
// (test/http/logs.secrets.test.ts reads every line a full account life writes).
import { pino, stdSerializers, type DestinationStream, type Logger } from 'pino'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { IncomingMessage } from 'node:http'
import type { LogLevel } from '../config.ts'

// Explicit paths only: a wildcard path makes the redactor walk every key of every line.
export const REDACTED_PATHS = ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'headers.cookie', 'err.headers.authorization']

function requestSummary(request: FastifyRequest) {
  return {
    method: request.method,
    route: request.routeOptions?.url ?? 'unmatched',
    remoteAddress: request.ip,
  }
}

const { chindingsSym, streamSym } = pino.symbols

/** A pino logger with the fields pino.symbols names (its bindings as written, its stream). */
type PinoInternals = Pick<Logger, 'levels' | 'isLevelEnabled'> & Readonly<Record<symbol, unknown>>

/**
 * The access line, exactly as `log.info({ method, route, statusCode, responseTime }, 'request
 * completed')` writes it (test/http/logs.access.test.ts compares the two), built directly: it is
 * written for every request, and pino's generic path (a serializer and redaction look-up per
 * key, a type switch per value) costs more than the line. Its values carry nothing secret:
 * the bindings are pid, hostname and the request id (http/request-id.ts), the route is the
 * pattern, never the URL.
 */
export function accessLine(log: FastifyRequest['log'], method: string, route: string, statusCode: number, responseTime: number): void {
  const pinoLog = log as unknown as PinoInternals
  if (!pinoLog.isLevelEnabled('info')) return
  const fields = `"method":${JSON.stringify(method)},"route":${JSON.stringify(route)},"statusCode":${statusCode},"responseTime":${responseTime}`
  const bindings = pinoLog[chindingsSym] as string
  const stream = pinoLog[streamSym] as DestinationStream
  stream.write(`{"level":${pinoLog.levels.values.info},"time":${Date.now()}${bindings},${fields},"msg":"request completed"}\n`)
}

/**
 * One access-log line per request, when it completes (Fastify's own pair of lines is turned
 * off in app.ts): method, route pattern, status, duration, with the request id. Its arrival
 * is logged at debug.
 */
export function registerRequestLog(app: FastifyInstance): void {
  if (app.log.level === 'debug' || app.log.level === 'trace') {
    app.addHook('onRequest', (request, _reply, done) => {
      request.log.debug({ method: request.method, route: request.routeOptions.url ?? 'unmatched' }, 'request received')
      done()
    })
  }
  app.addHook('onResponse', (request, reply, done) => {
    accessLine(request.log, request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime)
    done()
  })
}

/** The requests whose abort is logged already: the parser and the handler may both see it. */
const abortsLogged = new WeakSet<IncomingMessage>()

/**
 * A request its client gave up on before sending all of it (a reload, a closed tab, a cut
 * network): not the server's fault nor a malformed request, so one info line, no stack, once
 * per request however many places notice it. `fields` say where it was noticed.
 */
export function logClientAbort(log: Pick<Logger, 'info'>, request: IncomingMessage, fields: Record<string, unknown>): void {
  if (abortsLogged.has(request)) return
  abortsLogged.add(request)
  log.info(fields, 'request aborted by the client')
}

/** What a read of a request's body fails with when its client went away mid-body. */
const ABORT_CODES: ReadonlySet<string | undefined> = new Set(['ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ERR_STREAM_PREMATURE_CLOSE'])

/** Whether `error` is the client leaving before the whole request arrived. */
export function abortedByClient(error: Error & { code?: string }, request: IncomingMessage): boolean {
  return !request.complete && (ABORT_CODES.has(error.code) || error.message === 'aborted')
}

export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  const options = {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    serializers: {
      req: requestSummary,
      res: (reply: { statusCode: number }) => ({ statusCode: reply.statusCode }),
      err: stdSerializers.err,
    },
  }
  // Asynchronous writes to stdout: lines that arrive while a write is in flight go out together
  // in the next one (under load, one syscall per batch rather than per line). pino
  // flushes the buffer when the process exits (and on SIGTERM/SIGINT through main.ts's close).
  return pino(options, destination ?? pino.destination({ dest: 1, sync: false }))
}
