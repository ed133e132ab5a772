// How every operation is declared: auth mode, accepted media types, schemas, the catalog
// codes it can answer and how its answers may be cached. `operation()` turns that into
// Fastify route options; the hooks in http/ read the `config` part, and the OpenAPI transform
// (http/openapi.ts) the `errors`.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest, RawServerDefault } from 'fastify'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { TSchema } from 'typebox'
import type { ErrorCode } from '../contract/errors.ts'
import type { RequestMeta } from '../features/context.ts'
import type { CachePolicy } from './response-headers.ts'

/**
 * none: no credential. bearer: a live access token. bearer-presented: any bearer token,
 * checked by the handler itself (logout answers 204 for a dead one). admin: ADMIN_TOKEN.
 * link: a public link's session (a bearer token too), checked by the link's handlers.
 */
export type AuthMode = 'none' | 'bearer' | 'bearer-presented' | 'admin' | 'link'

/**
 * Request headers an operation reads besides Authorization, Content-Type and X-Request-Id
 * (for the OpenAPI document; no schema validates them). If-None-Match adds the 304 answer and
 * ETag on the success answers, Range the 206 answer, Prefer Preference-Applied on the success
 * answers with a body, Content-Range (one part of an uploaded blob) Upload-Offset on the success
 * answers, Repr-Digest (the digest of the whole blob) Repr-Digest on the success answers.
 */
export type RequestHeader = 'X-Service-Identity-Key' | 'Range' | 'If-None-Match' | 'Prefer' | 'Content-Range' | 'Content-Digest' | 'Repr-Digest'

export const JSON_MEDIA = ['application/json'] as const
export const CBOR_MEDIA = ['application/cbor'] as const
export const OCTET_MEDIA = ['application/octet-stream'] as const

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthMode
    /** Media types the body may have; absent for operations that take no body. */
    accepts?: readonly string[]
    /** The body may be left out altogether (then no Content-Type is needed). */
    bodyOptional?: boolean
    /** Catalog codes the operation answers beyond the generic ones. */
    errors?: readonly ErrorCode[]
    /** A success answer whose body is bytes rather than JSON (for the OpenAPI document). */
    binaryResponse?: BinaryResponse
    /** A body schema the handler checks itself, after earlier checks (for the OpenAPI document). */
    deferredBody?: TSchema
    /** How a success answer may be cached; absent: no-store (http/response-headers.ts). */
    cache?: CachePolicy
    /** What each success answer means, by status (for the OpenAPI document). */
    described?: Readonly<Record<number, string>>
    /** Request headers the handler reads (for the OpenAPI document). */
    reads?: readonly RequestHeader[]
    /** When the operation may answer 307 with Location instead of its body (for the OpenAPI document). */
    redirect?: string
    /** The success answer is a file to save, named by Content-Disposition (for the OpenAPI document). */
    attachment?: boolean
  }
}

export interface BinaryResponse {
  readonly status: number
  readonly mediaType: string
  readonly description: string
}

interface OperationSpec<B extends TSchema | undefined, P extends TSchema | undefined, Q extends TSchema | undefined, R extends Record<number, TSchema>> {
  readonly operationId: string
  readonly summary: string
  readonly description?: string
  readonly tags: readonly string[]
  readonly auth: AuthMode
  readonly accepts?: readonly string[]
  /** With `deferredBody`: a request without any body is accepted. */
  readonly bodyOptional?: boolean
  readonly body?: B
  readonly params?: P
  readonly querystring?: Q
  /** Success responses by status. */
  readonly responses: R
  /** What each success answer means, in words, by status (the OpenAPI document's descriptions). */
  readonly described: { readonly [K in keyof R]: string }
  /** Request headers the handler reads (see RequestHeader). */
  readonly reads?: readonly RequestHeader[]
  readonly errors?: readonly ErrorCode[]
  /** Overrides BODY_LIMIT_BYTES for this operation. */
  readonly bodyLimit?: number
  readonly binaryResponse?: BinaryResponse
  /** Validated by the handler with validateBody() once the checks that come first have run. */
  readonly deferredBody?: TSchema
  /** Only reads that answer an ETag declare private-revalidate; everything else is no-store. */
  readonly cache?: CachePolicy
  /** When the operation may answer 307 with Location (see FastifyContextConfig.redirect). */
  readonly redirect?: string
  /** The success answer carries Content-Disposition: attachment (see FastifyContextConfig.attachment). */
  readonly attachment?: boolean
}

type Defined<K extends string, S> = S extends TSchema ? { [key in K]: S } : unknown

export function operation<
  R extends Record<number, TSchema>,
  B extends TSchema | undefined = undefined,
  P extends TSchema | undefined = undefined,
  Q extends TSchema | undefined = undefined,
>(spec: OperationSpec<B, P, Q, R>) {
  const schema = {
    operationId: spec.operationId,
    summary: spec.summary,
    ...(spec.description === undefined ? {} : { description: spec.description }),
    tags: [...spec.tags],
    // An operation without a credential says so (an empty list), rather than saying nothing.
    security: spec.auth === 'none' ? [] : [{ [spec.auth === 'admin' || spec.auth === 'link' ? spec.auth : 'bearer']: [] }],
    ...(spec.accepts ? { consumes: [...spec.accepts] } : {}),
    ...(spec.body ? { body: spec.body } : {}),
    ...(spec.params ? { params: spec.params } : {}),
    ...(spec.querystring ? { querystring: spec.querystring } : {}),
    response: spec.responses,
  } as unknown as { response: R } & Defined<'body', B> & Defined<'params', P> & Defined<'querystring', Q>
  return {
    schema,
    ...(spec.bodyLimit === undefined ? {} : { bodyLimit: spec.bodyLimit }),
    config: {
      auth: spec.auth,
      ...(spec.accepts ? { accepts: spec.accepts } : {}),
      ...(spec.bodyOptional ? { bodyOptional: true } : {}),
      errors: spec.errors ?? [],
      ...(spec.binaryResponse ? { binaryResponse: spec.binaryResponse } : {}),
      ...(spec.deferredBody ? { deferredBody: spec.deferredBody } : {}),
      ...(spec.cache ? { cache: spec.cache } : {}),
      described: spec.described as Readonly<Record<number, string>>,
      ...(spec.reads ? { reads: spec.reads } : {}),
      ...(spec.redirect ? { redirect: spec.redirect } : {}),
      ...(spec.attachment ? { attachment: true } : {}),
    },
  }
}

/** 204 with no body. */
export function noContent(reply: FastifyReply): FastifyReply {
  return reply.code(204).send(null)
}

export type App = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>

const USER_AGENT_MAX = 512

/** Where a session-opening request came from (recorded for the devices listing). */
export function requestMeta(request: FastifyRequest): RequestMeta {
  const userAgent = request.headers['user-agent']
  return { userAgent: userAgent ? userAgent.slice(0, USER_AGENT_MAX) : null, ipAddress: request.ip || null }
}
