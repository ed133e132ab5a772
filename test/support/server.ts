// A real Coffer server on an ephemeral port, with real storage (see database.ts), a settable
// clock and captured log lines. Tests talk to it over HTTP, through the SDK or fetch.
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import { buildApp } from '../../src/app.ts'
import { loadConfig } from '../../src/config.ts'
import { createDeps, startUp, type Deps } from '../../src/deps.ts'
import { createLogger } from '../../src/http/logging.ts'
import type { App } from '../../src/http/route.ts'
import { CofferClient } from '../../src/sdk/client.ts'
import type { DatabaseTarget } from '../../src/storage/kysely/storage.ts'
import { startBucket, testBlobsInBucket } from './bucket.ts'
import { testClock, type TestClock } from './clock.ts'
import { watchAnswers } from './declared-answers.ts'
import { freshDatabase } from './database.ts'

export interface TestServer {
  readonly url: string
  readonly app: App
  readonly deps: Deps
  readonly clock: TestClock
  /** Where its database is (support/database.ts readRows reads it directly). */
  readonly database: DatabaseTarget
  /** Every log line written so far (JSON strings, trace level). */
  readonly logs: string[]
  /** A new SDK client against this server, on the server's clock. */
  client(): CofferClient
  /** Closes it; fails when it gave an answer its OpenAPI document does not declare (declared-answers.ts). */
  close(): Promise<void>
}

/** Fast argon2 parameters for tests; the hash still records them, as in production. */
const TEST_ENV = { PASSWORD_HASH_MEMORY_KIB: '64', PASSWORD_HASH_ITERATIONS: '1', LOG_LEVEL: 'trace' }

/** A log sink that keeps every line. */
export function capture(logs: string[]): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(
        ...chunk
          .toString('utf8')
          .split('\n')
          .filter((line) => line !== ''),
      )
      done()
    },
  })
}

/** One instance on `deps`, listening on an ephemeral port; close() closes what is its own. */
async function listening(deps: Deps, logs: string[], clock: TestClock, database: DatabaseTarget): Promise<TestServer> {
  const app = await buildApp(deps)
  const answers = watchAnswers(app)
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  let closed = false
  return {
    url,
    app,
    deps,
    clock,
    database,
    logs,
    client: () => new CofferClient({ baseUrl: url, now: clock.now }),
    async close() {
      if (closed) return
      closed = true
      const undeclared = answers.undeclared()
      await app.close()
      await deps.storage.close().catch(() => {}) // a fault test may have closed it already
      if (undeclared.length > 0) {
        throw new Error(
          `Answers openapi.json does not declare (add the code to the operation's errors, or the status to its responses):\n  ${undeclared.join('\n  ')}`,
        )
      }
    },
  }
}

export async function startServer(env: Record<string, string> = {}, options: InstanceOptions = {}): Promise<TestServer> {
  const { instances, close } = await startInstances(1, env, options)
  const server = instances[0]!
  return { ...server, close }
}

export interface InstanceOptions {
  /**
   * The way the instances reach the test's database (a fault test puts a proxy in between).
   * TestServer.database stays the database itself, read directly.
   */
  readonly reach?: (database: DatabaseTarget) => DatabaseTarget
}

export interface Instances {
  readonly instances: TestServer[]
  /** Closes every instance, then drops the database and the folder. */
  close(): Promise<void>
}

/**
 * Instances sharing one database and one blob store (a folder, or on the s3 run a bucket), as README's "PostgreSQL and several
 * instances" deploys them (same SECRET_KEY and PUBLIC_ORIGIN), started at the same time on one
 * settable clock. (SQLite is for one instance: several in one process share only a file lock.)
 */
export async function startInstances(count: number, env: Record<string, string> = {}, options: InstanceOptions = {}): Promise<Instances> {
  const directory = await mkdtemp(path.join(tmpdir(), 'coffer-test-'))
  const database = await freshDatabase(directory)
  // On the s3 run, blobs go to a bucket of their own, unless the test names a store itself.
  const bucket = testBlobsInBucket && env.BLOB_DIR === undefined && env.BLOB_STORE_URL === undefined ? await startBucket() : null
  const config = loadConfig({
    ...TEST_ENV,
    DATA_DIR: directory,
    SECRET_KEY: randomBytes(32).toString('base64'),
    PUBLIC_ORIGIN: 'https://instances.coffer.example',
    ...bucket?.env(),
    ...env,
  })
  const clock = testClock()
  const instances = await Promise.all(
    Array.from({ length: count }, async () => {
      const logs: string[] = []
      const log = createLogger(config.logLevel, capture(logs))
      const deps = await createDeps(config, { clock, log, database: options.reach?.(database.target) ?? database.target })
      await startUp(deps)
      return listening(deps, logs, clock, database.target)
    }),
  )
  let closed = false
  return {
    instances,
    async close() {
      if (closed) return
      closed = true
      const faults: unknown[] = []
      for (const instance of instances) await instance.close().catch((fault: unknown) => faults.push(fault))
      await database.drop()
      await bucket?.close()
      await rm(directory, { recursive: true, force: true })
      if (faults.length > 0) throw faults[0]
    },
  }
}
