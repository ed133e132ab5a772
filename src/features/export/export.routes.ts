import { Readable } from 'node:stream'
import { AccountExport } from '../../contract/export.ts'
import type { Deps } from '../../deps.ts'
import { requireCaller } from '../../http/bearer.ts'
import { operation, type App } from '../../http/route.ts'
import { exportAccount, exportFileName } from './export.service.ts'

export function exportRoutes(app: App, deps: Deps): void {
  app.route({
    method: 'GET',
    url: '/v1/account/export',
    ...operation({
      operationId: 'exportAccount',
      summary: 'Everything the server holds about the account, as one JSON document to save',
      description:
        'Profile, second factor (whether it is on, never its secret), sessions, cohorts, security events, moderation record, and every album with its feed and its ' +
        'assets’ custody receipts, each section as its own route shows it. Each album is exported up to the instant the export began (later writes are left out). ' +
        'The body is written while it is read (an account with many assets gives hundreds of megabytes): a body that ends early, or is not one JSON document, ' +
        'was cut short by a failure and must be fetched again. Each export counts in the account’s budget (EXPORTS_PER_WINDOW per EXPORT_WINDOW_S), beyond which 429.',
      tags: ['Accounts and sessions'],
      auth: 'bearer',
      responses: { 200: AccountExport },
      described: { 200: 'The account’s export, as an attachment named `coffer-export-<user_id>.json`' },
      errors: ['error.rate_limited'],
      attachment: true,
    }),
    handler: async (request, reply) => {
      const caller = requireCaller(request)
      reply.type('application/json; charset=utf-8').header('content-disposition', `attachment; filename="${exportFileName(caller.userId)}"`)
      // HEAD answers the headers alone: it neither counts in the budget nor reads anything.
      // The body is the document as text: Fastify sends a string or a stream as it is (the
      // response schema describes the document, for the OpenAPI document).
      if (request.method === 'HEAD') return reply.send('' as never)
      // Readable.from reads the next chunk only when the connection has taken the last ones (backpressure).
      return reply.send(Readable.from(await exportAccount(deps, caller), { objectMode: false }) as never)
    },
  })
}
