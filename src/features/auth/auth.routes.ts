import {
  ChangePasswordRequest,
  LoginRequest,
  ReauthenticateRequest,
  ReauthenticateResponse,
  RefreshRequest,
  RegisterRequest,
  SecondFactorChallenge,
  TokenResponse,
  VerifyLoginRequest,
} from '../../contract/auth.ts'
import { NoContent, timestamp } from '../../contract/common.ts'
import type { Deps } from '../../deps.ts'
import { requireCaller } from '../../http/bearer.ts'
import { JSON_MEDIA, noContent, operation, requestMeta, type App } from '../../http/route.ts'
import { advisoryOf, changePassword, login, logout, reauthenticate, refresh, register, verifyLogin, type IssuedTokens } from './auth.service.ts'

function tokenResponse(tokens: IssuedTokens) {
  return { access_token: tokens.accessToken, refresh_token: tokens.refreshToken, token_type: 'Bearer' as const, expires_by: tokens.expiresBy }
}

const tags = ['Accounts and sessions']

export function authRoutes(app: App, deps: Deps): void {
  app.route({
    method: 'POST',
    url: '/v1/auth/register',
    ...operation({
      operationId: 'register',
      summary: 'Create an account and open its first session',
      description: 'Answers 200 (not 201). The account cannot upload until it publishes a device directory. Not rate-limited.',
      tags,
      auth: 'none',
      accepts: JSON_MEDIA,
      body: RegisterRequest,
      responses: { 200: TokenResponse },
      described: { 200: 'The account exists and its first session is open: the session’s tokens' },
      errors: ['error.auth.account_exists'],
    }),
    handler: async (request) => tokenResponse(await register(deps, request.body, requestMeta(request))),
  })

  app.route({
    method: 'POST',
    url: '/v1/auth/login',
    ...operation({
      operationId: 'login',
      summary: 'Sign in with email and password',
      description: '200 opens a session; 202 when the account has a confirmed second factor (finish with verifyLogin).',
      tags,
      auth: 'none',
      accepts: JSON_MEDIA,
      body: LoginRequest,
      responses: { 200: TokenResponse, 202: SecondFactorChallenge },
      described: {
        200: 'Signed in: the new session’s tokens',
        202: 'The password is right and the account has a second factor: finish with verifyLogin before the challenge expires',
      },
      errors: ['error.auth.invalid_credentials', 'error.auth.account_locked'],
    }),
    handler: async (request, reply) => {
      const outcome = await login(deps, request.body, advisoryOf(request.body), requestMeta(request))
      if (outcome.kind === 'session') return reply.code(200).send(tokenResponse(outcome.tokens))
      return reply.code(202).send({ mfa_token: outcome.mfaToken, expires_by: outcome.expiresBy })
    },
  })

  app.route({
    method: 'POST',
    url: '/v1/auth/login/verify',
    ...operation({
      operationId: 'verifyLogin',
      summary: 'Finish a second-factor sign-in with the TOTP code',
      tags,
      auth: 'none',
      accepts: JSON_MEDIA,
      body: VerifyLoginRequest,
      responses: { 200: TokenResponse },
      described: { 200: 'Signed in: the new session’s tokens' },
      errors: ['error.auth.challenge_expired', 'error.auth.invalid_code', 'error.rate_limited'],
    }),
    handler: async (request) => tokenResponse(await verifyLogin(deps, request.body, advisoryOf(request.body), requestMeta(request))),
  })

  app.route({
    method: 'POST',
    url: '/v1/auth/refresh',
    ...operation({
      operationId: 'refresh',
      summary: 'Exchange a refresh token for a new session (rotation)',
      description: `A refresh token mints once. Repeating it within the grace window, while its successor is unused, answers the same successor pair; any other reuse closes the lineage.`,
      tags,
      auth: 'none',
      accepts: JSON_MEDIA,
      body: RefreshRequest,
      responses: { 200: TokenResponse },
      described: { 200: 'The successor session’s tokens (the same pair again for a repeat within the grace window)' },
      errors: ['error.auth.session_expired'],
    }),
    handler: async (request) => tokenResponse(await refresh(deps, request.body.refresh_token)),
  })

  app.route({
    method: 'POST',
    url: '/v1/auth/logout',
    ...operation({
      operationId: 'logout',
      summary: 'End the session of the presented access token',
      description: 'Idempotent: any presented bearer token, live or not, gets 204.',
      tags,
      auth: 'bearer-presented',
      responses: { 204: NoContent },
      described: { 204: 'The session of the presented token is closed (or was already)' },
    }),
    handler: async (request, reply) => {
      await logout(deps, request.bearerToken ?? '')
      return noContent(reply)
    },
  })

  app.route({
    method: 'POST',
    url: '/v1/auth/reauthenticate',
    ...operation({
      operationId: 'reauthenticate',
      summary: 'Prove the password again; only authenticated_at changes',
      tags,
      auth: 'bearer',
      accepts: JSON_MEDIA,
      body: ReauthenticateRequest,
      responses: { 200: ReauthenticateResponse },
      described: { 200: 'The session’s authenticated_at is now' },
      errors: ['error.auth.invalid_credentials', 'error.auth.account_locked', 'error.not_found'],
    }),
    handler: async (request) => ({
      authenticated_at: timestamp(await reauthenticate(deps, requireCaller(request), request.body.password, requestMeta(request))),
    }),
  })

  app.route({
    method: 'POST',
    url: '/v1/auth/password',
    ...operation({
      operationId: 'changePassword',
      summary: 'Change the password; every other session ends, the caller keeps its tokens',
      tags,
      auth: 'bearer',
      accepts: JSON_MEDIA,
      body: ChangePasswordRequest,
      responses: { 204: NoContent },
      described: { 204: 'The password is changed; every other session is closed' },
      errors: ['error.auth.invalid_credentials', 'error.auth.account_locked', 'error.not_found'],
    }),
    handler: async (request, reply) => {
      await changePassword(deps, requireCaller(request), request.body, requestMeta(request), (error) =>
        request.log.error({ err: error }, 'password changed but ending the other sessions failed'),
      )
      return noContent(reply)
    },
  })
}
