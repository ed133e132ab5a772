import { timestamp } from '../../contract/common.ts'
import { StoreEscrowResponse } from '../../contract/devices.ts'
import type { Deps } from '../../deps.ts'
import { requireCaller } from '../../http/bearer.ts'
import { OCTET_MEDIA, operation, type App } from '../../http/route.ts'
import { ESCROW_MAX_BYTES, fetchEscrow, storeEscrow } from './escrow.service.ts'

const tags = ['Escrow']

export function escrowRoutes(app: App, deps: Deps): void {
  app.route({
    method: 'PUT',
    url: '/v1/escrow',
    ...operation({
      operationId: 'storeEscrow',
      summary: 'Store the wrapped master key (opaque bytes), displacing any earlier one',
      description: '1 byte to 64 KiB of application/octet-stream.',
      tags,
      auth: 'bearer',
      accepts: OCTET_MEDIA,
      bodyLimit: ESCROW_MAX_BYTES,
      responses: { 200: StoreEscrowResponse },
      described: { 200: 'The escrow is stored' },
      errors: ['error.account.suspended', 'error.escrow.malformed'],
    }),
    handler: async (request) => {
      const stored = await storeEscrow(deps, requireCaller(request), request.body as Buffer)
      return { stored_at: timestamp(stored.storedAt), replaced: stored.replaced }
    },
  })

  app.route({
    method: 'GET',
    url: '/v1/escrow',
    ...operation({
      operationId: 'fetchEscrow',
      summary: 'Fetch the wrapped master key exactly as stored',
      tags,
      auth: 'bearer',
      responses: {},
      described: {},
      binaryResponse: { status: 200, mediaType: 'application/octet-stream', description: 'The stored bytes, exactly' },
      errors: ['error.not_found'],
    }),
    handler: async (request, reply) => reply.type('application/octet-stream').send((await fetchEscrow(deps, requireCaller(request))).blob),
  })
}
