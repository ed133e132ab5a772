// The committed openapi.json is exactly what the routes declare, and every operation in it is
// declared completely: a unique operationId, a summary, tags, its auth, its error answers,
// named schemas for its bodies, words for its success answers and the headers it reads and
// writes. The client types generated from it are committed fresh (test/generated/openapi.d.ts).
import { createConfig, lintFromString } from '@redocly/openapi-core'
import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { generateOpenApiDocument } from '../../src/cli/openapi.ts'
import { errorCatalog, errorCodes, extendedProblems, type ErrorCode } from '../../src/contract/errors.ts'
import { generatedTypes, GENERATED_TYPES } from '../support/openapi-types.ts'

type Json = Record<string, unknown>

interface Response {
  description?: string
  headers?: Record<string, unknown>
  content?: Record<string, { schema?: Json }>
}

interface Parameter {
  name?: string
  in?: string
  required?: boolean
  schema?: Json
  $ref?: string
}

interface Operation {
  operationId?: string
  summary?: string
  tags?: string[]
  security?: unknown[]
  parameters?: Parameter[]
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Json }> }
  responses?: Record<string, Response & { $ref?: string }>
}

interface Document {
  openapi: string
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, Json>; responses: Record<string, Response>; parameters: Record<string, Parameter>; headers: Record<string, Json> }
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const

/** Operations that write content, which a suspended account is refused (API.md section 3). */
const CONTENT_WRITES = [
  'provisionAlbum',
  'applyLifecycleManifest',
  'deleteAsset',
  'trashAsset',
  'restoreAsset',
  'openUploadSession',
  'putBlob',
  'startUpgrade',
  'abortUpgrade',
  'commitUpgrade',
  'publishDirectory',
  'storeEscrow',
  'inviteMember',
  'acceptInvitation',
  'replaceInvitation',
  'storeKeyring',
  'setPartner',
  'createLink',
  'replaceLinkEnvelope',
]

