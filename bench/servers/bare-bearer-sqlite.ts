// The second ceiling of the bearer scenario: the bare Fastify 5 route of bare-bearer.ts, but
// the token is looked up as Coffer looks it up: SHA-256 of the token, then Coffer's own
// bearer query (compiled by Kysely from src/storage/kysely/sessions.ts) as a raw node:sqlite
// statement on a read-only connection to the Coffer server's database file. No logger, hooks,
// schemas, Kysely runtime or row mapping: what is left between this and Coffer is the
// service's own per-request work. Environment: BENCH_SQLITE_FILE, that database file.
import Fastify from 'fastify'
import { CamelCasePlugin, DummyDriver, Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely'
import { DatabaseSync } from 'node:sqlite'
import { hashToken } from '../../src/crypto/tokens.ts'
import { bearerLookupQuery } from '../../src/storage/kysely/sessions.ts'
import type { Tables } from '../../src/storage/kysely/tables.ts'
import { bearerToken } from '../../src/http/bearer.ts'
import { serveParent, startOrDie } from '../lib/child-side.ts'

interface BearerRow {
  readonly user_id: string
  readonly email: string
  readonly created_at: number
  readonly access_expires_at: number
}

await startOrDie(async () => {
  const file = process.env.BENCH_SQLITE_FILE
  if (!file) throw new Error('BENCH_SQLITE_FILE is required')
  // Compile only (Kysely's "splitting build, compile and execute" recipe): the SQL text Coffer sends.
  const compiler = new Kysely<Tables>({
    dialect: {
      createAdapter: () => new SqliteAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new SqliteIntrospector(db),
      createQueryCompiler: () => new SqliteQueryCompiler(),
    },
    plugins: [new CamelCasePlugin()],
  })
  const lookup = new DatabaseSync(file, { readOnly: true }).prepare(bearerLookupQuery(compiler, '').compile().sql)

  const app = Fastify({ logger: false })
  app.get('/v1/profile', async (request, reply) => {
    const presented = bearerToken(request.headers.authorization)
    const row = presented === null ? undefined : (lookup.get(hashToken(presented)) as BearerRow | undefined)
    if (row === undefined || row.access_expires_at <= Date.now()) return reply.code(401).send({ code: 'error.auth.unauthenticated' })
    return { user_id: row.user_id, email: row.email, created_at: new Date(row.created_at).toISOString() }
  })
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  serveParent({ url }, { onStop: () => app.close() })
})
