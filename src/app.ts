// buildApp(deps): the Fastify application with every http plugin and feature route. It never
// listens; main.ts does, and tests do on an ephemeral port.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { LogController } from 'fastify'
import type { Deps } from './deps.ts'
import { albumsRoutes } from './features/albums/albums.routes.ts'
import { authRoutes } from './features/auth/auth.routes.ts'
import { blobsRoutes } from './features/blobs/blobs.routes.ts'
import { custodyRoutes } from './features/custody/custody.routes.ts'
import { directoryRoutes } from './features/directory/directory.routes.ts'
import { enrollmentRoutes } from './features/enrollment/enrollment.routes.ts'
import { escrowRoutes } from './features/escrow/escrow.routes.ts'
import { exportRoutes } from './features/export/export.routes.ts'
import { linksRoutes } from './features/links/links.routes.ts'
import { sharingRoutes } from './features/sharing/sharing.routes.ts'
import { lifecycleRoutes } from './features/lifecycle/lifecycle.routes.ts'
import { moderationRoutes } from './features/moderation/moderation.routes.ts'
import { accountRoutes } from './features/account/account.routes.ts'
import { profileRoutes } from './features/profile/profile.routes.ts'
import { quotaRoutes } from './features/quota/quota.routes.ts'
import { sessionsRoutes } from './features/sessions/sessions.routes.ts'
import { totpRoutes } from './features/totp/totp.routes.ts'
import { uploadsRoutes } from './features/uploads/uploads.routes.ts'
import { registerBearerCheck } from './http/bearer.ts'
import { healthRoutes, registerMetrics } from './http/health.ts'
import { registerRequestLog } from './http/logging.ts'
import { registerMediaTypes } from './http/media-type.ts'
import { registerOpenApi } from './http/openapi.ts'
import { registerProblemHandlers } from './http/problem.ts'
import { requestId } from './http/request-id.ts'
import { registerResponseHeaders } from './http/response-headers.ts'
import type { App } from './http/route.ts'
import { registerUnroutedAnswers, unroutedOptions } from './http/unrouted.ts'
import { registerValidators } from './http/validation.ts'
import { registerWebApp } from './http/web-app.ts'

export async function buildApp(deps: Deps): Promise<App> {
  const app = Fastify({
    ...unroutedOptions,
    loggerInstance: deps.log,
    bodyLimit: deps.config.bodyLimitBytes,
    trustProxy: deps.config.trustProxy,
    genReqId: requestId,
    requestIdHeader: false,
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
    // While closing, requests already on open connections are still answered normally.
    return503OnClosing: false,
  }).withTypeProvider<TypeBoxTypeProvider>()

  // A response finished while closing ends its connection, so that a keep-alive client of an
  // in-flight request does not hold the shutdown open.
  let closing = false
  let reaper: NodeJS.Timeout | undefined
  app.addHook('preClose', async () => {
    closing = true
    // A response that finishes after close began leaves an idle keep-alive socket the server's
    // own close no longer looks at: reap idle sockets until the server is closed.
    reaper = setInterval(() => app.server.closeIdleConnections(), 50)
  })
  // A server about to listen takes a receipt chain's lease (decision 0072); a command that builds no server takes none.
  app.addHook('onReady', async () => deps.receiptChain.start(deps))
  app.addHook('onClose', async () => {
    clearInterval(reaper)
    // Another instance may take this one's receipt chain at once rather than when its lease ends.
    await deps.receiptChain.release(deps.storage).catch((error: unknown) => deps.log.warn({ err: error }, 'could not give up the receipt chain lease'))
  })

  registerProblemHandlers(app)
  registerValidators(app)
  registerMediaTypes(app)
  registerResponseHeaders(app, () => closing)
  registerUnroutedAnswers(app)
  registerBearerCheck(app, deps)
  registerMetrics(app, deps.metrics)
  registerRequestLog(app)
  await registerOpenApi(app)

  healthRoutes(app, deps)
  authRoutes(app, deps)
  sessionsRoutes(app, deps)
  totpRoutes(app, deps)
  profileRoutes(app, deps)
  accountRoutes(app, deps)
  directoryRoutes(app, deps)
  enrollmentRoutes(app, deps)
  escrowRoutes(app, deps)
  albumsRoutes(app, deps)
  uploadsRoutes(app, deps)
  quotaRoutes(app, deps)
  lifecycleRoutes(app, deps)
  const batchSlots = blobsRoutes(app, deps)
  custodyRoutes(app, deps)
  moderationRoutes(app, deps)
  exportRoutes(app, deps)
  sharingRoutes(app, deps)
  linksRoutes(app, deps, batchSlots)
  await registerWebApp(app)
  return app
}
