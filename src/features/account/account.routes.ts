import { NoContent } from '../../contract/common.ts'
import { DeleteAccountRequest } from '../../contract/profile.ts'
import type { Deps } from '../../deps.ts'
import { requireCaller } from '../../http/bearer.ts'
import { JSON_MEDIA, noContent, operation, requestMeta, type App } from '../../http/route.ts'
import { validateBody } from '../../http/validation.ts'
import { deleteOwnAccount } from './deletion.service.ts'

const tags = ['Account']

export function accountRoutes(app: App, deps: Deps): void {
  app.route({
    method: 'POST',
    url: '/v1/account/delete',
    ...operation({
      operationId: 'deleteAccount',
      summary: 'Delete the caller’s account and everything it holds',
      description:
        'Needs a recent password proof (reauthenticate within FRESHNESS_WINDOW_S) and, when the account has a confirmed second factor, a live code. Every session ends at once; albums, assets, upload sessions, directory, escrow, cohorts and relay channels are removed and the blobs become garbage, except what a legal hold or a retention floor keeps until it lapses. Receipts already issued stay in the chain. The body may be left out when no code is needed.',
      tags,
      auth: 'bearer',
      accepts: JSON_MEDIA,
      bodyOptional: true,
      deferredBody: DeleteAccountRequest,
      responses: { 204: NoContent },
      described: { 204: 'The account is deleted: its tokens no longer work and its email is free' },
      errors: ['error.auth.reauthentication_required', 'error.auth.second_factor_required', 'error.totp.invalid_code', 'error.rate_limited'],
    }),
    handler: async (request, reply) => {
      const caller = requireCaller(request)
      const totpCode = request.body === undefined ? undefined : validateBody(DeleteAccountRequest, request.body).totp_code
      await deleteOwnAccount(deps, caller, totpCode, requestMeta(request), request.log)
      return noContent(reply)
    },
  })
}
