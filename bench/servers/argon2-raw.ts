// The ceiling of the login scenario: raw @node-rs/argon2 `verify` of a correct password, with
// Coffer's default parameters (read from src/config.ts, so they cannot drift), run by
// `concurrency` independent loops through the libuv thread pool, as a server with that many
// requests in flight would. Same process shape as the servers: its own child, default
// UV_THREADPOOL_SIZE unless the parent sets one for both.
import { hash, verify, type Algorithm } from '@node-rs/argon2'
import { loadConfig } from '../../src/config.ts'
import { serveParent, startOrDie, timedLoops, type LoopRun } from '../lib/child-side.ts'

// `Algorithm` is a const enum in the typings; its Argon2id member is 2 (as in src/crypto/passwords.ts).
const ARGON2ID = 2 as Algorithm

export interface Argon2Ready {
  readonly memoryKib: number
  readonly iterations: number
  readonly parallelism: number
}

await startOrDie(async () => {
  const { memoryKib, iterations } = loadConfig({}).passwordHash
  const options = { algorithm: ARGON2ID, memoryCost: memoryKib, timeCost: iterations, parallelism: 1 }
  const password = 'correct horse battery staple'
  const stored = await hash(password, options)

  const ready: Argon2Ready = { memoryKib, iterations, parallelism: 1 }
  serveParent(ready, {
    onRequest: (body) =>
      timedLoops(body as LoopRun, async () => {
        if (!(await verify(stored, password))) throw new Error('raw verify refused the right password')
      }),
  })
})
