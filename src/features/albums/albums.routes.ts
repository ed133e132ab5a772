import { timestamp } from '../../contract/common.ts'
import {
  AlbumIdParams,
  AlbumListResponse,
  FeedQuery,
  FeedResponse,
  IntentQuery,
  ProvisionAlbumRequest,
  ProvisionAlbumResponse,
  UpgradePhaseResponse,
} from '../../contract/albums.ts'
import type { Deps } from '../../deps.ts'
import { requireCaller } from '../../http/bearer.ts'
import { CBOR_MEDIA, JSON_MEDIA, operation, type App } from '../../http/route.ts'
import { albumFeed, albumView, feedEntryView, listAlbums, provisionAlbum } from './albums.service.ts'
import { abortUpgrade, commitUpgrade, readUpgrade, startUpgrade, type UpgradePhase } from './upgrade.service.ts'

const tags = ['Albums']

function phaseResponse(phase: UpgradePhase) {
  const ceremony = phase.ceremony
  return {
    album_id: phase.albumId,
    ...(ceremony === null ? {} : { intent_id: ceremony.intentId, to_protocol_version: ceremony.toVersion, expires_at: timestamp(ceremony.expiresAt) }),
    in_flight: phase.inFlight,
  }
}

export function albumsRoutes(app: App, deps: Deps): void {
  app.route({
    method: 'POST',
    url: '/v1/albums',
    ...operation({
      operationId: 'provisionAlbum',
      summary: 'Provision an album id to this account',
      description: '201 when created, 200 when this account already holds it (nothing written); another account’s id is 422.',
      tags,
      auth: 'bearer',
      accepts: JSON_MEDIA,
      body: ProvisionAlbumRequest,
      responses: { 200: ProvisionAlbumResponse, 201: ProvisionAlbumResponse },
      described: { 200: 'This account already holds the album id; nothing was written', 201: 'The album id is now this account’s' },
      errors: ['error.account.suspended', 'error.album.id_unavailable'],
    }),
    handler: async (request, reply) => {
      const { album, created } = await provisionAlbum(deps, requireCaller(request), request.body.album_id)
      return reply.code(created ? 201 : 200).send({ album_id: album.albumId, protocol_version: album.protocolVersion, created })
    },
  })

  app.route({
    method: 'GET',
    url: '/v1/albums',
    ...operation({
      operationId: 'listAlbums',
      summary: 'The account’s albums, oldest first',
      tags,
      auth: 'bearer',
      responses: { 200: AlbumListResponse },
      described: { 200: 'The account’s albums, oldest first' },
    }),
    handler: async (request) => ({ albums: (await listAlbums(deps, requireCaller(request))).map(albumView) }),
  })

  app.route({
    method: 'GET',
    url: '/v1/albums/:album_id/feed',
    ...operation({
      operationId: 'albumFeed',
      summary: 'Applied lifecycle manifests after a feed position, in order',
      tags,
      auth: 'bearer',
      params: AlbumIdParams,
      querystring: FeedQuery,
      responses: { 200: FeedResponse },
      described: { 200: 'A page of applied manifests after `after`; ask again from `next_after` until a page is empty' },
      errors: ['error.not_found'],
    }),
    handler: async (request) => {
      const entries = await albumFeed(deps, requireCaller(request), request.params.album_id, request.query.after, request.query.limit)
      return { entries: entries.map(feedEntryView), next_after: entries.at(-1)?.syncSeq ?? request.query.after }
    },
  })

  app.route({
    method: 'GET',
    url: '/v1/albums/:album_id/upgrade',
    ...operation({
      operationId: 'readUpgradePhase',
      summary: 'The album’s upgrade phase and its uploads in flight',
      tags,
      auth: 'bearer',
      params: AlbumIdParams,
      responses: { 200: UpgradePhaseResponse },
      described: { 200: 'The album’s upgrade phase' },
      errors: ['error.not_found'],
    }),
    handler: async (request) => phaseResponse(await readUpgrade(deps, requireCaller(request), request.params.album_id)),
  })

  app.route({
    method: 'POST',
    url: '/v1/albums/:album_id/upgrade',
    ...operation({
      operationId: 'startUpgrade',
      summary: 'Start the upgrade ceremony with a CBOR intent (intent_id, to_protocol_version)',
      description:
        'Writes and new upload sessions are refused until the ceremony is committed, aborted or its window passes. Repeating the live intent_id is idempotent.',
      tags,
      auth: 'bearer',
      accepts: CBOR_MEDIA,
      params: AlbumIdParams,
      responses: { 200: UpgradePhaseResponse },
      described: { 200: 'The ceremony is live (or already was, with this intent_id)' },
      errors: ['error.account.suspended', 'error.not_found', 'error.upgrade.in_flight'],
    }),
    handler: async (request) => phaseResponse(await startUpgrade(deps, requireCaller(request), request.params.album_id, request.body as Buffer)),
  })

  app.route({
    method: 'DELETE',
    url: '/v1/albums/:album_id/upgrade',
    ...operation({
      operationId: 'abortUpgrade',
      summary: 'Abort the live upgrade ceremony',
      tags,
      auth: 'bearer',
      params: AlbumIdParams,
      querystring: IntentQuery,
      responses: { 200: UpgradePhaseResponse },
      described: { 200: 'The ceremony is aborted; the album is back in normal operation' },
      errors: ['error.account.suspended', 'error.not_found', 'error.upgrade.in_flight'],
    }),
    handler: async (request) => phaseResponse(await abortUpgrade(deps, requireCaller(request), request.params.album_id, request.query.intent_id)),
  })

  app.route({
    method: 'POST',
    url: '/v1/albums/:album_id/upgrade/commit',
    ...operation({
      operationId: 'commitUpgrade',
      summary: 'Commit the ceremony with its CBOR tombstone; the album is pinned to the new protocol',
      tags,
      auth: 'bearer',
      accepts: CBOR_MEDIA,
      params: AlbumIdParams,
      querystring: IntentQuery,
      responses: { 200: UpgradePhaseResponse },
      described: { 200: 'The ceremony is committed; the album is pinned to the new protocol version' },
      errors: ['error.account.suspended', 'error.not_found', 'error.upgrade.in_flight', 'error.upgrade.not_quiescent'],
    }),
    handler: async (request) =>
      phaseResponse(await commitUpgrade(deps, requireCaller(request), request.params.album_id, request.query.intent_id, request.body as Buffer)),
  })
}
