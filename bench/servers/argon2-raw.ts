// The ceiling of the login scenario: raw @node-rs/argon2 `verify` of a correct password, with
// Coffer's default parameters (read from src/config.ts, so they cannot drift), run by
// `concurrency` independent loops through the libuv thread pool, as a server with that many
// requests in flight would. Same process shape as the servers: its own child, default
// UV_THREADPOOL_SIZE unless the parent sets one for both.
import { hash, verify, type Algorithm } from '@node-rs/argon2'
import { loadConfig } from '../../src/config.ts'
import { serveParent, startOrDie } from '../lib/child-side.ts'

// `Algorithm` is a const enum in the typings; its Argon2id member is 2 (as in src/crypto/passwords.ts).
const ARGON2ID = 2 as Algorithm

export interface VerifyRun {
  readonly seconds: number
  readonly concurrency: number
}

export interface VerifyRunResult {
  readonly completed: number
  readonly seconds: number
  readonly p50Ms: number
  readonly p99Ms: number
}

export interface Argon2Ready {
  readonly memoryKib: number
  readonly iterations: number
  readonly parallelism: number
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0)
}

await startOrDie(async () => {
  const { memoryKib, iterations } = loadConfig({}).passwordHash
  const options = { algorithm: ARGON2ID, memoryCost: memoryKib, timeCost: iterations, parallelism: 1 }
  const password = 'correct horse battery staple'
  const stored = await hash(password, options)

  const run = async ({ seconds, concurrency }: VerifyRun): Promise<VerifyRunResult> => {
    const started = performance.now()
    const deadline = started + seconds * 1000
    const latencies: number[] = []
    const loop = async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now()
        if (!(await verify(stored, password))) throw new Error('raw verify refused the right password')
        latencies.push(performance.now() - t0)
      }
    }
    await Promise.all(Array.from({ length: concurrency }, loop))
    latencies.sort((a, b) => a - b)
    return {
      completed: latencies.length,
      seconds: (performance.now() - started) / 1000,
      p50Ms: percentile(latencies, 0.5),
      p99Ms: percentile(latencies, 0.99),
    }
  }

  const ready: Argon2Ready = { memoryKib, iterations, parallelism: 1 }
  serveParent(ready, { onRequest: (body) => run(body as VerifyRun) })
})
