// bearer: authenticated `GET /v1/profile` on a real Coffer server (bearer check = one indexed
// lookup on sessions.access_hash, then the account read) against a bare Fastify 5 route that
// does the same header check on an in-memory Map. Coffer runs at LOG_LEVEL=info (the
// production default) and at warn (to show what per-request logging costs), on SQLite and, when
// a URL is given, on PostgreSQL. A second ceiling does Coffer's own lookup (its bearer query as
// a raw node:sqlite statement on its database file) on the same bare route: it splits the gap
// into what the database lookup costs and what the service's own per-request work costs.
import { startChild, type Child } from '../lib/child.ts'
import { registerAccount, startCoffer } from '../lib/coffer.ts'
import { alternate, measureHttp, type Contender } from '../lib/measure.ts'
import { POSTGRES_SKIPPED, row, type Scenario, type Target } from '../lib/scenario.ts'

const CONNECTIONS = 10
const CEILING = 'bare Fastify route + Map'
const SQLITE_CEILING = 'bare Fastify route + Coffer\'s SQLite lookup'

function profileLoad(name: string, child: Child<{ readonly url: string }>, token: string): Contender {
  return {
    name,
    measure: (seconds) =>
      measureHttp(child, {
        url: `${child.ready.url}/v1/profile`,
        headers: { authorization: `Bearer ${token}` },
        connections: CONNECTIONS,
        expectStatus: 200,
      }, seconds),
  }
}

export const bearer: Scenario = {
  name: 'bearer',
  summary: `GET /v1/profile with a bearer token, ${CONNECTIONS} keep-alive connections; ceiling: ${CEILING}`,
  async run(context) {
    const contenders: Contender[] = []
    const subjects: Array<[subject: string, target: Target | null]> = []

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
    subjects.push(['coffer sqlite, LOG_LEVEL=info', { min: 0.5 }])

    const sqliteWarn = await startCoffer(context, { engine: 'sqlite', logLevel: 'warn' })
    contenders.push(profileLoad('coffer sqlite, LOG_LEVEL=warn', sqliteWarn, (await registerAccount(sqliteWarn)).accessToken))
    subjects.push(['coffer sqlite, LOG_LEVEL=warn', null])

    const notes: string[] = []
    if (context.postgresUrl !== null) {
      const postgresInfo = await startCoffer(context, { engine: 'postgres', logLevel: 'info' })
      contenders.push(profileLoad('coffer postgres, LOG_LEVEL=info', postgresInfo, (await registerAccount(postgresInfo)).accessToken))
      subjects.push(['coffer postgres, LOG_LEVEL=info', null])
    } else {
      notes.push(POSTGRES_SKIPPED)
    }
    const measured = await alternate(contenders, context.schedule, context.log)
    return {
      rows: [
        ...subjects.map(([subject, target]) => row('bearer', measured, subject, CEILING, target, 'req')),
        row('bearer', measured, SQLITE_CEILING, CEILING, null, 'req'),
        row('bearer', measured, 'coffer sqlite, LOG_LEVEL=info', SQLITE_CEILING, null, 'req'),
      ],
      measured: [...measured.values()],
      notes,
    }
  },
}
