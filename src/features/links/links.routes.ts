// Public links (decision 0068; docs/sharing.md "Public links"): the owner's links, what the
// link's holder reads with no account, and the operator's list and disabling.
import type { Static } from 'typebox'
import { AlbumIdParams, BlobBatchRequest, FeedQuery, FeedResponse } from '../../contract/albums.ts'
import { NoContent, timestamp } from '../../contract/common.ts'
import { ModerationReason } from '../../contract/custody.ts'
import {
  AdminLinksQuery,
  CreateLinkRequest,
  LINK_ENVELOPE_MAX_BYTES,
  LINK_OWNER_COPY_MAX_BYTES,
  LinkEnvelopeRequest,
  LinkBlobParams,
  LinkParams,
  LinkProbeResponse,
  LinksQuery,
  LinksResponse,
  LinkView,
  OpenLinkRequest,
  OpenLinkResponse,
} from '../../contract/links.ts'
import type { Deps } from '../../deps.ts'
import { presentedBearer, requireCaller } from '../../http/bearer.ts'
import { JSON_MEDIA, noContent, operation, type App } from '../../http/route.ts'
import { validateBody } from '../../http/validation.ts'
import type { FastifyRequest } from 'fastify'
import type { LinkPassword } from '../../storage/port/links.ts'
import { feedEntryView } from '../albums/albums.service.ts'
import type { ProcessBatchSlots } from '../blobs/batch-slots.ts'
import { sendBlob, sendBlobBatch } from '../blobs/blobs.routes.ts'
import { linkBlobs } from '../blobs/blobs.service.ts'
import { sealedBytes } from '../lifecycle/envelope.ts'
import { auditOperatorAction } from '../moderation/moderation.service.ts'
import {
  createLink,
  disableLink,
  linkFeed,
  linkOfSession,
  listLinks,
  openLink,
  probeLink,
  replaceLinkEnvelope,
  revokeLink,
  type ListedLink,
} from './links.service.ts'

const tags = ['Links']

const optionalTime = (ms: number | null) => (ms === null ? null : timestamp(ms))

/** A link as its owner sees it; the operator's list leaves the owner's copy out (`forOwner` false). */
function linkView(link: ListedLink, forOwner = true): Static<typeof LinkView> {
  return {
    link_id: link.linkId,
    album_id: link.albumId,
    owner_id: link.ownerId,
    owner_copy: forOwner ? link.ownerCopy.toString('base64') : '',
    asset_ids: link.assetIds === null ? null : [...link.assetIds],
    downloads: link.downloads,
    password: link.password !== null,
    expires_at: optionalTime(link.expiresAt),
    max_opens: link.maxOpens,
    opens: link.opens,
    last_opened_at: optionalTime(link.lastOpenedAt),
    created_at: timestamp(link.createdAt),
    revoked_at: optionalTime(link.revokedAt),
    disabled_at: optionalTime(link.disabledAt),
    disabled_reason: link.disabledReason,
    state: link.state,
  }
}

const passwordView = (password: LinkPassword | null) =>
  password === null ? null : { salt: password.salt.toString('base64'), memory_kib: password.memoryKib, iterations: password.iterations }

const envelopeBytes = (text: string): Buffer => sealedBytes(text, 'envelope', LINK_ENVELOPE_MAX_BYTES)

/** The link's session a read presents (`Authorization: Bearer <session>`, its presence checked first: http/bearer.ts), checked against the link. */
function sessionLink(deps: Deps, request: FastifyRequest, linkId: string) {
  return linkOfSession(deps, linkId, presentedBearer(request.headers.authorization) ?? '', request.ip || null)
}

const LINK_READ_ERRORS = ['error.not_found', 'error.link.expired', 'error.link.revoked', 'error.link.disabled', 'error.rate_limited'] as const

