// Body media types. An operation lists what it accepts (route config `accepts`); anything else
// is a 415 before a byte is parsed. Operations without a body ignore whatever is sent.
import type { FastifyInstance, FastifyRequest, preParsingAsyncHookHandler } from 'fastify'
import { toArray } from './bearer.ts'
import { AppError } from '../errors.ts'

type Done = (error: Error | null, body?: unknown) => void

/** The media type without parameters, lowercased; null when absent. */
export function mediaTypeEssence(header: string | undefined): string | null {
  if (header === undefined) return null
  const essence = header.split(';')[0]?.trim().toLowerCase() ?? ''
  return essence === '' ? null : essence
}

export function registerMediaTypes(app: FastifyInstance): void {
  // Fastify's own parser (prototype-poisoning checks included), in its callback form.
  const parseJson = app.getDefaultJsonParser('error', 'error') as (request: FastifyRequest, body: string, done: Done) => void
  app.removeAllContentTypeParsers()
  const json = (request: FastifyRequest, body: string, done: Done) => {
    // A bodyless operation (or one whose body is optional) called with an empty JSON body:
    // some clients always send the header.
    const config = request.routeOptions.config
    if ((config.accepts === undefined || config.bodyOptional === true) && body.length === 0) return done(null, undefined)
    return parseJson(request, body, done)
  }
  app.addContentTypeParser(['application/json', 'application/merge-patch+json'], { parseAs: 'string' }, json)
  // Opaque client bytes: handed to the operation as a Buffer, exactly as received.
  app.addContentTypeParser(['application/cbor', 'application/octet-stream'], { parseAs: 'buffer' }, (_request, body: Buffer, done: Done) => done(null, body))

  // Attached to the operations that take a body only.
  app.addHook('onRoute', (route) => {
    const accepts = route.config?.accepts
    if (accepts === undefined) return
    const optional = route.config?.bodyOptional === true
    const check: preParsingAsyncHookHandler = async (request, _reply, payload) => {
      const sent = request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0
      if (optional && !sent) return payload
      const essence = mediaTypeEssence(request.headers['content-type'])
      if (essence === null || !accepts.includes(essence)) {
        throw new AppError('error.request.unsupported_media_type', `Content-Type must be ${accepts.join(' or ')}`)
      }
      return payload
    }
    route.preParsing = [check, ...toArray(route.preParsing)]
  })
}
