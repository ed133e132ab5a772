import { ChannelParams, ChannelResponse, DrainQuery, DrainResponse, EnrollmentCodeResponse, RedeemRequest, RelayRequest } from '../../contract/devices.ts'
import { NoContent, timestamp } from '../../contract/common.ts'
import type { Deps } from '../../deps.ts'
import { requireCaller } from '../../http/bearer.ts'
import { JSON_MEDIA, noContent, operation, type App } from '../../http/route.ts'
import { closeChannel, drainMailbox, issueEnrollmentCode, redeemEnrollmentCode, relayPayload } from './enrollment.service.ts'

const tags = ['Device enrollment']

export function enrollmentRoutes(app: App, deps: Deps): void {
  app.route({
    method: 'POST',
    url: '/v1/auth/devices/enroll/code',
    ...operation({
      operationId: 'issueEnrollmentCode',
      summary: 'Issue a one-time code that lets a new device open a channel to this one',
      description: 'Needs a recent credential: the session’s authenticated_at within FRESHNESS_WINDOW_S (reauthenticate first otherwise).',
      tags,
      auth: 'bearer',
      responses: { 200: EnrollmentCodeResponse },
      described: { 200: 'A one-time enrollment code, in both spellings' },
      errors: ['error.auth.reauthentication_required'],
    }),
    handler: async (request) => {
      const issued = await issueEnrollmentCode(deps, requireCaller(request))
      return { code: issued.code, text_fallback: issued.textFallback, expires_at: timestamp(issued.expiresAt) }
    },
  })

  app.route({
    method: 'POST',
    url: '/v1/auth/devices/enroll/redeem',
    ...operation({
      operationId: 'redeemEnrollmentCode',
      summary: 'Redeem a code (either spelling) and open the channel',
      description: 'Both spellings are burned together. Too many refused codes from one address answer 429 until the window passes.',
      tags,
      auth: 'none',
      accepts: JSON_MEDIA,
      body: RedeemRequest,
      responses: { 200: ChannelResponse },
      described: { 200: 'The code is burned and the channel open' },
      errors: ['error.enroll.code_refused', 'error.rate_limited'],
    }),
    handler: async (request) => {
      const channel = await redeemEnrollmentCode(deps, request.body.code, request.ip)
      return { channel_id: channel.channelId, expires_at: timestamp(channel.expiresAt) }
    },
  })

  app.route({
    method: 'POST',
    url: '/v1/auth/devices/enroll/channel/:channel_id',
    ...operation({
      operationId: 'relayPayload',
      summary: 'Post a payload into one mailbox of the channel',
      description: 'Gated by the channel id alone. A payload is at most 64 KiB; a mailbox holds at most 64.',
      tags,
      auth: 'none',
      accepts: JSON_MEDIA,
      params: ChannelParams,
      body: RelayRequest,
      responses: { 204: NoContent },
      described: { 204: 'The payload waits in the mailbox' },
      errors: ['error.enroll.channel_not_found', 'error.enroll.mailbox_full'],
    }),
    handler: async (request, reply) => {
      await relayPayload(deps, request.params.channel_id, request.body.direction, request.body.payload)
      return noContent(reply)
    },
  })

  app.route({
    method: 'GET',
    url: '/v1/auth/devices/enroll/channel/:channel_id',
    ...operation({
      operationId: 'drainMailbox',
      summary: 'Take every payload waiting in one mailbox, in arrival order',
      description: 'Destructive: each payload is handed to exactly one drain.',
      tags,
      auth: 'none',
      params: ChannelParams,
      querystring: DrainQuery,
      responses: { 200: DrainResponse },
      described: { 200: 'The payloads that were waiting (possibly none), now removed' },
      errors: ['error.enroll.channel_not_found'],
    }),
    handler: async (request) => ({ payloads: await drainMailbox(deps, request.params.channel_id, request.query.direction) }),
  })

  app.route({
    method: 'DELETE',
    url: '/v1/auth/devices/enroll/channel/:channel_id',
    ...operation({
      operationId: 'closeChannel',
      summary: 'Close the channel (its initiator only); both mailboxes are dropped',
      description: 'Another account’s channel answers 404 exactly like an unknown one.',
      tags,
      auth: 'bearer',
      params: ChannelParams,
      responses: { 204: NoContent },
      described: { 204: 'The channel and its mailboxes are gone' },
      errors: ['error.enroll.channel_not_found'],
    }),
    handler: async (request, reply) => {
      await closeChannel(deps, requireCaller(request), request.params.channel_id)
      return noContent(reply)
    },
  })
}
