// The OpenAPI 3.1 document, generated from the route schemas. Error responses are added from
// each operation's declared catalog codes plus the generic ones every operation of its kind
// can answer, so the document lists exactly what the route can say.
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyContextConfig, FastifyInstance } from 'fastify'
import { CodedProblem, errorCatalog, extendedProblems, type ErrorCode } from '../contract/errors.ts'
import { PROBLEM_MEDIA } from './problem.ts'

export const API_VERSION = '1.0.0'

/**
 * The Content-Security-Policy of the /docs page and its assets. The page loads only its own
 * files (no inline script, no eval), calls only this origin for the document and for "Try it
 * out", and may not be framed by anyone: a page that sends bearer requests is a clickjacking
 * target. No `upgrade-insecure-requests`: the server is plain HTTP behind its proxy or on a
 * loopback address, where upgraded requests would fail.
 */
const DOCS_CSP = {
  'default-src': ["'self'"],
  'script-src': ["'self'"],
  'script-src-attr': ["'none'"],
  'style-src': ["'self'"],
  'img-src': ["'self'", 'data:'],
  'font-src': ["'self'", 'data:'],
  'connect-src': ["'self'"],
  'object-src': ["'none'"],
  'base-uri': ["'none'"],
  'form-action': ["'none'"],
  'frame-ancestors': ["'none'"],
}

interface DocumentedSchema {
  hide?: boolean
  body?: unknown
  params?: unknown
  querystring?: unknown
  response?: Record<string, unknown>
}

/**
 * Every catalog code an operation can answer, generic ones included. 503 (the database cannot
 * be reached) is generic like 500: the few operations that never read the database, such as
 * /healthz, are not told apart.
 */
export function operationCodes(config: FastifyContextConfig, schema: DocumentedSchema): ErrorCode[] {
  const codes = new Set<ErrorCode>(['error.request.too_large', 'error.internal', 'error.unavailable'])
  if (config.auth !== undefined && config.auth !== 'none') codes.add('error.auth.unauthenticated')
  if (config.accepts) {
    codes.add('error.request.malformed')
    codes.add('error.request.unsupported_media_type')
    codes.add('error.request.invalid')
  }
  if (schema.params || schema.querystring) codes.add('error.request.malformed')
  for (const code of config.errors ?? []) codes.add(code)
  return [...codes]
}

function problemSchema(codes: readonly ErrorCode[]): unknown {
  const extended = codes.flatMap((code) => extendedProblems[code] ?? [])
  return extended.length === 0 ? CodedProblem : { anyOf: [...extended, CodedProblem] }
}

function problemResponses(codes: readonly ErrorCode[]): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>()
  for (const code of codes) {
    const status = errorCatalog[code].status
    byStatus.set(status, [...(byStatus.get(status) ?? []), code])
  }
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [
      status,
      {
        description: list.map((code) => `\`${code}\``).join(', '),
        content: { [PROBLEM_MEDIA]: { schema: problemSchema(list) } },
      },
    ]),
  )
}

export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Coffer',
        version: API_VERSION,
        description: 'End-to-end-encrypted photo albums: accounts, sessions, devices, albums and custody receipts. Errors are RFC 9457 problems with a stable `code`.',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'An access token from register, login, verify login or refresh' },
          admin: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN (operator API; enabled only when it is set)' },
        },
      },
    },
    transform: ({ schema, url, route }) => {
      const documented = schema as DocumentedSchema | undefined
      if (!documented || documented.hide) return { schema, url }
      const config = route.config ?? {}
      const response: Record<string, unknown> = { ...problemResponses(operationCodes(config, documented)), ...(documented.response ?? {}) }
      if (config.binaryResponse) {
        const { status, mediaType, description } = config.binaryResponse
        response[status] = { description, content: { [mediaType]: { schema: { type: 'string', contentMediaType: mediaType } } } }
      }
      // Opaque request bytes have no JSON schema to validate against; document them here.
      const binaryBody = !documented.body && config.accepts?.some((type) => !type.includes('json'))
      const body = config.deferredBody ? { body: config.deferredBody } : binaryBody ? { body: { type: 'string', contentMediaType: config.accepts?.[0] } } : {}
      return { schema: { ...schema, ...body, response }, url }
    },
  })
  // The base layout leaves out Swagger's top bar: its logo is the one inline style of the page
  // (the CSP refuses it) and its box loads other documents, which this page has no use for.
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: DOCS_CSP, uiConfig: { layout: 'BaseLayout' } })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
}
