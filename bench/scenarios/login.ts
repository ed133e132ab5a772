// login: `POST /v1/auth/login` on a real Coffer server (SQLite; PostgreSQL too when given; default argon2id parameters)
// against raw @node-rs/argon2 `verify` with the same parameters and the same number of
// operations in flight through the libuv pool. Also an unknown email (the dummy hash) against a
// wrong password: they must cost the same, or the rate tells which emails exist.
import { startChild } from '../lib/child.ts'
import type { LoopRun } from '../lib/child-side.ts'
import { registerAccount, startCoffer, type CofferChild } from '../lib/coffer.ts'
import { alternate, childLoop, measureHttp, type Contender } from '../lib/measure.ts'
import { row, type Scenario } from '../lib/scenario.ts'
import type { Argon2Ready } from '../servers/argon2-raw.ts'

/**
 * Requests (verifications) in flight: twice the default libuv pool size (4), so that the pool
 * always has queued work, as it does under a real burst of sign-ins. At exactly the pool size,
 * every moment the event loop spends on HTTP, SQL and logging leaves a pool thread idle, which
 * costs the server some 5-10% more against the raw loop (docs/benchmarks.md).
 */
const CONCURRENCY = Number(process.env.BENCH_LOGIN_CONCURRENCY ?? 8)
const CEILING = 'raw argon2 verify'
const OK = 'login, right password (200)'
const WRONG = 'login, wrong password (401)'
const UNKNOWN = 'login, unknown email (401)'
const POSTGRES_OK = 'login on postgres, right password (200)'

function loginLoad(name: string, server: CofferChild, body: { email: string; password: string }, expectStatus: number): Contender {
  return {
    name,
    measure: (seconds) =>
      measureHttp(
        server,
        {
          url: `${server.ready.url}/v1/auth/login`,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
          connections: CONCURRENCY,
          expectStatus,
        },
        seconds,
      ),
  }
}

export const login: Scenario = {
  name: 'login',
  summary: `POST /v1/auth/login, ${CONCURRENCY} in flight, default argon2id parameters; ceiling: ${CEILING} at the same concurrency`,
  async run(context) {
    // A wrong password counts toward the lock; the bench sends thousands, so the lock is out of
    // reach here (a locked account would answer without hashing at all).
    const server = await startCoffer(context, { engine: 'sqlite', logLevel: 'info', env: { LOCKOUT_THRESHOLD: '1000000000' } })
    const account = await registerAccount(server)
    const raw = await startChild<Argon2Ready>('servers/argon2-raw.ts')
    context.defer(() => raw.stop())

    const ceiling = childLoop(CEILING, raw, (seconds): LoopRun => ({ seconds, concurrency: CONCURRENCY }))
    const contenders = [
      ceiling,
      loginLoad(OK, server, { email: account.email, password: account.password }, 200),
      loginLoad(WRONG, server, { email: account.email, password: 'wrong horse battery staple' }, 401),
      loginLoad(UNKNOWN, server, { email: 'nobody-here@example.test', password: account.password }, 401),
    ]
    // On PostgreSQL a login's two commits are round trips that do not hold the event loop (on
    // SQLite they run on it): the row docs/benchmarks.md ("login", round 2) proposed for 0.9.
    const postgres =
      context.postgresUrl === null ? null : await startCoffer(context, { engine: 'postgres', logLevel: 'info', env: { LOCKOUT_THRESHOLD: '1000000000' } })
    if (postgres !== null) {
      const postgresAccount = await registerAccount(postgres)
      contenders.push(loginLoad(POSTGRES_OK, postgres, { email: postgresAccount.email, password: postgresAccount.password }, 200))
    }
    const measured = await alternate(contenders, context.schedule, context.log)
    return {
      rows: [
        // Issue 16: the right password at 0.9 (docs/benchmarks.md, "login", round 2).
        row('login', measured, OK, CEILING, { min: 0.9 }),
        row('login', measured, WRONG, CEILING, { min: 0.85 }),
        row('login', measured, UNKNOWN, CEILING, { min: 0.85 }),
        row('login', measured, UNKNOWN, WRONG, { min: 0.9, max: 1.1 }),
        ...(postgres === null ? [] : [row('login', measured, POSTGRES_OK, CEILING, { min: 0.9 })]),
      ],
      measured: [...measured.values()],
      notes: [
        `argon2id m=${raw.ready.memoryKib} KiB, t=${raw.ready.iterations}, p=${raw.ready.parallelism} on both sides; ${CONCURRENCY} in flight (BENCH_LOGIN_CONCURRENCY).`,
        'The last row compares unknown email to wrong password: about 1.0 means the dummy hash hides which emails exist.',
      ],
    }
  },
}
