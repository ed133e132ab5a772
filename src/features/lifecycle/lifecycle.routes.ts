import { AlbumIdParams, AssetDeleteRequest, AssetPathParams, OpRequest, OpResponse, TrashedAsset, TrashPage, TrashQuery } from '../../contract/albums.ts'
import { NoContent, timestamp } from '../../contract/common.ts'
import type { Deps } from '../../deps.ts'
import { requireCaller } from '../../http/bearer.ts'
import { JSON_MEDIA, noContent, operation, type App } from '../../http/route.ts'
import { validateBody } from '../../http/validation.ts'
import type { TrashRow } from '../../storage/port/trash.ts'
import { deleteAsset } from './asset-delete.service.ts'
import { applyLifecycleManifest } from './lifecycle.service.ts'
import { restoreAsset, trashAsset, trashPage } from './trash.service.ts'
import type { OpOutcome } from './write.ts'

function trashedView(row: TrashRow) {
  return { trash_seq: row.trashSeq, album_id: row.albumId, file_id: row.fileId, trashed_at: timestamp(row.trashedAt), purge_at: timestamp(row.purgeAt) }
}

/** The delete route's errors, which putting an asset in the trash shares (it runs the same checks). */
const deletionErrors = [
  'error.account.suspended',
  'error.not_found',
  'error.member.read_only',
  'error.member.not_creator',
  'error.protocol.out_of_range',
  'error.upgrade.in_flight',
  'error.op.stale_revival',
  'error.asset.retained',
] as const

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
        'Checks, in order: the caller may write the album: its owner or a contributor (404 for anyone else, 403 error.member.read_only for a viewer); the shape (422); a replay of an applied manifest answers its first response with replayed true; the protocol range (426); no upgrade window (409); the bundle (422); the chain (409 with chain_head); under the album lock, a contributor replaces only the photos it added (403 error.member.not_creator). Nothing is written unless all pass.',
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
        'error.member.read_only',
        'error.member.not_creator',
        'error.protocol.out_of_range',
        'error.upgrade.in_flight',
        'error.op.bundle_incomplete',
        'error.op.stale_revival',
        'error.asset.trashed',
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
        'Checks, in order: the caller may write the album: its owner or a contributor (404 for anyone else, 403 error.member.read_only for a viewer); the shape (422: action `delete`, `file_id` the path’s, `metadata_blob_hash` null, `original_blob_hash` given); a replay of an applied manifest answers its first response with replayed true; the protocol range (426); no upgrade window (409); the chain (409 with chain_head: `prior_provenance_hash` the asset’s head, `ciphertext_hash` and `original_blob_hash` its current original, the asset not deleted already); the retention floor (409 with retained_until). Nothing is written unless all pass; then the feed gains the delete, the asset is no longer live and its blobs are garbage unless a legal hold keeps them. No upload session, no receipt.',
      tags: ['Albums'],
      auth: 'bearer',
      accepts: JSON_MEDIA,
      params: AssetPathParams,
      deferredBody: AssetDeleteRequest,
      responses: { 200: OpResponse },
      described: { 200: 'The asset is deleted (or was already, by this manifest: `replayed`), with the feed position of its delete' },
      errors: [...deletionErrors],
    }),
    handler: async (request) =>
      opResponse(
        await deleteAsset(deps, requireCaller(request), request.params.album_id, request.params.file_id, () => validateBody(AssetDeleteRequest, request.body)),
      ),
  })

  app.route({
    method: 'POST',
    url: '/v1/albums/:album_id/assets/:file_id/trash',
    ...operation({
      operationId: 'trashAsset',
      summary: 'Put an asset in the trash: its signed delete is held until purge_at (TRASH_RETENTION_S), then applied',
      description:
        'The body and every check are the delete operation’s, in its order. Instead of applying the delete, the server holds it: the asset stays live (its blobs download, receipts and verification unchanged) until `purge_at`, when the maintenance pass applies it as the delete operation would. The same manifest again answers the same entry; another delete of an asset in the trash is 409 error.asset.trashed. A manifest applied already (the asset deleted by it) is 409 error.op.stale_revival.',
      tags: ['Albums'],
      auth: 'bearer',
      accepts: JSON_MEDIA,
      params: AssetPathParams,
      deferredBody: AssetDeleteRequest,
      responses: { 200: TrashedAsset },
      described: { 200: 'The asset is in the trash (or was already, by this manifest), with when it went in and when its delete will be applied' },
      errors: [...deletionErrors, 'error.asset.trashed'],
    }),
    handler: async (request) =>
      trashedView(
        await trashAsset(deps, requireCaller(request), request.params.album_id, request.params.file_id, () => validateBody(AssetDeleteRequest, request.body)),
      ),
  })

  app.route({
    method: 'DELETE',
    url: '/v1/albums/:album_id/assets/:file_id/trash',
    ...operation({
      operationId: 'restoreAsset',
      summary: 'Restore an asset from the trash: its held delete is dropped',
      tags: ['Albums'],
      auth: 'bearer',
      params: AssetPathParams,
      responses: { 204: NoContent },
      described: { 204: 'The asset is out of the trash, live as before' },
      errors: ['error.account.suspended', 'error.not_found', 'error.member.read_only', 'error.member.not_creator'],
    }),
    handler: async (request, reply) => {
      await restoreAsset(deps, requireCaller(request), request.params.album_id, request.params.file_id)
      return noContent(reply)
    },
  })

  app.route({
    method: 'GET',
    url: '/v1/trash',
    ...operation({
      operationId: 'listTrash',
      summary: 'The caller’s assets in the trash, across albums, with the signed delete each waits on',
      description:
        'Pages as the receipts do: `after` (a trash_seq, 0 for the first page) and `limit` (1-1000, 200 by default). A page shorter than `limit` is the last; otherwise ask again with `after` set to `next_after`. Clients check each manifest’s signature with the account’s identity key.',
      tags: ['Albums'],
      auth: 'bearer',
      querystring: TrashQuery,
      responses: { 200: TrashPage },
      described: { 200: 'A page of the caller’s trash, in the order the assets went in' },
    }),
    handler: async (request) => {
      const { after, limit } = request.query
      const rows = await trashPage(deps, requireCaller(request), after, limit)
      return {
        entries: rows.map((row) => ({ ...trashedView(row), manifest_cbor: row.manifestCbor.toString('base64') })),
        next_after: rows.at(-1)?.trashSeq ?? after,
      }
    },
  })
}
