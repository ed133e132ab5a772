// Liveness, readiness and metrics, for load balancers and Prometheus.
import type { FastifyInstance } from 'fastify'
import { ServiceStatus } from '../contract/common.ts'
import type { Deps } from '../deps.ts'
import type { Metrics } from './metrics.ts'
import { unavailable } from './problem.ts'
import { operation } from './route.ts'

const tags = ['Operations']

export function registerMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    const labels = { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) }
    metrics.httpRequests.inc(labels)
    metrics.httpDuration.observe(labels, reply.elapsedTime / 1000)
    done()
  })
}

export function healthRoutes(app: FastifyInstance, deps: Deps): void {
  app.route({
    method: 'GET',
    url: '/healthz',
    ...operation({
      operationId: 'health',
      summary: 'The process is up',
      tags,
      auth: 'none',
      responses: { 200: ServiceStatus },
      described: { 200: 'The process is up' },
    }),
    handler: async () => ({ status: 'ok' }),
  })

  app.route({
    method: 'GET',
    url: '/readyz',
    ...operation({
      operationId: 'readiness',
      summary: 'The database (and blob store) answer',
      tags,
      auth: 'none',
      responses: { 200: ServiceStatus },
      described: { 200: 'The database and the blob store answer' },
      errors: ['error.unavailable'],
    }),
    handler: async (request) => {
      try {
        await Promise.all([deps.storage.ping(), deps.blobs.ping()])
      } catch (error) {
        request.log.error({ err: error }, 'readiness check failed')
        throw unavailable('The database or the blob store does not answer')
      }
      return { status: 'ready' }
    },
  })

  app.route({
    method: 'GET',
    url: '/metrics',
    ...operation({
      operationId: 'metrics',
      summary: 'Prometheus metrics of this instance (text exposition format)',
      tags,
      auth: 'none',
      responses: {},
      described: {},
      binaryResponse: { status: 200, mediaType: 'text/plain', description: 'The metrics in the Prometheus text exposition format (version 0.0.4)' },
    }),
    handler: async (_request, reply) => reply.type(deps.metrics.registry.contentType).send(await deps.metrics.registry.metrics()),
  })
}
