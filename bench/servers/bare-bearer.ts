// The ceiling of the bearer scenario: a bare Fastify 5 route (no logger, no hooks, no schemas)
// doing the same work as Coffer's `GET /v1/profile` minus the database: parse
// `Authorization: Bearer <token>` (with Coffer's own `bearerToken`), look the token up in an
// in-memory Map, answer a small JSON profile. Environment: BENCH_TOKEN, the one token it knows.
import Fastify from 'fastify'
import { bearerToken } from '../../src/http/bearer.ts'
import { serveParent, startOrDie } from '../lib/child-side.ts'

interface Profile {
  readonly user_id: string
  readonly email: string
  readonly created_at: string
}

await startOrDie(async () => {
  const token = process.env.BENCH_TOKEN
  if (!token) throw new Error('BENCH_TOKEN is required')
  const sessions = new Map<string, Profile>([
    [token, { user_id: '0b6c1c9e-2f1a-4d55-9a53-7b0f1c2d3e4f', email: 'bench@example.test', created_at: '2025-01-01T00:00:00.000Z' }],
  ])
  const app = Fastify({ logger: false })
  app.get('/v1/profile', async (request, reply) => {
    const presented = bearerToken(request.headers.authorization)
    const profile = presented === null ? undefined : sessions.get(presented)
    if (profile === undefined) return reply.code(401).send({ code: 'error.auth.unauthenticated' })
    return profile
  })
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  serveParent({ url }, { onStop: () => app.close() })
})
