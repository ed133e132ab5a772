// pino, as Fastify's logger. Requests are logged by route pattern, never by raw URL (a path
// can carry a capability such as a channel id); headers and bodies are never logged, and the
// redaction list is a second line of defence for anything secret that reaches a log object.
import { pino, stdSerializers, type DestinationStream, type Logger } from 'pino'
import type { FastifyRequest } from 'fastify'
import type { LogLevel } from '../config.ts'

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  '*.authorization',
  '*.password',
  '*.current_password',
  '*.new_password',
  '*.access_token',
  '*.refresh_token',
  '*.mfa_token',
  '*.totp_code',
  '*.code',
  '*.text_fallback',
  '*.proof',
  '*.challenge',
  '*.secret',
]

function requestSummary(request: FastifyRequest) {
  return {
    method: request.method,
    route: request.routeOptions?.url ?? 'unmatched',
    remoteAddress: request.ip,
  }
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
  return destination ? pino(options, destination) : pino(options)
}
