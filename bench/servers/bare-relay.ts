// The ceiling of the relay scenario: a bare Fastify 5 server (no logger, no hooks, no schemas)
// with Coffer's two relay routes over an in-memory mailbox: POST appends a payload to one
// direction of a channel, GET ?direction= takes everything waiting there. Environment:
// BENCH_CHANNELS, the comma-separated channel ids it knows (the very ids Coffer opened).
import Fastify from 'fastify'
import { serveParent, startOrDie } from '../lib/child-side.ts'

type Direction = 'to_initiator' | 'to_enrollee'
const MAILBOX_MAX_PAYLOADS = 64

await startOrDie(async () => {
  const ids = (process.env.BENCH_CHANNELS ?? '').split(',').filter((id) => id !== '')
  if (ids.length === 0) throw new Error('BENCH_CHANNELS is required')
  const channels = new Map<string, Record<Direction, string[]>>(ids.map((id) => [id, { to_initiator: [], to_enrollee: [] }]))
  const isDirection = (value: unknown): value is Direction => value === 'to_initiator' || value === 'to_enrollee'
  const app = Fastify({ logger: false })

  app.post<{ Params: { channel_id: string }; Body: { direction?: unknown; payload?: unknown } }>(
    '/v1/auth/devices/enroll/channel/:channel_id',
    async (request, reply) => {
      const { direction, payload } = request.body ?? {}
      if (!isDirection(direction) || typeof payload !== 'string') return reply.code(422).send({ code: 'error.request.invalid' })
      const channel = channels.get(request.params.channel_id)
      if (channel === undefined) return reply.code(404).send({ code: 'error.enroll.channel_not_found' })
      if (channel[direction].length >= MAILBOX_MAX_PAYLOADS) return reply.code(409).send({ code: 'error.enroll.mailbox_full' })
      channel[direction].push(payload)
      return reply.code(204).send()
    },
  )

  app.get<{ Params: { channel_id: string }; Querystring: { direction?: string } }>('/v1/auth/devices/enroll/channel/:channel_id', async (request, reply) => {
    const direction = request.query.direction
    if (!isDirection(direction)) return reply.code(422).send({ code: 'error.request.invalid' })
    const channel = channels.get(request.params.channel_id)
    if (channel === undefined) return reply.code(404).send({ code: 'error.enroll.channel_not_found' })
    const payloads = channel[direction]
    channel[direction] = []
    return { payloads }
  })

  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  serveParent({ url }, { onStop: () => app.close() })
})
