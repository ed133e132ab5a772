import { CodeRequest, EnrollmentResponse } from '../../contract/auth.ts'
import { NoContent } from '../../contract/common.ts'
import type { Deps } from '../../deps.ts'
import { requireCaller } from '../../http/bearer.ts'
import { JSON_MEDIA, noContent, operation, requestMeta, type App } from '../../http/route.ts'
import { confirmTotpEnrollment, disableTotp, startTotpEnrollment } from './totp.service.ts'

const tags = ['Second factor']

export function totpRoutes(app: App, deps: Deps): void {
  app.route({
    method: 'POST',
    url: '/v1/auth/totp/enroll',
    ...operation({
      operationId: 'startTotpEnrollment',
      summary: 'Start (or restart) TOTP enrollment; the secret is served once',
      tags,
      auth: 'bearer',
      responses: { 200: EnrollmentResponse },
      described: { 200: 'The pending second factor’s provisioning URI (shown once)' },
      errors: ['error.totp.already_active', 'error.not_found'],
    }),
    handler: async (request) => ({ provisioning_uri: await startTotpEnrollment(deps, requireCaller(request)) }),
  })

  app.route({
    method: 'POST',
    url: '/v1/auth/totp/confirm',
    ...operation({
      operationId: 'confirmTotpEnrollment',
      summary: 'Activate the pending second factor with a live code',
      tags,
      auth: 'bearer',
      accepts: JSON_MEDIA,
      body: CodeRequest,
      responses: { 204: NoContent },
      described: { 204: 'The second factor is active: sign-in now needs a code' },
      errors: ['error.totp.nothing_pending', 'error.totp.invalid_code', 'error.rate_limited'],
    }),
    handler: async (request, reply) => {
      await confirmTotpEnrollment(deps, requireCaller(request), request.body.totp_code, requestMeta(request))
      return noContent(reply)
    },
  })

  app.route({
    method: 'POST',
    url: '/v1/auth/totp/disable',
    ...operation({
      operationId: 'disableTotp',
      summary: 'Remove the second factor; needs a live code besides the session',
      tags,
      auth: 'bearer',
      accepts: JSON_MEDIA,
      body: CodeRequest,
      responses: { 204: NoContent },
      described: { 204: 'The second factor is removed' },
      errors: ['error.totp.not_enrolled', 'error.totp.invalid_code', 'error.rate_limited'],
    }),
    handler: async (request, reply) => {
      await disableTotp(deps, requireCaller(request), request.body.totp_code, requestMeta(request))
      return noContent(reply)
    },
  })
}
