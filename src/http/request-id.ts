// X-Request-Id: echoed when the client sends a usable one, generated otherwise; on every
// response (set with the other response headers, http/response-headers.ts) and in every log
// line of the request.
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

const USABLE = /^[A-Za-z0-9._:-]{1,128}$/

/** Ids already given, so that an answer written beside Fastify (http/unrouted.ts) names the same one. */
const given = new WeakMap<IncomingMessage, string>()

export function requestId(request: IncomingMessage): string {
  const known = given.get(request)
  if (known !== undefined) return known
  const sent = request.headers['x-request-id']
  const id = typeof sent === 'string' && USABLE.test(sent) ? sent : randomUUID()
  given.set(request, id)
  return id
}
