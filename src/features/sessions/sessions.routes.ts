import { NoContent, timestamp } from '../../contract/common.ts'
import { RevokeAllRequest, RevokeAllResponse, RevokeChallengeResponse } from '../../contract/devices.ts'
import { DevicesResponse, SecurityEventsResponse, SessionIdParams } from '../../contract/sessions.ts'
import type { Deps } from '../../deps.ts'
import { requireCaller } from '../../http/bearer.ts'
import { JSON_MEDIA, noContent, operation, type App } from '../../http/route.ts'
import {
  cohortView,
  issueRevokeChallenge,
  listDevices,
  listSecurityEvents,
  revokeAllSessions,
  revokeSession,
  securityEventView,
  sessionView,
} from './sessions.service.ts'

const tags = ['Accounts and sessions']

export function sessionsRoutes(app: App, deps: Deps): void {
  app.route({
    method: 'GET',
    url: '/v1/auth/sessions',
    ...operation({
      operationId: 'listSessions',
      summary: 'Every live session of the account and every cohort ever seen',
      tags,
      auth: 'bearer',
      responses: { 200: DevicesResponse },
      described: { 200: 'The account’s live sessions and the cohorts seen' },
    }),
    handler: async (request) => {
      const caller = requireCaller(request)
      const devices = await listDevices(deps, caller)
      return { sessions: devices.sessions.map((session) => sessionView(session, caller)), cohorts: devices.cohorts.map(cohortView) }
    },
  })

  app.route({
    method: 'GET',
    url: '/v1/auth/security-events',
    ...operation({
      operationId: 'listSecurityEvents',
      summary: 'Attacks on the account: sign-in locked by wrong passwords, codes refused after too many wrong ones',
      description:
        'Kept for SECURITY_EVENT_RETENTION_S. An event names the request that set it off; sign in from a known place and change the password when one is not yours.',
      tags,
      auth: 'bearer',
      responses: { 200: SecurityEventsResponse },
      described: { 200: 'The security events kept for the account, newest first' },
    }),
    handler: async (request) => ({ events: (await listSecurityEvents(deps, requireCaller(request))).map(securityEventView) }),
  })

  app.route({
    method: 'DELETE',
    url: '/v1/auth/sessions/:session_id',
    ...operation({
      operationId: 'revokeSession',
      summary: 'End one of the account’s sessions (the current one included)',
      description: 'A session of another account answers 404 exactly as an unknown id.',
      tags,
      auth: 'bearer',
      params: SessionIdParams,
      responses: { 204: NoContent },
      described: { 204: 'The session is closed' },
      errors: ['error.not_found'],
    }),
    handler: async (request, reply) => {
      await revokeSession(deps, requireCaller(request), request.params.session_id)
      return noContent(reply)
    },
  })

  app.route({
    method: 'POST',
    url: '/v1/auth/sessions/revoke-all/challenge',
    ...operation({
      operationId: 'revokeAllChallenge',
      summary: 'Get a single-use challenge to sign for revoke-all',
      tags,
      auth: 'bearer',
      responses: { 200: RevokeChallengeResponse },
      described: { 200: 'A fresh single-use challenge to sign with the identity key' },
    }),
    handler: async (request) => {
      const issued = await issueRevokeChallenge(deps, requireCaller(request))
      return { challenge: issued.challenge, expires_at: timestamp(issued.expiresAt) }
    },
  })

  app.route({
    method: 'POST',
    url: '/v1/auth/sessions/revoke-all',
    ...operation({
      operationId: 'revokeAllSessions',
      summary: 'End every session of the account, proved with the identity key (no bearer)',
      description:
        'The challenge is burned by this call whatever its outcome. `revoked` counts the sessions actually removed, the one that asked for the challenge included.',
      tags,
      auth: 'none',
      accepts: JSON_MEDIA,
      body: RevokeAllRequest,
      responses: { 200: RevokeAllResponse },
      described: { 200: 'Every session of the account is closed' },
      errors: ['error.auth.proof_required'],
    }),
    handler: async (request) => ({ revoked: await revokeAllSessions(deps, request.body.challenge, request.body.proof) }),
  })
}
