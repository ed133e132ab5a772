// Two Ajv instances: bodies are checked as sent (no coercion, no stripping, so an unknown key
// on a strict object is a 422), while path and query strings coerce to their declared types.
// Neither takes a string with U+0000 (decision 0044).
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv'
import addFormatsPlugin from 'ajv-formats'
import type { FastifyInstance } from 'fastify'
import type { Static, TSchema } from 'typebox'
import { OPAQUE_STRING } from '../contract/common.ts'
import { AppError } from '../errors.ts'

// ajv-formats ships CommonJS; its default export is the plugin function.
const addFormats = addFormatsPlugin as unknown as (ajv: Ajv) => Ajv

const NUL = '\u0000'

/** Refuses a string with U+0000: PostgreSQL's text cannot hold it, and no field of this service means it. */
function noNul(data: unknown): boolean {
  return typeof data !== 'string' || !data.includes(NUL)
}

// strictNumbers: NaN and ±Infinity (JSON's 1e999, a query's "Infinity") are not numbers.
function ajv(options: Options): Ajv {
  const instance = addFormats(new Ajv({ strict: false, allErrors: false, strictNumbers: true, ...options }))
  return instance.addKeyword({ keyword: 'noNul', schema: false, validate: noNul, error: { message: 'must not contain U+0000 (NUL)' } })
}

const withNoNul = new WeakMap<object, unknown>()

/**
 * `schema` with `noNul` on every string it declares, so that one rule covers every text field
 * of bodies, queries and paths (the OpenAPI document shows the schemas as written). Fields
 * declared as anything (the advisory ones) are not strings here: they are dropped, not refused;
 * opaque strings (OPAQUE_STRING) are kept as sent.
 */
function refusingNul(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(refusingNul)
  if (typeof schema !== 'object' || schema === null) return schema
  const known = withNoNul.get(schema)
  if (known !== undefined) return known
  const entries = Object.entries(schema).map(([key, value]) => [key, refusingNul(value)])
  const declared = schema as { type?: unknown; [OPAQUE_STRING]?: unknown }
  const declaresString = declared.type === 'string' && declared[OPAQUE_STRING] !== true
  const transformed = Object.fromEntries(declaresString ? [...entries, ['noNul', true]] : entries)
  withNoNul.set(schema, transformed)
  return transformed
}

function compile(instance: Ajv, schema: unknown): ValidateFunction {
  return instance.compile(refusingNul(schema) as object) // Ajv caches compiled schemas by object
}

const bodies = ajv({ coerceTypes: false, removeAdditional: false, useDefaults: false })

/**
 * Checks a body against its schema inside a handler, with the same rules as Fastify's body
 * validation (422 on failure). For operations whose checks have a fixed order that puts
 * something (e.g. ownership: 404) before the shape.
 */
export function validateBody<T extends TSchema>(schema: T, value: unknown): Static<T> {
  const validate = compile(bodies, schema)
  if (!validate(value)) throw new AppError('error.request.invalid', bodies.errorsText(validate.errors, { dataVar: 'body' }))
  return value as Static<T>
}

/** Up to 16 decimal digits: whatever they spell is finite (the schema's maximum then applies). */
const DECIMAL_DIGITS = /^\d{1,16}$/

/**
 * A path or query validator that takes integer parameters in decimal digits only. Ajv's
 * coercion reads "0x10", "1e3" and " 12" as numbers, and "Infinity" too, whose range check it
 * then skips (it checks maximum only on finite numbers).
 */
function decimalIntegers(schema: unknown, validate: ValidateFunction): (data: Record<string, unknown> | null) => boolean {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {}
  const integers = Object.keys(properties).filter((name) => properties[name]?.type === 'integer')
  const checked = Object.assign(
    (data: Record<string, unknown> | null): boolean => {
      const bad = integers.find((name) => data?.[name] !== undefined && !(typeof data[name] === 'string' && DECIMAL_DIGITS.test(data[name])))
      if (bad !== undefined) {
        const error: ErrorObject = {
          instancePath: `/${bad}`,
          schemaPath: `#/properties/${bad}/type`,
          keyword: 'type',
          params: { type: 'integer' },
          message: 'must be a whole number in decimal digits',
        }
        checked.errors = [error]
        return false
      }
      const valid = validate(data)
      checked.errors = validate.errors
      return valid
    },
    { errors: null as ErrorObject[] | null | undefined },
  )
  return checked
}

export function registerValidators(app: FastifyInstance): void {
  const strings = ajv({ coerceTypes: true, removeAdditional: false, useDefaults: true })
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? compile(bodies, schema) : decimalIntegers(schema, compile(strings, schema))))
}
