// Every error leaves as application/problem+json from the one catalog (API.md section 1):
// 400 parse, 413 size, 415 media type, 422 schema, 500 without internals. Expected outcomes
// are not logged, client mistakes at warn, faults at error with the request id.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { errorCatalog, problemType, type ErrorCode } from '../contract/errors.ts'
import { AppError } from '../errors.ts'

export const PROBLEM_MEDIA = 'application/problem+json'

export const BEARER_CHALLENGE = 'Bearer realm="coffer"'

export function sendProblem(request: FastifyRequest, reply: FastifyReply, error: AppError): FastifyReply {
  const entry = errorCatalog[error.code]
  const problem = {
    ...error.extensions,
    type: problemType(error.code),
    title: entry.title,
    status: entry.status,
    detail: error.message,
    instance: request.url.split('?')[0],
    code: error.code,
  }
  if (error.retryAfterS !== undefined) reply.header('retry-after', String(error.retryAfterS))
  if (error.code === 'error.auth.unauthenticated' && !reply.hasHeader('www-authenticate')) {
    reply.header('www-authenticate', BEARER_CHALLENGE)
  }
  return reply.code(entry.status).type(PROBLEM_MEDIA).send(JSON.stringify(problem))
}

/**
 * Maps what Fastify and its plugins throw (parsing, limits, validation, the docs page's
 * static files) onto the catalog.
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

export function registerProblemHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof AppError) return sendProblem(request, reply, error)
    const mapped = frameworkError(error)
    if (mapped) {
      // The framework's message can quote the body (a JSON parse error does): log codes only.
      request.log.warn({ code: mapped.code, cause: error.code ?? error.name }, 'request refused')
      return sendProblem(request, reply, mapped)
    }
    request.log.error({ err: error }, 'unexpected failure')
    return sendProblem(request, reply, new AppError('error.internal', 'The server failed to answer; the request id identifies it in the logs'))
  })
  app.setNotFoundHandler((request, reply) => sendProblem(request, reply, new AppError('error.not_found', `No operation ${request.method} ${request.url.split('?')[0]}`)))
}
