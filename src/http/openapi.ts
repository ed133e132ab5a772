// The OpenAPI 3.1 document, generated from the route declarations (route.ts) and the wire
// schemas of src/contract. Validation never sees what is built here: the route schemas Fastify
// compiles stay as declared, and this module only describes them (docs/decisions/0013).
//
// - Every exported object or union schema of src/contract is a named component under its
//   export name; request bodies, success bodies and problems are `$ref`s to them, wherever
//   they appear (nested ones included).
// - Error responses are each operation's declared catalog codes plus the generic ones of its
//   kind, so the document lists exactly what the route can say (test/http/statuses.observed
//   compares them with what the HTTP suites see).
// - Headers the operation reads (route.ts `reads`) are header parameters; the headers it
//   writes are declared on the responses that carry them.
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyContextConfig, FastifyInstance } from 'fastify'
import * as albums from '../contract/albums.ts'
import * as auth from '../contract/auth.ts'
import * as common from '../contract/common.ts'
import * as custody from '../contract/custody.ts'
import * as devices from '../contract/devices.ts'
import { errorCatalog, extendedProblems, type ErrorCode } from '../contract/errors.ts'
import * as errors from '../contract/errors.ts'
import * as accountExport from '../contract/export.ts'
import * as profile from '../contract/profile.ts'
import * as quota from '../contract/quota.ts'
import * as sessions from '../contract/sessions.ts'
import * as links from '../contract/links.ts'
import * as sharing from '../contract/sharing.ts'
import * as signing from '../contract/signing.ts'
import { PROBLEM_MEDIA } from './problem.ts'
import type { RequestHeader } from './route.ts'

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

type Json = Record<string, unknown>

// ---------------------------------------------------------------------------------------------
// Named schemas

const SCHEMAS = '#/components/schemas/'

/**
 * The wire shapes with a name: every exported object or union schema of src/contract, under
 * its export name. Path and query parameter objects (…Params, …Query) become parameters, not
 * components.
 */
const namedSchemas: ReadonlyMap<string, object> = new Map(
  Object.entries({
    ...albums,
    ...auth,
    ...common,
    ...custody,
    ...devices,
    ...errors,
    ...accountExport,
    ...profile,
    ...quota,
    ...sessions,
    ...sharing,
    ...links,
    ...signing,
  })
    .filter((entry): entry is [string, Json] => {
      const [name, value] = entry
      if (typeof value !== 'object' || value === null || /(Params|Query)$/.test(name)) return false
      const schema = value as Json
      return schema.type === 'object' || Array.isArray(schema.anyOf)
    })
    .sort(([a], [b]) => a.localeCompare(b)),
)

/** A schema as plain JSON (TypeBox's non-enumerable markers left out). */
function plain(schema: unknown): unknown {
  return JSON.parse(JSON.stringify(schema))
}

const byIdentity = new Map<object, string>([...namedSchemas].map(([name, schema]) => [schema, name]))

/**
 * Named schemas by their JSON text, for copies (TypeBox's Optional(X) is a copy of X). A text
 * two names share names neither: only the schema object itself does.
 */
const byText = (() => {
  const map = new Map<string, string | null>()
  for (const [name, schema] of namedSchemas) {
    const text = JSON.stringify(schema)
    map.set(text, map.has(text) ? null : name)
  }
  return map
})()

function nameOf(node: object): string | undefined {
  return byIdentity.get(node) ?? byText.get(JSON.stringify(node)) ?? undefined
}

function ref(name: string): Json {
  return { $ref: `${SCHEMAS}${name}` }
}

/** `schema` as document JSON, every named schema inside it (itself too, unless `referSelf` is false) a `$ref`. */
function asDocument(schema: unknown, referSelf = true): unknown {
  const visit = (node: unknown, top: boolean): unknown => {
    if (Array.isArray(node)) return node.map((item) => visit(item, false))
    if (node === null || typeof node !== 'object') return node
    if (!top || referSelf) {
      const name = nameOf(node)
      if (name !== undefined) return ref(name)
    }
    // Own enumerable keys only: TypeBox's markers ('~kind', '~optional') are not enumerable.
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, visit(value, false)]))
  }
  return visit(schema, true)
}

