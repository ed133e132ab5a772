// Headers on every response, set in one onSend hook (a hook per header costs every request its
// own call): `X-Request-Id` (http/request-id.ts), `X-Content-Type-Options: nosniff`,
// `Connection: close` once the server is closing, and `Cache-Control` from the
// operation's declared cache policy (route.ts `cache`). Any answer may carry a token, a TOTP
// secret, a capability (channel id, enrollment code) or private bytes, so the default is
// `no-store`; a problem and a redirect (its Location may be a presigned URL) are always `no-store`. Answers Node or the router give before any hook
// runs take the same values from UNROUTED_HEADERS (http/unrouted.ts).
import type { FastifyInstance } from 'fastify'

/**
 * no-store: nothing keeps the answer. private-revalidate: `private, no-cache`, for reads with
 * an ETag, so that the client's own cache keeps the bytes and asks again with If-None-Match
 * (a 304 then costs no body), while no shared cache stores them. immutable: a public file
 * whose name carries its content hash (the web app's assets), kept for a year.
 */
export type CachePolicy = 'no-store' | 'private-revalidate' | 'immutable'

const CACHE_CONTROL: Readonly<Record<CachePolicy, string>> = {
  'no-store': 'no-store',
  'private-revalidate': 'private, no-cache',
  immutable: 'public, max-age=31536000, immutable',
}

export const UNROUTED_HEADERS = {
  'cache-control': CACHE_CONTROL['no-store'],
  'x-content-type-options': 'nosniff',
} as const

/** `closing`: true once the server began to close (a keep-alive client must not hold it open). */
export function registerResponseHeaders(app: FastifyInstance, closing: () => boolean): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    const cacheable = reply.statusCode < 300 || reply.statusCode === 304
    const policy = cacheable ? (request.routeOptions.config.cache ?? 'no-store') : 'no-store'
    reply.header('x-request-id', request.id).header('cache-control', CACHE_CONTROL[policy]).header('x-content-type-options', 'nosniff')
    if (closing()) reply.header('connection', 'close')
    done(null, payload)
  })
}
