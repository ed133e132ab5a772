// Two Ajv instances: bodies are checked as sent (no coercion, no stripping, so an unknown key
// on a strict object is a 422), while path and query strings coerce to their declared types.
import { Ajv, type Options } from 'ajv'
import addFormatsPlugin from 'ajv-formats'
import type { FastifyInstance } from 'fastify'

// ajv-formats ships CommonJS; its default export is the plugin function.
const addFormats = addFormatsPlugin as unknown as (ajv: Ajv) => Ajv

function ajv(options: Options): Ajv {
  return addFormats(new Ajv({ strict: false, allErrors: false, ...options }))
}

export function registerValidators(app: FastifyInstance): void {
  const bodies = ajv({ coerceTypes: false, removeAdditional: false, useDefaults: false })
  const strings = ajv({ coerceTypes: true, removeAdditional: false, useDefaults: true })
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? bodies : strings).compile(schema))
}
