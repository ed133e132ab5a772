// Two Ajv instances: bodies are checked as sent (no coercion, no stripping, so an unknown key
// on a strict object is a 422), while path and query strings coerce to their declared types.
import { Ajv, type Options } from 'ajv'
import addFormatsPlugin from 'ajv-formats'
import type { FastifyInstance } from 'fastify'
import type { Static, TSchema } from 'typebox'
import { AppError } from '../errors.ts'

// ajv-formats ships CommonJS; its default export is the plugin function.
const addFormats = addFormatsPlugin as unknown as (ajv: Ajv) => Ajv

function ajv(options: Options): Ajv {
  return addFormats(new Ajv({ strict: false, allErrors: false, ...options }))
}

const bodies = ajv({ coerceTypes: false, removeAdditional: false, useDefaults: false })

/**
 * Checks a body against its schema inside a handler, with the same rules as Fastify's body
 * validation (422 on failure). For operations whose checks have a fixed order that puts
 * something (e.g. ownership: 404) before the shape.
 */
export function validateBody<T extends TSchema>(schema: T, value: unknown): Static<T> {
  const validate = bodies.compile(schema) // Ajv caches compiled schemas by object
  if (!validate(value)) throw new AppError('error.request.invalid', bodies.errorsText(validate.errors, { dataVar: 'body' }))
  return value as Static<T>
}

export function registerValidators(app: FastifyInstance): void {
  const strings = ajv({ coerceTypes: true, removeAdditional: false, useDefaults: true })
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? bodies : strings).compile(schema))
}
