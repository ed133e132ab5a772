import { AlbumIdParams, AssetDeleteRequest, AssetPathParams, OpRequest, OpResponse } from '../../contract/albums.ts'
import type { Deps } from '../../deps.ts'
import { requireCaller } from '../../http/bearer.ts'
import { JSON_MEDIA, operation, type App } from '../../http/route.ts'
import { validateBody } from '../../http/validation.ts'
import { deleteAsset } from './asset-delete.service.ts'
import { applyLifecycleManifest } from './lifecycle.service.ts'
import type { OpOutcome } from './write.ts'

function opResponse(outcome: OpOutcome) {
  return { asset_id: outcome.assetId, sync_seq: outcome.syncSeq, action: outcome.action, replayed: outcome.replayed }
}

export function lifecycleRoutes(app: App, deps: Deps): void {
  app.route({
    method: 'POST',
    url: '/v1/albums/:album_id/ops',
    ...operation({
      operationId: 'applyLifecycleManifest',
      summary: 'Apply a signed lifecycle manifest (create or replace) to an asset of the album',
      description:
        'Checks, in order: the album is the caller’s (404); the shape (422); a replay of an applied manifest answers its first response with replayed true; the protocol range (426); no upgrade window (409); the bundle (422); the chain (409 with chain_head). Nothing is written unless all pass.',
      tags: ['Albums'],
      auth: 'bearer',
      accepts: JSON_MEDIA,
      params: AlbumIdParams,
      deferredBody: OpRequest,
      responses: { 200: OpResponse },
      described: { 200: 'The manifest is applied (or was already: `replayed`), with its feed position' },
      errors: [
        'error.account.suspended',
        'error.not_found',
        'error.protocol.out_of_range',
        'error.upgrade.in_flight',
        'error.op.bundle_incomplete',
        'error.op.stale_revival',
        'error.storage.full',
        'error.storage.failing',
      ],
    }),
    handler: async (request) =>
      opResponse(await applyLifecycleManifest(deps, requireCaller(request), request.params.album_id, () => validateBody(OpRequest, request.body))),
  })

  app.route({
    method: 'POST',
    url: '/v1/albums/:album_id/assets/:file_id/delete',
    ...operation({
      operationId: 'deleteAsset',
      summary: 'Delete an asset of the album with a signed delete manifest',
      description:
        'Checks, in order: the album is the caller’s (404); the shape (422: action `delete`, `file_id` the path’s, `metadata_blob_hash` null, `original_blob_hash` given); a replay of an applied manifest answers its first response with replayed true; the protocol range (426); no upgrade window (409); the chain (409 with chain_head: `prior_provenance_hash` the asset’s head, `ciphertext_hash` and `original_blob_hash` its current original, the asset not deleted already); the retention floor (409 with retained_until). Nothing is written unless all pass; then the feed gains the delete, the asset is no longer live and its blobs are garbage unless a legal hold keeps them. No upload session, no receipt.',
      tags: ['Albums'],
      auth: 'bearer',
      accepts: JSON_MEDIA,
      params: AssetPathParams,
      deferredBody: AssetDeleteRequest,
      responses: { 200: OpResponse },
      described: { 200: 'The asset is deleted (or was already, by this manifest: `replayed`), with the feed position of its delete' },
      errors: [
        'error.account.suspended',
        'error.not_found',
        'error.protocol.out_of_range',
        'error.upgrade.in_flight',
        'error.op.stale_revival',
        'error.asset.retained',
      ],
    }),
    handler: async (request) =>
      opResponse(
        await deleteAsset(deps, requireCaller(request), request.params.album_id, request.params.file_id, () => validateBody(AssetDeleteRequest, request.body)),
      ),
  })
}