/** Tells `found` every `$ref` in `node`, however deep. */
function eachRef(node: unknown, found: (ref: string) => void): void {
  if (Array.isArray(node)) {
    for (const item of node) eachRef(item, found)
    return
  }
  if (node === null || typeof node !== 'object') return
  const target = (node as Json).$ref
  if (typeof target === 'string') found(target)
  for (const value of Object.values(node)) eachRef(value, found)
}

/** Every named schema the document refers to, and those they refer to, as components. */
function componentSchemas(document: unknown): Json {
  const found = new Set<string>()
  const collect = (ref: string): void => {
    if (!ref.startsWith(SCHEMAS)) return
    const name = ref.slice(SCHEMAS.length)
    if (found.has(name)) return
    found.add(name)
    eachRef(asDocument(namedSchemas.get(name), false), collect)
  }
  eachRef(document, collect)
  return Object.fromEntries([...found].sort().map((name) => [name, asDocument(namedSchemas.get(name), false)]))
}

// ---------------------------------------------------------------------------------------------
// Headers

const HEADERS = '#/components/headers/'
const PARAMETERS = '#/components/parameters/'
const RESPONSES = '#/components/responses/'

/** Request headers an operation may read, as header parameters. */
const requestHeaders: Readonly<Record<RequestHeader | 'X-Request-Id', Json>> = {
  'X-Request-Id': {
    name: 'X-Request-Id',
    in: 'header',
    required: false,
    description:
      'An id for this request (1-128 of `A-Z a-z 0-9 . _ : -`), echoed in the answer and in every log line of the request; another value is replaced by a fresh UUID',
    schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' },
  },
  'X-Service-Identity-Key': {
    name: 'X-Service-Identity-Key',
    in: 'header',
    required: false,
    description:
      'Standard base64 of the account’s 1984-byte hybrid public key (Ed25519 | ML-DSA-65). The first publish binds it (a recent password proof is needed then); later publishes must send the bound key',
    schema: { type: 'string' },
  },
  Range: {
    name: 'Range',
    in: 'header',
    required: false,
    description:
      'One byte range, `bytes=a-b`, `bytes=a-` or `bytes=-n` (RFC 9110 section 14.2): a satisfiable one answers 206 with only those bytes, an unsatisfiable one 416. Anything else is ignored (the whole blob, 200)',
    schema: { type: 'string', examples: ['bytes=0-1023'] },
  },
  'If-None-Match': {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    description: 'ETags of a copy already held (or `*`): when one matches, the answer is 304 without a body',
    schema: { type: 'string' },
  },
  'Content-Range': {
    name: 'Content-Range',
    in: 'header',
    required: false,
    description:
      '`bytes a-b/n`: the body is bytes a to b (inclusive) of the n-byte blob, one part of a resumable upload (decision 0034). Without it the body is the whole blob. `a` must be what the server holds of the blob (`received`), else 409 with Upload-Offset; a part with b < n-1 must be at least UPLOAD_PART_MIN_BYTES (1 MiB); the part with b = n-1 completes the blob',
    schema: { type: 'string', pattern: '^bytes [0-9]+-[0-9]+/[0-9]+$', examples: ['bytes 0-8388607/20000000'] },
  },
  'Content-Digest': {
    name: 'Content-Digest',
    in: 'header',
    required: false,
    description:
      'With Content-Range: `sha-256=:<base64>:` (RFC 9530), the SHA-256 of this part’s bytes; a part that differs is not kept (422). Other algorithms beside sha-256 are ignored; one without sha-256, or a malformed one, is 400',
    schema: { type: 'string', examples: ['sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:'] },
  },
  'Repr-Digest': {
    name: 'Repr-Digest',
    in: 'header',
    required: false,
    description:
      'On the part that ends the blob (Content-Range with b = n-1): `sha-256=:<base64>:` (RFC 9530), the SHA-256 of the whole blob. Other than the URL’s hash (a provisional name), the blob is stored and declared under it instead (decision 0034, a blob named at its last part). Ignored on other parts and without Content-Range; one without sha-256, or a malformed one, is 400',
    schema: { type: 'string', examples: ['sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:'] },
  },
  Prefer: {
    name: 'Prefer',
    in: 'header',
    required: false,
    description: 'RFC 7240 preferences; `return=representation` asks for the answer with a body (Preference-Applied then says so). Others are ignored',
    schema: { type: 'string', examples: ['return=representation'] },
  },
}

