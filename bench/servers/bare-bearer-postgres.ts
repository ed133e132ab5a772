// The PostgreSQL ceiling of the bearer scenario: the bare Fastify 5 route of bare-bearer.ts,
// but the token is looked up as Coffer looks it up on PostgreSQL: SHA-256 of the token, then
// Coffer's own bearer lookup (src/storage/kysely/bearer-lookup.ts: its named prepared statement
// on a pool built as Coffer builds it) against the Coffer server's schema. No logger, hooks or
// schemas: what is left between this and Coffer on PostgreSQL is the service's own per-request
// work. Environment: BENCH_PG_URL and BENCH_PG_SCHEMA, the Coffer server's database and schema.
import Fastify from 'fastify'
import { CamelCasePlugin, Kysely } from 'kysely'
import { hashToken } from '../../src/crypto/tokens.ts'
import { bearerToken } from '../../src/http/bearer.ts'
import { postgresBearerLookup } from '../../src/storage/kysely/bearer-lookup.ts'
import { openPostgres } from '../../src/storage/kysely/postgres.ts'
import type { Tables } from '../../src/storage/kysely/tables.ts'
import { serveParent, startOrDie } from '../lib/child-side.ts'

await startOrDie(async () => {
  const url = process.env.BENCH_PG_URL
  const searchPath = process.env.BENCH_PG_SCHEMA
  if (!url || !searchPath) throw new Error('BENCH_PG_URL and BENCH_PG_SCHEMA are required')
  const { dialect, pool } = openPostgres(url, {
    searchPath,
    connectTimeoutMs: 5000,
    onConnectionLost: (error) => process.stderr.write(`bare-bearer-postgres: connection lost: ${error.message}\n`),
  })
  const db = new Kysely<Tables>({ dialect, plugins: [new CamelCasePlugin()] })
  const lookup = postgresBearerLookup(db, pool)

  const app = Fastify({ logger: false })
  app.get('/v1/profile', async (request, reply) => {
    const presented = bearerToken(request.headers.authorization)
    const session = presented === null ? undefined : await lookup(hashToken(presented))
    if (session === undefined || session.accessExpiresAt <= Date.now()) return reply.code(401).send({ code: 'error.auth.unauthenticated' })
    const { account } = session
    return { user_id: account.userId, email: account.email, created_at: new Date(account.createdAt).toISOString() }
  })
  const listening = await app.listen({ port: 0, host: '127.0.0.1' })
  serveParent(
    { url: listening },
    {
      onStop: async () => {
        await app.close()
        await db.destroy()
      },
    },
  )
})
