// bearer: authenticated `GET /v1/profile` on a real Coffer server (bearer check = one indexed
// lookup on sessions.access_hash, then the account read) against a bare Fastify 5 route that
// does the same header check on an in-memory Map. Coffer runs at LOG_LEVEL=info (the
// production default) and at warn (to show what per-request logging costs), on SQLite and, when
// a URL is given, on PostgreSQL.
import { startChild, type Child } from '../lib/child.ts'
import { registerAccount, startCoffer } from '../lib/coffer.ts'
import { measureHttp, type Contender } from '../lib/measure.ts'
import { measureAgainst, POSTGRES_SKIPPED, type Scenario, type Target } from '../lib/scenario.ts'

const CONNECTIONS = 10
const CEILING = 'bare Fastify route + Map'

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
    return measureAgainst(context, 'bearer', contenders, subjects, CEILING, 'req', notes)
  },
}
