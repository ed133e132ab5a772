import {
  AssetIdParams,
  AssetReceiptsQuery,
  AssetReceiptsResponse,
  AttestationKeysDocument,
  StorageVerifyRequest,
  StorageVerifyResponse,
} from '../../contract/custody.ts'
import { timestamp } from '../../contract/common.ts'
import type { Deps } from '../../deps.ts'
import { requireCaller } from '../../http/bearer.ts'
import { JSON_MEDIA, operation, type App } from '../../http/route.ts'
import { attestationKeysDocument } from './attestation.ts'
import { assetReceipts, receiptView } from './receipts.ts'
import { verifyStorage } from './verification.service.ts'

const tags = ['Custody']

export function custodyRoutes(app: App, deps: Deps): void {
  app.route({
    method: 'POST',
    url: '/v1/storage/verify',
    ...operation({
      operationId: 'verifyStorage',
      summary: 'Does the server durably hold these blobs? (before the client stops holding them)',
      description:
        'Verdicts in request order, blobs in declaration order. Each asset is judged against the blobs of the account that added it: the caller’s own assets, and those of albums the caller owns or is an active member of (docs/sharing.md); any other asset is unknown. With `deep`, bytes are re-read and re-hashed within the caller’s budget (past it: rate_limited). Writes nothing but the budget.',
      tags,
      auth: 'bearer',
      accepts: JSON_MEDIA,
      body: StorageVerifyRequest,
      responses: { 200: StorageVerifyResponse },
      described: { 200: 'A verdict for each asset, in request order' },
    }),
    handler: async (request) => ({
      verdicts: (await verifyStorage(deps, requireCaller(request), request.body)).map((verdict) => ({
        asset_id: verdict.assetId,
        durable: verdict.durable,
        blobs: [...verdict.blobs],
        checked_at: timestamp(verdict.checkedAt),
      })),
    }),
  })

  app.route({
    method: 'GET',
    url: '/v1/assets/:asset_id/receipts',
    ...operation({
      operationId: 'assetReceipts',
      summary: 'Every signed custody receipt of an asset, replaced bundles included, a page at a time',
      description:
        'Pages as the album feed does: `after` (a receipt_seq, 0 for the first page) and `limit` (1-1000, 200 by default). ' +
        'A page shorter than `limit` is the last; otherwise ask again with `after` set to `next_after`.',
      tags,
      auth: 'bearer',
      params: AssetIdParams,
      querystring: AssetReceiptsQuery,
      responses: { 200: AssetReceiptsResponse },
      described: { 200: 'A page of the asset’s receipts, oldest first' },
      errors: ['error.not_found'],
    }),
    handler: async (request) => {
      const { after, limit } = request.query
      const receipts = await assetReceipts(deps, requireCaller(request), request.params.asset_id, { after, limit })
      return { asset_id: request.params.asset_id, receipts: receipts.map(receiptView), next_after: receipts.at(-1)?.receiptSeq ?? after }
    },
  })

  app.route({
    method: 'GET',
    url: '/.well-known/service/attestation-keys',
    ...operation({
      operationId: 'attestationKeys',
      summary: 'The keys that sign custody receipts, active and retired',
      tags,
      auth: 'none',
      responses: { 200: AttestationKeysDocument },
      described: { 200: 'The service’s attestation keys' },
    }),
    handler: async () => attestationKeysDocument(deps),
  })
}
