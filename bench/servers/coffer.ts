// A real Coffer server for the benchmarks, built the way src/main.ts builds it (config from
// the environment, createDeps, startUp, buildApp) with the production logger, on an ephemeral
// port. Environment: the server's own variables (DATA_DIR, LOG_LEVEL, DATABASE_URL, ...) and
// BENCH_PG_SCHEMA, the fresh PostgreSQL schema to pin every connection to. It answers one
// request, { kind: 'memory' }, with its process.memoryUsage().
import { buildApp } from '../../src/app.ts'
import { loadConfig } from '../../src/config.ts'
import { createDeps, startUp, type DepsOverrides } from '../../src/deps.ts'
import { serveParent, startOrDie } from '../lib/child-side.ts'

export interface CofferReady {
  readonly url: string
  readonly engine: string
  readonly logLevel: string
  /** Where the blob store keeps its files (the upload scenario writes its raw ceiling beside them). */
  readonly blobDir: string
  /** The SQLite database file (null on PostgreSQL): the bearer scenario's second ceiling reads it too. */
  readonly databaseFile: string | null
  /** The PostgreSQL schema it works in (null on SQLite): the bearer scenario's PostgreSQL ceiling reads it too. */
  readonly databaseSchema: string | null
}

await startOrDie(async () => {
  const config = loadConfig({ ...process.env, PORT: '0', HOST: '127.0.0.1' })
  const schema = process.env.BENCH_PG_SCHEMA
  let overrides: DepsOverrides = {}
  if (schema) {
    if (config.database.engine !== 'postgres') throw new Error('BENCH_PG_SCHEMA needs a postgres:// DATABASE_URL')
    overrides = { database: { engine: 'postgres', url: config.database.url, searchPath: schema } }
  }
  const deps = await createDeps(config, overrides)
  await startUp(deps)
  const app = await buildApp(deps)
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  const ready: CofferReady = {
    url,
    engine: deps.storage.engine,
    logLevel: config.logLevel,
    blobDir: config.blobDir,
    databaseFile: config.database.engine === 'sqlite' ? config.database.file : null,
    databaseSchema: schema ?? null,
  }
  serveParent(ready, {
    // The memory scenario asks where the resident memory is (V8 heap, buffers).
    onRequest: async (body) => {
      if ((body as { kind?: unknown } | null)?.kind !== 'memory') throw new Error('unknown request')
      return process.memoryUsage()
    },
    onStop: async () => {
      await app.close()
      await deps.storage.close()
    },
  })
})
