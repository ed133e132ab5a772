// The bearer check: `Authorization: Bearer <token>`, one indexed lookup on the token's hash.
// A header in the Bearer scheme with anything after it counts as a presented token (RFC 6750
// `invalid_token` when it is refused); no header, a bare `Bearer` or another scheme does not.
import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { hashToken } from '../crypto/tokens.ts'
import type { Deps } from '../deps.ts'
import { bearerIsLive } from '../domain/session.ts'
import { AppError } from '../errors.ts'
import type { Caller } from '../features/context.ts'
import { BEARER_CHALLENGE } from './problem.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the bearer check on `bearer` operations. */
    caller: Caller | null
    /** The presented token, well-formed or not, on `bearer-presented` operations. */
    bearerToken: string | null
  }
}

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i
const BEARER_SCHEME = /^Bearer +/i

/** The well-formed token (RFC 6750 b64token) of a Bearer header, else null. */
export function bearerToken(header: string | undefined): string | null {
  return header === undefined ? null : (BEARER.exec(header)?.[1] ?? null)
}

/** Whatever follows `Bearer ` in the header, well-formed or not; null when nothing does. */
export function presentedBearer(header: string | undefined): string | null {
  if (header === undefined) return null
  const scheme = BEARER_SCHEME.exec(header)
  const credential = scheme === null ? '' : header.slice(scheme[0].length).trim()
  return credential === '' ? null : credential
}

export function requireCaller(request: FastifyRequest): Caller {
  if (request.caller === null) throw new Error(`${request.routeOptions.url ?? request.url} is not a bearer operation`)
  return request.caller
}

export function registerBearerCheck(app: FastifyInstance, deps: Deps): void {
  app.decorateRequest('caller', null)
  app.decorateRequest('bearerToken', null)
  const check = async (request: FastifyRequest, reply: FastifyReply) => {
    const mode = request.routeOptions.config.auth
    const header = request.headers.authorization
    const token = bearerToken(header)
    // Well-formed tokens, the usual case, are parsed once.
    const presented = token ?? presentedBearer(header)
    if (presented === null) throw new AppError('error.auth.unauthenticated', 'An Authorization: Bearer <access_token> header is required')
    // A link's session is looked up by the link's handlers (features/links), against the link.
    if (mode === 'link') return
    if (mode === 'bearer-presented') {
      request.bearerToken = presented
      return
    }
    // A malformed token matches no session, so it is refused without a lookup.
    const session = token === null ? undefined : await deps.storage.findBearerSession(hashToken(token))
    if (session === undefined || !bearerIsLive(session, deps.clock.now())) {
      reply.header('www-authenticate', `${BEARER_CHALLENGE}, error="invalid_token"`)
      throw new AppError('error.auth.unauthenticated', 'The access token is malformed, unknown, revoked or expired')
    }
    request.caller = { sessionId: session.sessionId, userId: session.account.userId, authenticatedAt: session.authenticatedAt, account: session.account }
  }
  // The operator credential, compared in constant time (over digests, so lengths never leak).
  const adminDigest = deps.config.adminToken === null ? null : createHash('sha256').update(deps.config.adminToken).digest()
  const checkAdmin = async (request: FastifyRequest) => {
    const token = bearerToken(request.headers.authorization)
    const presented = createHash('sha256')
      .update(token ?? '')
      .digest()
    if (token === null || adminDigest === null || !timingSafeEqual(presented, adminDigest)) {
      throw new AppError('error.auth.unauthenticated', 'The operator API needs Authorization: Bearer <ADMIN_TOKEN>')
    }
  }
  // Attached to the operations that need it only, so that the others pay nothing per request.
  app.addHook('onRoute', (route) => {
    const mode = route.config?.auth
    if (mode === 'bearer' || mode === 'bearer-presented' || mode === 'link') route.onRequest = [check, ...toArray(route.onRequest)]
    if (mode === 'admin') route.onRequest = [checkAdmin, ...toArray(route.onRequest)]
  })
}

export function toArray<T>(value: T | readonly T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? [...(value as readonly T[])] : [value as T]
}