const responseHeaders = {
  'X-Request-Id': { description: 'The request’s id: the one sent when usable, else a fresh UUID', schema: { type: 'string' } },
  'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer', minimum: 0 } },
  'WWW-Authenticate': {
    description: '`Bearer realm="coffer"`, with `error="invalid_token"` when a token was presented (RFC 6750)',
    schema: { type: 'string' },
  },
  ETag: { description: 'Strong tag of these exact bytes (the quoted SHA-256 hex); send it in If-None-Match to revalidate', schema: { type: 'string' } },
  'Cache-Control': {
    description: '`private, no-cache`: the client’s own cache may keep the bytes and revalidate them; shared caches may not',
    schema: { type: 'string' },
  },
  'Accept-Ranges': { description: '`bytes`: Range requests are served', schema: { type: 'string' } },
  'Content-Range': { description: '`bytes a-b/size` on 206; `bytes */size` on 416', schema: { type: 'string' } },
  Location: {
    description: 'Where the answer is: a URL valid for a few minutes, to be requested without Authorization',
    schema: { type: 'string', format: 'uri' },
  },
  'Content-Disposition': { description: '`attachment; filename="..."`: a file to save, and the name it suggests', schema: { type: 'string' } },
  'Upload-Offset': {
    description: 'The bytes of the blob the server now holds: the next part starts here (the blob’s size once it is stored)',
    schema: { type: 'integer', minimum: 0 },
  },
  'Repr-Digest': {
    description: 'When the request sent Repr-Digest on the part that ends the blob: `sha-256=:<base64>:`, the hash the blob is stored and declared under',
    schema: { type: 'string' },
  },
  'Preference-Applied': {
    description: '`return=representation`: the answer carries the body the Prefer header asked for (RFC 7240)',
    schema: { type: 'string' },
  },
} as const satisfies Record<string, Json>

type ResponseHeader = keyof typeof responseHeaders

function headerRefs(names: readonly ResponseHeader[]): Json {
  return Object.fromEntries(['X-Request-Id', ...names].map((name) => [name, { $ref: `${HEADERS}${name}` }]))
}

/** Codes whose problems carry Retry-After (AppError's retryAfterS). */
const RETRY_AFTER_CODES: readonly ErrorCode[] = ['error.rate_limited', 'error.auth.account_locked', 'error.unavailable']

// ---------------------------------------------------------------------------------------------
// Operations

/**
 * Every catalog code an operation can answer, generic ones included. 503 (the database cannot
 * be reached) is generic like 500: the few operations that never read the database, such as
 * /healthz, are not told apart. 400 is generic too: an HTTP/1.1 request without exactly one
 * Host is refused before any route runs (0002).
 */
export function operationCodes(config: FastifyContextConfig): ErrorCode[] {
  const codes = new Set<ErrorCode>(['error.request.malformed', 'error.request.too_large', 'error.internal', 'error.unavailable'])
  if (config.auth !== undefined && config.auth !== 'none') codes.add('error.auth.unauthenticated')
  if (config.accepts) {
    codes.add('error.request.unsupported_media_type')
    codes.add('error.request.invalid')
  }
  for (const code of config.errors ?? []) codes.add(code)
  return [...codes]
}

function problemResponses(codes: readonly ErrorCode[]): Record<string, Json> {
  const byStatus = new Map<number, ErrorCode[]>()
  for (const code of codes) {
    const status = errorCatalog[code].status
    byStatus.set(status, [...(byStatus.get(status) ?? []), code])
  }
  // A status one code answers alone is a reusable response named after the code.
  return Object.fromEntries([...byStatus].map(([status, list]) => [status, list.length === 1 ? { $ref: `${RESPONSES}${list[0]}` } : problemResponse(list)]))
}

