import {
  AdminAccountResponse,
  AdminAccountsQuery,
  AdminAccountsResponse,
  AdminUserParams,
  AssetIdParams,
  ModerationReason,
  ModerationRecordResponse,
} from '../../contract/custody.ts'
import type { Deps } from '../../deps.ts'
import type { ModerationAction } from '../../domain/moderation.ts'
import { requireCaller } from '../../http/bearer.ts'
import { JSON_MEDIA, operation, type App } from '../../http/route.ts'
import { validateBody } from '../../http/validation.ts'
import { deleteAccountAsOperator } from '../account/deletion.service.ts'
import { accountOverview, accountOverviewView, findAccountsByEmail } from './accounts.service.ts'
import { moderate, moderationRecordView, ownModerationRecord } from './moderation.service.ts'

/** The optional `{"reason": string}` body. */
function reasonOf(body: unknown): string | null {
  return body === undefined ? null : (validateBody(ModerationReason, body).reason ?? null)
}

const accountActions: ReadonlyArray<[path: string, action: ModerationAction, summary: string]> = [
  ['suspend', 'suspend', 'Suspend an account: it can sign in and read, content writes answer 403'],
  ['reinstate', 'reinstate', 'Reinstate a suspended account'],
  ['reset-second-factor', 'reset_second_factor', 'Reset an account’s second factor (a lost authenticator): its TOTP is removed and every session ends'],
]

const assetActions: ReadonlyArray<[path: string, action: ModerationAction, summary: string]> = [
  ['take-down', 'take_down', 'Take an asset down: its blobs are withheld (451) and not durable'],
  ['restore', 'restore', 'Restore a taken-down asset: its blobs are served again'],
  ['legal-hold', 'legal_hold', 'Put an asset under legal hold: none of its blobs is garbage-collected'],
  ['lift-hold', 'lift_hold', 'Lift an asset’s legal hold'],
]

export function moderationRoutes(app: App, deps: Deps): void {
  app.route({
    method: 'GET',
    url: '/v1/moderation/record',
    ...operation({
      operationId: 'moderationRecord',
      summary: 'The caller’s own moderation record',
      tags: ['Moderation'],
      auth: 'bearer',
      responses: { 200: ModerationRecordResponse },
      described: { 200: 'The caller’s standing and moderation events' },
    }),
    handler: async (request) => moderationRecordView(await ownModerationRecord(deps, requireCaller(request))),
  })

  // The operator API exists only when ADMIN_TOKEN is set (otherwise every path is a 404).
  if (deps.config.adminToken === null) return
  const operator = { tags: ['Operator'], auth: 'admin' as const }
  app.route({
    method: 'GET',
    url: '/v1/admin/accounts',
    ...operation({
      operationId: 'admin_find_accounts',
      summary: 'Find the account with an email: its standing, usage, second factor and moderation record',
      ...operator,
      querystring: AdminAccountsQuery,
      responses: { 200: AdminAccountsResponse },
      described: { 200: 'The account with this email (a list of one), or an empty list' },
    }),
    handler: async (request) => ({ accounts: (await findAccountsByEmail(deps, request.query.email)).map(accountOverviewView) }),
  })
  app.route({
    method: 'GET',
    url: '/v1/admin/accounts/:user_id',
    ...operation({
      operationId: 'admin_account',
      summary: 'An account: its standing, usage, second factor and moderation record',
      ...operator,
      params: AdminUserParams,
      responses: { 200: AdminAccountResponse },
      described: { 200: 'The account' },
      errors: ['error.not_found'],
    }),
    handler: async (request) => accountOverviewView(await accountOverview(deps, request.params.user_id)),
  })
  const common = {
    ...operator,
    accepts: JSON_MEDIA,
    bodyOptional: true,
    deferredBody: ModerationReason,
    responses: { 200: ModerationRecordResponse },
    described: { 200: 'The action is recorded: the moderation record of the account it concerns' },
    errors: ['error.not_found', 'error.moderation.state_conflict'] as const,
  }
  for (const [path, action, summary] of accountActions) {
    app.route({
      method: 'POST',
      url: `/v1/admin/accounts/:user_id/${path}`,
      ...operation({ ...common, operationId: `admin_${action}`, summary, params: AdminUserParams }),
      handler: async (request) =>
        moderationRecordView(await moderate(deps, action, { userId: request.params.user_id }, reasonOf(request.body), 'admin_token', request.log)),
    })
  }
  app.route({
    method: 'POST',
    url: '/v1/admin/accounts/:user_id/delete',
    ...operation({
      ...common,
      operationId: 'admin_delete_account',
      summary: 'Delete an account and everything it holds, as its owner can; idempotent',
      description:
        'The account becomes a tombstone (state deleted, email and credentials scrubbed) with its moderation record; every session ends; its albums, assets and upload sessions are removed and its blobs become garbage, except what a legal hold or a retention floor keeps. Deleting a deleted account answers its record again and records nothing.',
      params: AdminUserParams,
      errors: ['error.not_found'],
    }),
    handler: async (request) =>
      moderationRecordView(await deleteAccountAsOperator(deps, request.params.user_id, reasonOf(request.body), 'admin_token', request.log)),
  })
  for (const [path, action, summary] of assetActions) {
    app.route({
      method: 'POST',
      url: `/v1/admin/assets/:asset_id/${path}`,
      ...operation({ ...common, operationId: `admin_${action}`, summary, params: AssetIdParams }),
      handler: async (request) =>
        moderationRecordView(await moderate(deps, action, { assetId: request.params.asset_id }, reasonOf(request.body), 'admin_token', request.log)),
    })
  }
}
