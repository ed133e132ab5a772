// X-Request-Id: echoed when the client sends a usable one, generated otherwise; on every
// response and in every log line of the request.
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import type { IncomingMessage } from 'node:http'

const USABLE = /^[A-Za-z0-9._:-]{1,128}$/

export function requestId(request: IncomingMessage): string {
  const sent = request.headers['x-request-id']
  return typeof sent === 'string' && USABLE.test(sent) ? sent : randomUUID()
}

export function registerRequestIdHeader(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    done()
  })
}