/** The problem answer of a status `codes` share. */
function problemResponse(codes: readonly ErrorCode[]): Json {
  const extended = codes.flatMap((code) => extendedProblems[code] ?? []).map((schema) => asDocument(schema))
  const schema = extended.length === 0 ? ref('CodedProblem') : { anyOf: [...extended, ref('CodedProblem')] }
  const headers: ResponseHeader[] = [
    ...(codes.some((code) => RETRY_AFTER_CODES.includes(code)) ? ['Retry-After' as const] : []),
    ...(codes.includes('error.auth.unauthenticated') ? ['WWW-Authenticate' as const] : []),
    ...(codes.includes('error.request.range_not_satisfiable') ? ['Content-Range' as const] : []),
    ...(codes.includes('error.upload.offset_mismatch') ? ['Upload-Offset' as const] : []),
  ]
  return { description: codes.map((code) => `\`${code}\``).join(', '), headers: headerRefs(headers), content: { [PROBLEM_MEDIA]: { schema } } }
}

/** The reusable responses the document refers to. */
function componentResponses(document: unknown): Json {
  const found = new Set<string>()
  eachRef(document, (ref) => {
    if (ref.startsWith(RESPONSES)) found.add(ref.slice(RESPONSES.length))
  })
  return Object.fromEntries([...found].sort().map((code) => [code, problemResponse([code as ErrorCode])]))
}

/** What transform() hands transformObject() for one operation, under an `x-` key swagger copies as is. */
const OPERATION_KEY = 'x-coffer-operation'

interface OperationParts {
  readonly requestBody?: Json
  readonly responses: Record<string, Json>
  readonly headers: readonly string[]
}

function operationParts(operationId: string, config: FastifyContextConfig, schema: DocumentedSchema): OperationParts {
  const reads = config.reads ?? []
  const revalidates = reads.includes('If-None-Match')
  const ranges = reads.includes('Range')
  const prefers = reads.includes('Prefer')
  const parts: ResponseHeader[] = [
    ...(reads.includes('Content-Range') ? ['Upload-Offset' as const] : []),
    ...(reads.includes('Repr-Digest') ? ['Repr-Digest' as const] : []),
  ]
  const cached: ResponseHeader[] = revalidates ? ['ETag', 'Cache-Control'] : []
  const saved: ResponseHeader[] = config.attachment ? ['Content-Disposition'] : []

  const responses: Record<string, Json> = problemResponses(operationCodes(config))
  for (const [status, body] of Object.entries(schema.response ?? {})) {
    const description = config.described?.[Number(status)]
    if (description === undefined) throw new Error(`no description of the ${status} answer of ${operationId}`)
    const isEmpty = (body as Json).type === 'null'
    const headers = headerRefs([...cached, ...saved, ...parts, ...(prefers && !isEmpty ? ['Preference-Applied' as const] : [])])
    responses[status] = { description, headers, ...(isEmpty ? {} : { content: { 'application/json': { schema: asDocument(body) } } }) }
  }
  const bytes = config.binaryResponse
  if (bytes) {
    const media = bytes.mediaType
    const content = { [media]: { schema: media.startsWith('text/') ? { type: 'string' } : { type: 'string', contentMediaType: media } } }
    responses[bytes.status] = { description: bytes.description, headers: headerRefs([...cached, ...(ranges ? ['Accept-Ranges' as const] : [])]), content }
    if (ranges) {
      responses[206] = { description: 'The requested range of the bytes, with Content-Range', headers: headerRefs([...cached, 'Content-Range']), content }
    }
  }
  if (config.redirect !== undefined) responses[307] = { description: config.redirect, headers: headerRefs(['Location']) }
  if (revalidates) responses[304] = { description: 'Not modified: If-None-Match names these bytes’ ETag; no body', headers: headerRefs(cached) }

  // The body as its operation validates it: its schema for JSON media types (also the one a
  // handler checks itself), bytes for the others.
  const bodySchema = schema.body ?? config.deferredBody
  const requestBody = config.accepts
    ? {
        required: !config.bodyOptional,
        content: Object.fromEntries(
          config.accepts.map((media) => [
            media,
            { schema: media.includes('json') && bodySchema !== undefined ? asDocument(bodySchema) : { type: 'string', contentMediaType: media } },
          ]),
        ),
      }
    : undefined
  return { ...(requestBody ? { requestBody } : {}), responses: sortedByStatus(responses), headers: ['X-Request-Id', ...reads] }
}

