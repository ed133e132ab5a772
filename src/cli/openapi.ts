// The OpenAPI document as the routes declare it. It depends on no configuration: it is built
// from an app on a throwaway in-memory database, with the operator API switched on.
import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { buildApp } from '../app.ts'
import { loadConfig } from '../config.ts'
import { createDeps } from '../deps.ts'

export async function generateOpenApiDocument(): Promise<unknown> {
  const config = loadConfig({ LOG_LEVEL: 'silent', DATA_DIR: tmpdir() })
  const deps = await createDeps(
    { ...config, secretKey: randomBytes(32), adminToken: randomBytes(32).toString('hex'), passwordHash: { memoryKib: 8, iterations: 1 } },
    { database: { engine: 'sqlite', file: ':memory:' } },
  )
  const app = await buildApp(deps)
  try {
    await app.ready()
    return app.swagger()
  } finally {
    await app.close()
    await deps.storage.close()
  }
}