export function linksRoutes(app: App, deps: Deps, batchSlots: ProcessBatchSlots): void {
  app.route({
    method: 'POST',
    url: '/v1/albums/:album_id/links',
    ...operation({
      operationId: 'createLink',
      summary: 'Make a public link to the caller’s album, or to some of its photos',
      description:
        'The owner only (anyone else: 404). The client makes the link id, its secret and keys; it sends the SHA-256 of the access token they derive and the envelope sealed under the link’s key, both kept byte for byte, never a key or a password. ' +
        'At most LINKS_MAX links of an account work at once (409 error.link.too_many), however many are made together; a link id taken, 409 error.link.exists; a selection naming anything but a live photo of the album, 422.',
      tags,
      auth: 'bearer',
      accepts: JSON_MEDIA,
      params: AlbumIdParams,
      body: CreateLinkRequest,
      responses: { 201: LinkView },
      described: { 201: 'The link works from now' },
      errors: ['error.account.suspended', 'error.not_found', 'error.request.invalid', 'error.link.exists', 'error.link.too_many'],
    }),
    handler: async (request, reply) => {
      const body = request.body
      const link = await createLink(deps, requireCaller(request), request.params.album_id, {
        linkId: body.link_id,
        tokenHash: body.token_hash,
        envelope: envelopeBytes(body.envelope),
        ownerCopy: sealedBytes(body.owner_copy, 'owner_copy', LINK_OWNER_COPY_MAX_BYTES),
        assetIds: body.asset_ids,
        downloads: body.downloads,
        password:
          body.password === null
            ? null
            : { salt: Buffer.from(body.password.salt, 'base64'), memoryKib: body.password.memory_kib, iterations: body.password.iterations },
        expiresInS: body.expires_in_s,
        maxOpens: body.max_opens,
      })
      return reply.code(201).send(linkView(link))
    },
  })

  app.route({
    method: 'GET',
    url: '/v1/links',
    ...operation({
      operationId: 'listLinks',
      summary: 'The caller’s links, with how often each was opened',
      description: 'Every link the caller made (of one album with `album_id`), newest first, revoked and expired ones too.',
      tags,
      auth: 'bearer',
      querystring: LinksQuery,
      responses: { 200: LinksResponse },
      described: { 200: 'The caller’s links, newest first' },
    }),
    handler: async (request) => {
      const albumId = request.query.album_id
      const links = await listLinks(deps, { ownerId: requireCaller(request).userId, ...(albumId === undefined ? {} : { albumId }), limit: 10_000 })
      return { links: links.map((link) => linkView(link)) }
    },
  })

  app.route({
    method: 'POST',
    url: '/v1/links/:link_id/revoke',
    ...operation({
      operationId: 'revokeLink',
      summary: 'Revoke one of the caller’s links, at once',
      description:
        'Its sessions end: every read through it after this answers 410 error.link.revoked, on every instance. Revoking a revoked link changes nothing. Anyone’s but the caller’s: 404.',
      tags,
      auth: 'bearer',
      params: LinkParams,
      responses: { 204: NoContent },
      described: { 204: 'The link gives nothing more' },
      errors: ['error.not_found'],
    }),
    handler: async (request, reply) => {
      await revokeLink(deps, requireCaller(request), request.params.link_id)
      return noContent(reply)
    },
  })

  app.route({
    method: 'PUT',
    url: '/v1/links/:link_id/envelope',
    ...operation({
      operationId: 'replaceLinkEnvelope',
      summary: 'Replace what the owner’s client sealed for a link (the album’s keys of a new epoch)',
      tags,
      auth: 'bearer',
      accepts: JSON_MEDIA,
      params: LinkParams,
      body: LinkEnvelopeRequest,
      responses: { 204: NoContent },
      described: { 204: 'Kept byte for byte; the next open answers it' },
      errors: ['error.account.suspended', 'error.not_found', 'error.request.invalid'],
    }),
    handler: async (request, reply) => {
      await replaceLinkEnvelope(deps, requireCaller(request), request.params.link_id, envelopeBytes(request.body.envelope))
      return noContent(reply)
    },
  })

  app.route({
    method: 'GET',
    url: '/v1/links/:link_id',
    ...operation({
      operationId: 'probeLink',
      summary: 'What opening a link takes: whether it asks a password, and how the browser stretches it',
      description:
        'No credential: the link’s page asks this first. Counted against the link’s and the address’s reads (LINK_READS_PER_LINK, LINK_READS_PER_ADDRESS per LINK_READ_WINDOW_S). A link that stopped answers 410 with why.',
      tags,
      auth: 'none',
      params: LinkParams,
      responses: { 200: LinkProbeResponse },
      described: { 200: 'The link works' },
      errors: ['error.not_found', 'error.link.expired', 'error.link.revoked', 'error.link.disabled', 'error.link.used_up', 'error.rate_limited'],
    }),
    handler: async (request) => {
      const link = await probeLink(deps, request.params.link_id, request.ip || null)
      return { link_id: link.linkId, password: passwordView(link.password) }
    },
  })

  app.route({
    method: 'POST',
    url: '/v1/links/:link_id/open',
    ...operation({
      operationId: 'openLink',
      summary: 'Open a link: a session for its feed and blobs, counted against its opens',
      description:
        'No credential but the access token the URL’s secret (and the password) derive. A wrong token: 403 error.link.denied, counted against the link’s and the address’s refused opens (LINK_OPEN_FAILURES_PER_LINK, LINK_OPEN_FAILURES_PER_ADDRESS per LINK_OPEN_FAILURE_WINDOW_S; past them 429 with Retry-After). ' +
        'A link opened max_opens times: 410 error.link.used_up. The session lasts LINK_SESSION_TTL_S, never past the link’s expiry, and ends when the link is revoked or disabled.',
      tags,
      auth: 'none',
      accepts: JSON_MEDIA,
      params: LinkParams,
      body: OpenLinkRequest,
      responses: { 201: OpenLinkResponse },
      described: { 201: 'A session of the link' },
      errors: [
        'error.not_found',
        'error.link.denied',
        'error.link.expired',
        'error.link.revoked',
        'error.link.disabled',
        'error.link.used_up',
        'error.rate_limited',
      ],
    }),
    handler: async (request, reply) => {
      const { link, session, sessionExpiresAt } = await openLink(deps, request.params.link_id, request.body.token, request.ip || null)
      return reply.code(201).send({
        session,
        session_expires_at: timestamp(sessionExpiresAt),
        album_id: link.albumId,
        envelope: link.envelope.toString('base64'),
        downloads: link.downloads,
        selection: link.selection,
        expires_at: optionalTime(link.expiresAt),
      })
    },
  })

  app.route({
    method: 'GET',
    url: '/v1/links/:link_id/feed',
    ...operation({
      operationId: 'linkFeed',
      summary: 'The linked album’s feed (of the selection’s photos only, for a selection link)',
      description: 'As GET /v1/albums/{album_id}/feed answers it, through a link’s session. Each read counts against the link’s and the address’s reads.',
      tags,
      auth: 'link',
      params: LinkParams,
      querystring: FeedQuery,
      responses: { 200: FeedResponse },
      described: { 200: 'A page of applied manifests after `after`' },
      errors: [...LINK_READ_ERRORS],
    }),
    handler: async (request) => {
      const link = await sessionLink(deps, request, request.params.link_id)
      const entries = await linkFeed(deps, link, request.query.after, request.query.limit)
      return { entries: entries.map(feedEntryView), next_after: entries.at(-1)?.syncSeq ?? request.query.after }
    },
  })

  app.route({
    method: 'GET',
    url: '/v1/links/:link_id/blobs/:hash',
    ...operation({
      operationId: 'linkBlob',
      summary: 'A blob of the linked album’s live photos (Range supported)',
      description:
        'As GET /v1/blobs/{hash} answers it, of the blobs the link lets its holder read: its album’s (its selection’s) live photos; their originals only when it allows downloads, or where the photo is shown from its original (docs/sharing.md, "View only"). Anything else: 404; a photo taken down: 451.',
      tags,
      auth: 'link',
      params: LinkBlobParams,
      responses: {},
      described: {},
      binaryResponse: { status: 200, mediaType: 'application/octet-stream', description: 'The blob bytes, exactly as uploaded' },
      errors: [...LINK_READ_ERRORS, 'error.request.range_not_satisfiable', 'error.moderation.taken_down'],
      cache: 'private-revalidate',
      reads: ['Range', 'If-None-Match'],
      redirect: 'The bytes are at Location (`BLOB_DOWNLOAD=redirect`): request them there, with the same Range if any, without Authorization',
    }),
    handler: async (request, reply) => {
      const link = await sessionLink(deps, request, request.params.link_id)
      return sendBlob(deps, request.params.hash, request, reply, linkBlobs(deps, link))
    },
  })

  app.route({
    method: 'POST',
    url: '/v1/links/:link_id/blobs/batch',
    ...operation({
      operationId: 'linkBlobBatch',
      summary: 'Many blobs of the linked album’s live photos in one request',
      description:
        'As POST /v1/blobs/batch answers it, of the blobs GET /v1/links/{link_id}/blobs/{hash} would serve. It holds a slot of the server’s BATCH_DOWNLOADS_PER_PROCESS (503 past it); the link’s reads are bounded by its rate limits.',
      tags,
      auth: 'link',
      accepts: JSON_MEDIA,
      params: LinkParams,
      body: BlobBatchRequest,
      errors: [...LINK_READ_ERRORS, 'error.batch.server_busy'],
      responses: {},
      described: {},
      binaryResponse: {
        status: 200,
        mediaType: 'application/cbor',
        description: 'Canonical CBOR, as POST /v1/blobs/batch answers: one map per requested hash, in request order.',
      },
    }),
    handler: async (request, reply) => {
      const link = await sessionLink(deps, request, request.params.link_id)
      return sendBlobBatch(deps, batchSlots, request, reply, { hashes: request.body.hashes, readable: linkBlobs(deps, link), account: null })
    },
  })

  if (deps.config.adminToken === null) return
  app.route({
    method: 'GET',
    url: '/v1/admin/links',
    ...operation({
      operationId: 'adminListLinks',
      summary: 'Public links of an account or an album (or the newest of all)',
      tags: ['Operator'],
      auth: 'admin',
      querystring: AdminLinksQuery,
      responses: { 200: LinksResponse },
      described: { 200: 'Newest first' },
    }),
    handler: async (request) => {
      const { user_id: ownerId, album_id: albumId, limit } = request.query
      const links = await listLinks(deps, { ...(ownerId === undefined ? {} : { ownerId }), ...(albumId === undefined ? {} : { albumId }), limit: limit ?? 100 })
      return { links: links.map((link) => linkView(link, false)) }
    },
  })

  app.route({
    method: 'POST',
    url: '/v1/admin/links/:link_id/disable',
    ...operation({
      operationId: 'adminDisableLink',
      summary: 'Disable a public link: every read through it answers 410 error.link.disabled, at once',
      description: 'The reason, when given, is shown to the link’s owner beside it. The action is an audit line of the log.',
      tags: ['Operator'],
      auth: 'admin',
      accepts: JSON_MEDIA,
      bodyOptional: true,
      deferredBody: ModerationReason,
      params: LinkParams,
      responses: { 200: LinkView },
      described: { 200: 'The link, disabled' },
      errors: ['error.not_found', 'error.moderation.state_conflict'],
    }),
    handler: async (request) => {
      const reason = request.body === undefined ? null : (validateBody(ModerationReason, request.body).reason ?? null)
      const link = await disableLink(deps, request.params.link_id, reason)
      auditOperatorAction(request.log, { actor: 'admin_token', action: 'link_disabled', userId: link.ownerId, assetId: null, reason })
      return linkView(link, false)
    },
  })
}