function sortedByStatus<T>(responses: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b)))
}

/**
 * Query parameters as the document shows them: one with a default is not required (the
 * schema Fastify validates with lists it as required only so that the handler's type has it).
 */
function documentedQuery(querystring: unknown): unknown {
  const query = querystring as { required?: string[]; properties?: Record<string, { default?: unknown }> } | undefined
  if (!query?.required || !query.properties) return querystring
  const properties = query.properties
  return { ...(plain(query) as Json), required: query.required.filter((name) => properties[name]?.default === undefined) }
}

interface DocumentOperation {
  parameters?: Json[]
  requestBody?: Json
  responses?: Record<string, Json>
  [OPERATION_KEY]?: OperationParts
}

/** Puts each operation's parts in place and adds the components they refer to. */
function finishDocument(document: { paths?: Record<string, Record<string, DocumentOperation>>; components?: Json }): unknown {
  for (const item of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(item)) {
      const parts = operation[OPERATION_KEY]
      if (parts === undefined) continue
      delete operation[OPERATION_KEY]
      if (parts.requestBody) operation.requestBody = parts.requestBody
      else delete operation.requestBody
      operation.parameters = [...(operation.parameters ?? []), ...parts.headers.map((name) => ({ $ref: `${PARAMETERS}${name}` }))]
      operation.responses = parts.responses
    }
  }
  const responses = componentResponses(document.paths)
  document.components = {
    ...document.components,
    schemas: componentSchemas({ paths: document.paths, responses }),
    responses,
    parameters: requestHeaders,
    headers: responseHeaders,
  }
  return document
}

export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Coffer',
        version: API_VERSION,
        description: [
          'End-to-end-encrypted photo albums: accounts, sessions, devices, albums and custody receipts.',
          'Errors are RFC 9457 problems (`application/problem+json`, CodedProblem) with a stable `code` from the catalog; each error response lists the codes it can carry.',
          'Every response carries `X-Request-Id` and `X-Content-Type-Options: nosniff`, and `Cache-Control: no-store` unless the operation declares otherwise.',
        ].join(' '),
      },
      // Relative: the document depends on no configuration; a client sets its own base URL.
      servers: [{ url: '/', description: 'The server that serves this document' }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'An access token from register, login, verify login or refresh' },
          admin: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN (operator API; enabled only when it is set)' },
          link: {
            type: 'http',
            scheme: 'bearer',
            description: 'A public link’s session, from POST /v1/links/{link_id}/open (docs/sharing.md, "Public links")',
          },
        },
      },
    },
    transform: ({ schema, url, route }) => {
      const documented = schema as DocumentedSchema | undefined
      if (!documented || documented.hide) return { schema, url }
      const parts = operationParts(String((schema as { operationId?: string }).operationId), route.config ?? {}, documented)
      // Swagger builds the parameters; the bodies and responses are put in place by transformObject.
      const { body: _body, response: _response, querystring, ...rest } = schema as DocumentedSchema & Json
      return { schema: { ...rest, ...(querystring ? { querystring: documentedQuery(querystring) } : {}), [OPERATION_KEY]: parts }, url }
    },
    transformObject: (documentObject) =>
      finishDocument(('openapiObject' in documentObject ? documentObject.openapiObject : documentObject.swaggerObject) as never) as never,
  })
  // The base layout leaves out Swagger's top bar: its logo is the one inline style of the page
  // (the CSP refuses it) and its box loads other documents, which this page has no use for.
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: DOCS_CSP, uiConfig: { layout: 'BaseLayout' } })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
}
