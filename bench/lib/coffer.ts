// Starting a real Coffer server as a child (servers/coffer.ts) on a fresh database, its blobs in
// its folder or in a bucket (s3rver, servers/s3rver.ts), and getting an account onto it the way a
// client does.
import { randomBytes, randomUUID } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import path from 'node:path'
import { CofferClient } from '../../src/sdk/client.ts'
import type { CofferReady } from '../servers/coffer.ts'
import type { BucketReady } from '../servers/s3rver.ts'
import { startChild, type Child } from './child.ts'
import { commandCpuSeconds } from './cpu.ts'
import { createSchema, dropSchema } from './postgres.ts'
import type { BenchContext } from './scenario.ts'

export type CofferChild = Child<CofferReady>
export type BucketChild = Child<BucketReady>

export interface CofferOptions {
  readonly engine: 'sqlite' | 'postgres'
  /** The production default is info: that is what operators run. */
  readonly logLevel: 'info' | 'warn'
  /** Where the blobs go: the server's folder (BLOB_DIR under DATA_DIR) unless a bucket is given. */
  readonly bucket?: BucketChild
  /** More server variables (LOCKOUT_THRESHOLD, ...). */
  readonly env?: Record<string, string>
}

/** An s3rver in a child of its own, stopped when the scenario ends. */
export async function startS3rver(context: BenchContext): Promise<BucketChild> {
  const child = await startChild<BucketReady>('servers/s3rver.ts')
  context.defer(() => child.stop())
  return child
}

/**
 * The server variables every Coffer under test starts from: its data folder and log level, and
 * unset, so that the defaults hold, whatever the shell running the bench has set (DATABASE_URL, SECRET_KEY,
 * the password-hash parameters).
 */
export function serverEnv(dataDir: string, logLevel: 'info' | 'warn'): Record<string, string | undefined> {
  return {
    DATA_DIR: dataDir,
    LOG_LEVEL: logLevel,
    DATABASE_URL: undefined,
    SECRET_KEY: undefined,
    PASSWORD_HASH_MEMORY_KIB: undefined,
    PASSWORD_HASH_ITERATIONS: undefined,
  }
}

/** A fresh PostgreSQL schema on `url` for one server, dropped when the run ends (`defer`); its name. */
export async function freshSchema(url: string, defer: BenchContext['defer']): Promise<string> {
  const schema = `bench_${randomBytes(6).toString('hex')}`
  await createSchema(url, schema)
  defer(() => dropSchema(url, schema))
  return schema
}

/** A Coffer server on a fresh temp DATA_DIR (and a fresh schema on PostgreSQL), stopped and removed at the end of the run. */
export async function startCoffer(context: BenchContext, options: CofferOptions): Promise<CofferChild> {
  const [child] = await startCofferInstances(context, options, 1)
  if (child === undefined) throw new Error('no Coffer server started')
  return child
}

/**
 * `count` instances of one deployment: Coffer servers sharing a fresh temp DATA_DIR (its
 * SECRET_KEY and blob folder) and, on PostgreSQL, a fresh schema, started one after another and
 * stopped and removed at the end of the run. Each answers, as its CPU, that of all of them.
 */
export async function startCofferInstances(context: BenchContext, options: CofferOptions, count: number): Promise<CofferChild[]> {
  const dataDir = await mkdtemp(path.join(context.workDir, `coffer-${options.engine}-`))
  context.defer(() => rm(dataDir, { recursive: true, force: true }))
  const env: Record<string, string | undefined> = {
    ...serverEnv(dataDir, options.logLevel),
    // A run that waits for a quiet machine can outlast the default 15 minutes of an access token.
    ACCESS_TOKEN_TTL_S: '86400',
    ...options.bucket?.ready.env,
    ...options.env,
  }
  if (options.engine === 'postgres') {
    if (context.postgresUrl === null) throw new Error('a PostgreSQL contender needs BENCH_DATABASE_URL or TEST_DATABASE_URL')
    env.DATABASE_URL = context.postgresUrl
    env.BENCH_PG_SCHEMA = await freshSchema(context.postgresUrl, (cleanup) => context.defer(cleanup))
  }
  const children: CofferChild[] = []
  for (let i = 0; i < count; i++) {
    const child = await startChild<CofferReady>('servers/coffer.ts', { env })
    context.defer(() => child.stop())
    children.push(child)
  }
  // The database server and the bucket's server work for the subject: their CPU counts as the subject's, not as noise.
  const helpers: Array<() => number> = children.map((child) => () => child.cpuSeconds())
  if (options.engine === 'postgres') helpers.push(() => commandCpuSeconds('postgres'))
  const bucket = options.bucket
  if (bucket !== undefined) helpers.push(() => bucket.cpuSeconds())
  if (helpers.length === 1) return children
  return children.map((child) => ({ ...child, cpuSeconds: () => helpers.reduce((sum, helper) => sum + helper(), 0) }))
}

export interface BenchAccount {
  readonly email: string
  readonly password: string
  readonly accessToken: string
}

/** Registers a new account through the SDK (one argon2 hash at the server's parameters). */
export async function registerAccount(server: CofferChild): Promise<BenchAccount> {
  const email = `bench-${randomUUID()}@example.test`
  const password = 'correct horse battery staple'
  const tokens = await new CofferClient({ baseUrl: server.ready.url }).register(email, password)
  return { email, password, accessToken: tokens.access_token }
}
