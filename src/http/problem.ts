// Every error leaves as application/problem+json from the one catalog (API.md section 1):
// 400 parse, 413 size, 415 media type, 422 schema, 503 when the database cannot be reached,
// 500 without internals. Expected outcomes are not logged, a client that went away mid-request
// at info, client mistakes and an unreachable database at warn, faults at error with the request id.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { errorCatalog, problemType, type ErrorCode } from '../contract/errors.ts'
import { AppError } from '../errors.ts'
import { BlobStoreUnavailableError } from '../blob-store/port.ts'
import { StorageUnavailableError } from '../storage/port.ts'
import { abortedByClient, logClientAbort } from './logging.ts'

export const PROBLEM_MEDIA = 'application/problem+json'

export const BEARER_CHALLENGE = 'Bearer realm="coffer"'

/**
 * Retry-After on every 503: a database restart or failover takes seconds, and clients that wait
 * this long between tries do not pile onto a database that is coming back.
 */
export const UNAVAILABLE_RETRY_AFTER_S = 5

export function unavailable(detail: string): AppError {
  return new AppError('error.unavailable', detail, { retryAfterS: UNAVAILABLE_RETRY_AFTER_S })
}

/** The RFC 9457 document of `error`; `instance` is absent when the request has no path to name. */
export function problemDocument(error: AppError, instance: string | undefined): Record<string, unknown> {
  const entry = errorCatalog[error.code]
  return {
    ...error.extensions,
    type: problemType(error.code),
    title: entry.title,
    status: entry.status,
    detail: error.message,
    ...(instance === undefined ? {} : { instance }),
    code: error.code,
  }
}

export function sendProblem(request: FastifyRequest, reply: FastifyReply, error: AppError): FastifyReply {
  if (error.retryAfterS !== undefined) reply.header('retry-after', String(error.retryAfterS))
  if (error.code === 'error.auth.unauthenticated' && !reply.hasHeader('www-authenticate')) {
    reply.header('www-authenticate', BEARER_CHALLENGE)
  }
  const problem = problemDocument(error, request.url.split('?')[0])
  return reply.code(errorCatalog[error.code].status).type(PROBLEM_MEDIA).send(JSON.stringify(problem))
}

/**
 * Maps what Fastify, its router and its plugins throw (parsing, limits, validation, the docs
 * page's static files) onto the catalog. Their messages are used only where they describe
 * the client's input in plain words; codes naming the framework never leave.
 */
function frameworkError(error: FastifyError): AppError | null {
  if (error.validation) {
    const code: ErrorCode = error.validationContext === 'body' ? 'error.request.invalid' : 'error.request.malformed'
    return new AppError(code, error.message)
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_ERR_REQ_FILE_TOO_LARGE':
      return new AppError('error.request.too_large', 'The request body exceeds the configured limit')
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('error.request.unsupported_media_type', 'This operation does not accept that Content-Type')
    case 'FST_ERR_BAD_URL':
      return new AppError('error.request.malformed', 'The path is not valid percent-encoded UTF-8')
    // Fastify says 414; the path is fine, one of its ids is of the wrong form (API.md: 400).
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new AppError('error.request.malformed', 'A path parameter is longer than any identifier of this service')
    // A docs asset path that is not canonical (dot segments, NUL): it names nothing served.
    case 'FST_STATIC_FORBIDDEN_PATH':
      return new AppError('error.not_found', 'No such resource')
  }
  if (error instanceof SyntaxError) return new AppError('error.request.malformed', error.message)
  switch (error.statusCode) {
    case 400:
      return new AppError('error.request.malformed', error.message)
    case 404:
      return new AppError('error.not_found', 'No such resource')
    case 412:
      return new AppError('error.request.precondition_failed', 'A condition of the request (If-Match, If-Unmodified-Since) does not hold')
    case 413:
      return new AppError('error.request.too_large', 'The request body exceeds the configured limit')
    case 415:
      return new AppError('error.request.unsupported_media_type', error.message)
    case 416:
      return new AppError('error.request.range_not_satisfiable', 'The range starts beyond the end of the file')
  }
  // Any other refusal a library makes is still about the client's request: never a 500.
  const status = error.statusCode ?? 500
  return status >= 400 && status < 500 ? new AppError('error.request.malformed', 'The request cannot be served as sent') : null
}

