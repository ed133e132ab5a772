import { AlbumIdParams, OpRequest, OpResponse } from '../../contract/albums.ts'
import type { Deps } from '../../deps.ts'
import { requireCaller } from '../../http/bearer.ts'
import { JSON_MEDIA, operation, type App } from '../../http/route.ts'
import { validateBody } from '../../http/validation.ts'
import { applyLifecycleManifest } from './lifecycle.service.ts'

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
      errors: ['error.account.suspended', 'error.not_found', 'error.protocol.out_of_range', 'error.upgrade.in_flight', 'error.op.bundle_incomplete', 'error.op.stale_revival', 'error.storage.full', 'error.storage.failing'],
    }),
    handler: async (request) => {
      const outcome = await applyLifecycleManifest(deps, requireCaller(request), request.params.album_id, () => validateBody(OpRequest, request.body))
      return { asset_id: outcome.assetId, sync_seq: outcome.syncSeq, action: outcome.action, replayed: outcome.replayed }
    },
  })
}