describe('OpenAPI document', async () => {
  const generated = (await generateOpenApiDocument()) as Document
  const operations = Object.entries(generated.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m] !== undefined).map((method) => ({ path, method, op: item[method] as Operation, name: `${method} ${path}` })),
  )
  const byId = (operationId: string) => operations.find(({ op }) => op.operationId === operationId)!.op

  /** A `$ref` inside the document, followed. */
  function resolve<T>(node: T & { $ref?: string }): T {
    if (node.$ref === undefined) return node
    const target = node.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>((at, key) => (at as Json)[key.replace(/~1/g, '/').replace(/~0/g, '~')], generated)
    expect(target, node.$ref).toBeDefined()
    return resolve(target as T & { $ref?: string })
  }
  const responsesOf = (op: Operation) => Object.fromEntries(Object.entries(op.responses ?? {}).map(([status, response]) => [status, resolve(response)]))
  const parametersOf = (op: Operation) => (op.parameters ?? []).map((parameter) => resolve(parameter))
  const codesIn = (response: Response | undefined) => [...(response?.description ?? '').matchAll(/`(error\.[a-z_.]+)`/g)].map((m) => m[1] as ErrorCode)

  it('equals the committed openapi.json (run `npm run openapi` after changing a route)', async () => {
    const committed = JSON.parse(await readFile(new URL('../../openapi.json', import.meta.url), 'utf8')) as unknown
    expect(generated).toEqual(committed)
  })

  it('has committed client types that are a fresh openapi-typescript generation of it (`npm run openapi` writes them)', async () => {
    const committed = await readFile(GENERATED_TYPES, 'utf8')
    const fresh = await generatedTypes()
    expect(committed === fresh, 'test/generated/openapi.d.ts is stale: run `npm run openapi`').toBe(true)
    expect(fresh).not.toMatch(/schemas: never/)
    expect(fresh).not.toMatch(/responses: never/)
  })

  it('passes Redocly’s recommended lint (structure, refs, operation ids, security declared on every operation)', async () => {
    // info-license: the project publishes no license yet.
    const config = await createConfig({ extends: ['recommended'], rules: { 'info-license': 'off' } })
    const problems = await lintFromString({ source: JSON.stringify(generated), absoluteRef: 'openapi.json', config })
    expect(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)).toEqual([])
  })

  it('is OpenAPI 3.1 and documents the operations of every feature', () => {
    expect(generated.openapi).toBe('3.1.0')
    expect(operations.length).toBeGreaterThan(15)
    expect(generated.paths['/v1/auth/login']?.post?.operationId).toBe('login')
  })

  it('gives every operation a unique operationId, a summary and tags', () => {
    const ids = operations.map(({ op }) => op.operationId)
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true)
    expect(new Set(ids).size).toBe(ids.length)
    for (const { name, op } of operations) {
      expect(op.summary, name).toBeTruthy()
      expect(op.tags?.length, name).toBeGreaterThan(0)
    }
  })

  it('documents 413, 500 and 503 problems on every operation and 401 on every bearer operation', () => {
    for (const { name, op } of operations) {
      const responses = responsesOf(op)
      expect(Object.keys(responses), name).toEqual(expect.arrayContaining(['413', '500', '503']))
      expect(responses['500']?.content, name).toHaveProperty(['application/problem+json'])
      expect(responses['503']?.description, name).toContain('`error.unavailable`')
      if (op.security?.length) expect(responses['401']?.description, name).toContain('error.auth.unauthenticated')
    }
  })

  it('refers every request and JSON response body to a named component schema', () => {
    const named = (schema: Json | undefined, where: string) => {
      const refs = schema?.$ref !== undefined ? [schema] : ((schema?.anyOf ?? []) as Json[])
      expect(refs.length, where).toBeGreaterThan(0)
      for (const entry of refs) {
        expect(entry.$ref, where).toMatch(/^#\/components\/schemas\/[A-Za-z]+$/)
        resolve(entry)
      }
    }
    for (const { name, op } of operations) {
      for (const [media, { schema }] of Object.entries(op.requestBody?.content ?? {})) {
        if (media.includes('json')) named(schema, `${name} request ${media}`)
        else expect(schema, `${name} request ${media}`).toEqual({ type: 'string', contentMediaType: media })
      }
      for (const [status, response] of Object.entries(responsesOf(op))) {
        for (const [media, { schema }] of Object.entries(response.content ?? {})) {
          if (media.includes('json')) named(schema, `${name} ${status} ${media}`)
        }
      }
    }
    // Nested shapes are named too: no component holds an object shape of its own.
    const anonymous: string[] = []
    const walk = (node: unknown, at: string, top: boolean): void => {
      if (node === null || typeof node !== 'object') return
      if (!top && (node as Json).type === 'object') anonymous.push(at)
      for (const [key, value] of Object.entries(node)) walk(value, `${at}/${key}`, false)
    }
    for (const [name, schema] of Object.entries(generated.components.schemas)) walk(schema, name, true)
    expect(anonymous).toEqual([])
    // The envelope inside both bodies that carry it.
    expect(generated.components.schemas.OpRequest?.properties).toMatchObject({ manifest_envelope: { $ref: '#/components/schemas/ManifestEnvelope' } })
    expect(generated.components.schemas.OpenUploadRequest?.properties).toMatchObject({ manifest_envelope: { $ref: '#/components/schemas/ManifestEnvelope' } })
  })

  it('describes every success answer in words, never "Default Response"', () => {
    for (const { name, op } of operations) {
      for (const [status, response] of Object.entries(responsesOf(op))) {
        expect(response.description, `${name} ${status}`).toBeTruthy()
        expect(response.description, `${name} ${status}`).not.toBe('Default Response')
      }
      expect(
        Object.keys(op.responses ?? {}).some((status) => status.startsWith('2')),
        name,
      ).toBe(true)
    }
  })

  it('names each problem the catalog extends as a component, on every response that can carry it', () => {
    const refTo = (schema: unknown) =>
      `#/components/schemas/${Object.entries(generated.components.schemas).find(([, s]) => JSON.stringify(s) === JSON.stringify(schema))?.[0]}`
    for (const [code, schema] of Object.entries(extendedProblems)) {
      const target = refTo(JSON.parse(JSON.stringify(schema)))
      expect(target, code).not.toMatch(/undefined$/)
      for (const { name, op } of operations) {
        for (const [status, response] of Object.entries(responsesOf(op))) {
          if (!codesIn(response).includes(code as ErrorCode)) continue
          expect(JSON.stringify(response.content?.['application/problem+json']?.schema), `${name} ${status}`).toContain(target)
        }
      }
    }
  })

  it('lists each problem code under its catalog status', () => {
    for (const { name, op } of operations) {
      for (const [status, response] of Object.entries(responsesOf(op))) {
        for (const code of codesIn(response)) {
          expect(errorCodes, `${name} ${status}`).toContain(code)
          expect(String(errorCatalog[code].status), `${name} ${code}`).toBe(status)
        }
      }
    }
  })

  it('declares 403 error.account.suspended on every content write, and on no read', () => {
    for (const { name, op } of operations) {
      const declared = codesIn(responsesOf(op)['403']).includes('error.account.suspended')
      expect(declared, name).toBe(CONTENT_WRITES.includes(op.operationId!))
    }
  })

  it('declares the headers every answer writes: X-Request-Id, WWW-Authenticate on 401, Retry-After where a wait is told', () => {
    for (const { name, op } of operations) {
      expect(
        parametersOf(op)
          .filter((p) => p.in === 'header')
          .map((p) => p.name),
        name,
      ).toContain('X-Request-Id')
      for (const [status, response] of Object.entries(responsesOf(op))) {
        const headers = Object.keys(response.headers ?? {})
        expect(headers, `${name} ${status}`).toContain('X-Request-Id')
        const codes = codesIn(response)
        if (codes.includes('error.auth.unauthenticated')) expect(headers, `${name} ${status}`).toContain('WWW-Authenticate')
        if (codes.some((code) => ['error.rate_limited', 'error.auth.account_locked', 'error.unavailable'].includes(code)))
          expect(headers, `${name} ${status}`).toContain('Retry-After')
      }
    }
  })

  it('declares the conditional and range reads: If-None-Match and 304 with ETag, Range and 206 with Content-Range', () => {
    const download = byId('downloadBlob')
    const directory = byId('fetchDirectory')
    expect(parametersOf(download).map((p) => p.name)).toEqual(expect.arrayContaining(['Range', 'If-None-Match']))
    expect(parametersOf(directory).map((p) => p.name)).toContain('If-None-Match')
    for (const op of [download, directory]) {
      const responses = responsesOf(op)
      expect(Object.keys(responses['200']?.headers ?? {})).toContain('ETag')
      expect(Object.keys(responses['304']?.headers ?? {})).toContain('ETag')
      expect(responses['304']?.content).toBeUndefined()
    }
    const download206 = responsesOf(download)['206']
    expect(Object.keys(download206?.headers ?? {})).toEqual(expect.arrayContaining(['ETag', 'Content-Range']))
    expect(download206?.content).toHaveProperty(['application/octet-stream'])
    expect(Object.keys(responsesOf(download)['416']?.headers ?? {})).toContain('Content-Range')
    expect(parametersOf(byId('publishDirectory')).map((p) => p.name)).toContain('X-Service-Identity-Key')
  })

  it('declares the account export as a JSON attachment of the AccountExport schema, and no other operation as one', () => {
    const attachments = operations.filter(({ op }) => Object.values(responsesOf(op)).some((response) => 'Content-Disposition' in (response.headers ?? {})))
    expect(attachments.map(({ name }) => name)).toEqual(['get /v1/account/export'])
    const answer = responsesOf(byId('exportAccount'))['200']
    expect(Object.keys(answer?.headers ?? {})).toEqual(['X-Request-Id', 'Content-Disposition'])
    expect(answer?.content).toEqual({ 'application/json': { schema: { $ref: '#/components/schemas/AccountExport' } } })
  })

  it('declares Prefer on confirm TOTP, and Preference-Applied on its answer with a body only', () => {
    const confirm = byId('confirmTotpEnrollment')
    expect(parametersOf(confirm).map((p) => p.name)).toContain('Prefer')
    const responses = responsesOf(confirm)
    expect(Object.keys(responses['200']?.headers ?? {})).toContain('Preference-Applied')
    expect(Object.keys(responses['204']?.headers ?? {})).not.toContain('Preference-Applied')
    expect(operations.filter(({ op }) => parametersOf(op).some((p) => p.name === 'Prefer')).map(({ op }) => op.operationId)).toEqual(['confirmTotpEnrollment'])
  })

  it('marks no query parameter with a default as required', () => {
    let withDefaults = 0
    for (const { name, op } of operations) {
      for (const parameter of parametersOf(op).filter((p) => p.in === 'query' && p.schema?.default !== undefined)) {
        withDefaults += 1
        expect(parameter.required, `${name} ${parameter.name}`).toBe(false)
      }
    }
    expect(withDefaults).toBeGreaterThan(0)
  })

  it('documents /metrics as text', () => {
    expect(Object.keys(responsesOf(byId('metrics'))['200']?.content ?? {})).toEqual(['text/plain'])
  })
})
