import { CodeRequest, EnrollmentResponse, RecoveryCodesResponse, TotpStatusResponse } from '../../contract/auth.ts'
import { NoContent } from '../../contract/common.ts'
import type { Deps } from '../../deps.ts'
import { requireCaller } from '../../http/bearer.ts'
import { prefersRepresentation, REPRESENTATION_APPLIED } from '../../http/prefer.ts'
import { JSON_MEDIA, noContent, operation, requestMeta, type App } from '../../http/route.ts'
import { confirmTotpEnrollment, disableTotp, regenerateRecoveryCodes, secondFactorStatus, startTotpEnrollment } from './totp.service.ts'

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
      reads: ['Prefer'],
      responses: { 200: RecoveryCodesResponse, 204: NoContent },
      described: {
        200: 'The second factor is active, and these are its recovery codes (asked for with `Prefer: return=representation`; Preference-Applied says so)',
        204: 'The second factor is active: sign-in now needs a code (no recovery codes were made)',
      },
      errors: ['error.totp.nothing_pending', 'error.totp.invalid_code', 'error.rate_limited'],
    }),
    handler: async (request, reply) => {
      const codes = await confirmTotpEnrollment(
        deps,
        requireCaller(request),
        request.body.totp_code,
        requestMeta(request),
        prefersRepresentation(request.headers),
      )
      if (codes === null) return noContent(reply)
      return reply.header('preference-applied', REPRESENTATION_APPLIED).send({ recovery_codes: codes })
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

  app.route({
    method: 'GET',
    url: '/v1/auth/totp',
    ...operation({
      operationId: 'secondFactorStatus',
      summary: 'Whether the account has a second factor, and how many recovery codes it has left',
      tags,
      auth: 'bearer',
      responses: { 200: TotpStatusResponse },
      described: { 200: 'The second factor’s state and its unused recovery codes' },
    }),
    handler: async (request) => {
      const { status, recoveryCodesRemaining } = await secondFactorStatus(deps.storage, requireCaller(request).userId)
      return { status, recovery_codes_remaining: recoveryCodesRemaining }
    },
  })

  app.route({
    method: 'POST',
    url: '/v1/auth/totp/recovery-codes',
    ...operation({
      operationId: 'regenerateRecoveryCodes',
      summary: 'Replace the second factor’s recovery codes; needs a recent password proof and a code',
      tags,
      auth: 'bearer',
      accepts: JSON_MEDIA,
      body: CodeRequest,
      responses: { 200: RecoveryCodesResponse },
      described: { 200: 'The new recovery codes, shown this once; every earlier one stopped working' },
      errors: ['error.auth.reauthentication_required', 'error.totp.not_enrolled', 'error.totp.invalid_code', 'error.rate_limited'],
    }),
    handler: async (request) => ({ recovery_codes: await regenerateRecoveryCodes(deps, requireCaller(request), request.body.totp_code, requestMeta(request)) }),
  })
}
