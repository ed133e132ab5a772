// The committed openapi.json is exactly what the routes declare, and every operation in it is
// declared completely: a unique operationId, a summary, tags, its auth, and its error answers.
import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { generateOpenApiDocument } from '../../src/cli/openapi.ts'

interface Operation {
  operationId?: string
  summary?: string
  tags?: string[]
  security?: unknown[]
  responses?: Record<string, { description?: string; content?: Record<string, unknown> }>
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const

describe('OpenAPI document', async () => {
  const generated = (await generateOpenApiDocument()) as { openapi: string; paths: Record<string, Record<string, Operation>> }
  const operations = Object.entries(generated.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m] !== undefined).map((method) => ({ path, method, op: item[method] as Operation })),
  )

  it('equals the committed openapi.json (run `npm run openapi` after changing a route)', async () => {
    const committed = JSON.parse(await readFile(new URL('../../openapi.json', import.meta.url), 'utf8')) as unknown
    expect(generated).toEqual(committed)
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
    for (const { path, method, op } of operations) {
      expect(op.summary, `${method} ${path}`).toBeTruthy()
      expect(op.tags?.length, `${method} ${path}`).toBeGreaterThan(0)
    }
  })

  it('documents 413, 500 and 503 problems on every operation and 401 on every bearer operation', () => {
    for (const { path, method, op } of operations) {
      const responses = op.responses ?? {}
      expect(Object.keys(responses), `${method} ${path}`).toEqual(expect.arrayContaining(['413', '500', '503']))
      expect(responses['500']?.content, `${method} ${path}`).toHaveProperty(['application/problem+json'])
      expect(responses['503']?.description, `${method} ${path}`).toBe('`error.unavailable`')
      if (op.security) expect(responses['401']?.description, `${method} ${path}`).toContain('error.auth.unauthenticated')
    }
  })
})