/** The blob folder's disk full or failing under a write (the write itself removed its partial file). */
export function storageFault(error: Error & { code?: string }): AppError | null {
  switch (error.code) {
    case 'ENOSPC':
    case 'EDQUOT':
      return new AppError('error.storage.full', 'The server has no room left to store these bytes; nothing was kept')
    case 'EIO':
    case 'EROFS':
      return new AppError('error.storage.failing', 'The server could not write these bytes to its storage; nothing was kept')
  }
  return null
}

/** The error handler: a catalog problem for every error, whatever raised it. */
export function answerError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof AppError) return sendProblem(request, reply, error)
  const fault = storageFault(error)
  if (fault) {
    // The operator's problem, not the client's: at error, with the system's own code.
    request.log.error({ code: fault.code, cause: error.code }, 'storage fault')
    return sendProblem(request, reply, fault)
  }
  if (error instanceof BlobStoreUnavailableError) {
    // The bucket's endpoint is down, refusing or failing: the request may succeed later.
    request.log.warn({ code: 'error.unavailable', cause: error.message }, 'blob store unavailable')
    return sendProblem(request, reply, unavailable('The blob store cannot be reached; nothing was changed; try again after Retry-After seconds'))
  }
  if (error instanceof StorageUnavailableError) {
    // Not a fault of this server: the operation may succeed once the database answers again.
    request.log.warn({ code: 'error.unavailable', cause: error.message }, 'database unavailable')
    return sendProblem(request, reply, unavailable('The database cannot be reached or the connection to it was lost; try again after Retry-After seconds'))
  }
  if (abortedByClient(error, request.raw)) {
    // Nobody is left to read an answer; the one sent is for the access log's status.
    logClientAbort(request.log, request.raw, { cause: error.code ?? error.name })
    return sendProblem(request, reply, new AppError('error.request.malformed', 'The client closed the request before sending all of it'))
  }
  const mapped = frameworkError(error)
  if (mapped) {
    // The framework's message can quote the body (a JSON parse error does): log codes only.
    request.log.warn({ code: mapped.code, cause: error.code ?? error.name }, 'request refused')
    return sendProblem(request, reply, mapped)
  }
  request.log.error({ err: error }, 'unexpected failure')
  return sendProblem(request, reply, new AppError('error.internal', 'The server failed to answer; the request id identifies it in the logs'))
}

/** Every method an operation can have (Fastify answers HEAD for each GET). */
const OPERATION_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const

/**
 * Nothing answers this method and path: 405 with `Allow` when operations have the path with
 * other methods; else 404 (no operation has the path, or its own operation found nothing to
 * serve, as the docs page's file server does for a file that is not there).
 */
function answerNoOperation(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const path = request.url.split('?')[0] ?? '/'
  const allowed = OPERATION_METHODS.filter((method) => app.findRoute({ method, url: path }) !== null)
  if (allowed.length === 0 || allowed.some((method) => method === request.method)) {
    return sendProblem(request, reply, new AppError('error.not_found', `No operation ${request.method} ${path}`))
  }
  reply.header('allow', allowed.join(', '))
  return sendProblem(request, reply, new AppError('error.request.method_not_allowed', `${path} takes ${allowed.join(', ')}, not ${request.method}`))
}

export function registerProblemHandlers(app: FastifyInstance): void {
  app.setErrorHandler(answerError)
  app.setNotFoundHandler((request, reply) => answerNoOperation(app, request, reply))
}
