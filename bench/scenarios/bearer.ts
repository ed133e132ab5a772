// bearer: authenticated `GET /v1/profile` on a real Coffer server (bearer check = one indexed
// lookup on sessions.access_hash, then the account read) against a bare Fastify 5 route that
// does the same header check on an in-memory Map. Coffer runs at LOG_LEVEL=info (the
// production default) and at warn (to show what per-request logging costs), on SQLite and, when
// a URL is given, on PostgreSQL. The targets are against the ceilings that do Coffer's own
// lookup on the same bare route (its bearer query as a raw node:sqlite statement on its
// database file; on PostgreSQL its bearer lookup on its schema): the one lookup per request is
// a guarantee, so what is measured is what the service adds to it. The Map route stays as an
// information row: what the lookup itself costs.
import { startChild, type Child } from '../lib/child.ts'
import { commandCpuSeconds } from '../lib/cpu.ts'
import { registerAccount, startCoffer } from '../lib/coffer.ts'
import { alternate, measureHttp, type Contender } from '../lib/measure.ts'
import { POSTGRES_SKIPPED, row, type Scenario, type Target } from '../lib/scenario.ts'

const CONNECTIONS = 10
const CEILING = 'bare Fastify route + Map'
const SQLITE_CEILING = "bare Fastify route + Coffer's SQLite lookup"
const POSTGRES_CEILING = "bare Fastify route + Coffer's PostgreSQL lookup"
const TARGET: Target = { min: 0.6 }

function profileLoad(name: string, child: Child<{ readonly url: string }>, token: string): Contender {
  return {
    name,
    measure: (seconds) =>
      measureHttp(
        child,
        {
          url: `${child.ready.url}/v1/profile`,
          headers: { authorization: `Bearer ${token}` },
          connections: CONNECTIONS,
          expectStatus: 200,
        },
        seconds,
      ),
  }
}

export const bearer: Scenario = {
  name: 'bearer',
  summary: `GET /v1/profile with a bearer token, ${CONNECTIONS} keep-alive connections; ceilings: the same bare route with Coffer's own lookup (and ${CEILING})`,
  async run(context) {
    const contenders: Contender[] = []
    const rows: Array<[subject: string, ceiling: string, target: Target | null]> = []

    const sqliteInfo = await startCoffer(context, { engine: 'sqlite', logLevel: 'info' })
    const account = await registerAccount(sqliteInfo)
    // The ceiling knows the very token Coffer issued, so both see byte-identical requests.
    const ceiling = await startChild<{ url: string }>('servers/bare-bearer.ts', { env: { BENCH_TOKEN: account.accessToken } })
    context.defer(() => ceiling.stop())
    contenders.push(profileLoad(CEILING, ceiling, account.accessToken))
    const databaseFile = sqliteInfo.ready.databaseFile
    if (databaseFile === null) throw new Error('bearer: the SQLite server has no database file')
    const sqliteCeiling = await startChild<{ url: string }>('servers/bare-bearer-sqlite.ts', { env: { BENCH_SQLITE_FILE: databaseFile } })
    context.defer(() => sqliteCeiling.stop())
    contenders.push(profileLoad(SQLITE_CEILING, sqliteCeiling, account.accessToken))

    contenders.push(profileLoad('coffer sqlite, LOG_LEVEL=info', sqliteInfo, account.accessToken))
    rows.push(['coffer sqlite, LOG_LEVEL=info', SQLITE_CEILING, TARGET])

    const sqliteWarn = await startCoffer(context, { engine: 'sqlite', logLevel: 'warn' })
    contenders.push(profileLoad('coffer sqlite, LOG_LEVEL=warn', sqliteWarn, (await registerAccount(sqliteWarn)).accessToken))
    rows.push(['coffer sqlite, LOG_LEVEL=warn', SQLITE_CEILING, null])
    rows.push([SQLITE_CEILING, CEILING, null])
    rows.push(['coffer sqlite, LOG_LEVEL=info', CEILING, null])

    const notes: string[] = []
    if (context.postgresUrl !== null) {
      const postgresInfo = await startCoffer(context, { engine: 'postgres', logLevel: 'info' })
      const postgresAccount = await registerAccount(postgresInfo)
      const schema = postgresInfo.ready.databaseSchema
      if (schema === null) throw new Error('bearer: the PostgreSQL server names no schema')
      const started = await startChild<{ url: string }>('servers/bare-bearer-postgres.ts', {
        env: { BENCH_PG_URL: context.postgresUrl, BENCH_PG_SCHEMA: schema },
      })
      context.defer(() => started.stop())
      // The database server works for it as it does for Coffer: its CPU counts as the ceiling's.
      const postgresCeiling = { ...started, cpuSeconds: () => started.cpuSeconds() + commandCpuSeconds('postgres') }
      contenders.push(profileLoad(POSTGRES_CEILING, postgresCeiling, postgresAccount.accessToken))
      contenders.push(profileLoad('coffer postgres, LOG_LEVEL=info', postgresInfo, postgresAccount.accessToken))
      rows.push(['coffer postgres, LOG_LEVEL=info', POSTGRES_CEILING, TARGET])
      rows.push([POSTGRES_CEILING, CEILING, null])
    } else {
      notes.push(POSTGRES_SKIPPED)
    }
    const measured = await alternate(contenders, context.schedule, context.log)
    return {
      rows: rows.map(([subject, ceiling, target]) => row('bearer', measured, subject, ceiling, target, 'req')),
      measured: [...measured.values()],
      notes,
    }
  },
}
