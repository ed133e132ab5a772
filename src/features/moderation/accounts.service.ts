// The operator's view of an account (issue 17, "Find accounts"): who it is, its standing, what
// it stores, whether it has a second factor (and how many recovery codes it has left), and its
// moderation record, by id or by email.
import type { Static } from 'typebox'
import { timestamp } from '../../contract/common.ts'
import type { AdminAccountResponse, SecondFactorStatus } from '../../contract/custody.ts'
import type { Deps } from '../../deps.ts'
import { normalizeEmail } from '../../domain/account.ts'
import { AppError } from '../../errors.ts'
import type { Account } from '../../storage/port/accounts.ts'
import type { AccountHoldings } from '../../storage/port/storage-usage.ts'
import { secondFactorView } from '../totp/totp.service.ts'
import { moderationRecordView, recordOfAccount, type ModerationRecord } from './moderation.service.ts'

export interface AccountOverview {
  readonly account: Account
  readonly holdings: AccountHoldings
  readonly secondFactor: Static<typeof SecondFactorStatus>
  readonly record: ModerationRecord
}

async function overviewOf(deps: Deps, account: Account): Promise<AccountOverview> {
  const [holdings, secondFactor, record] = await Promise.all([
    deps.storage.accountHoldings(account.userId),
    secondFactorView(deps.storage, account.userId),
    recordOfAccount(deps.storage, account),
  ])
  return { account, holdings, secondFactor, record }
}

/** 404 error.not_found when there is no such account. */
export async function accountOverview(deps: Deps, userId: string): Promise<AccountOverview> {
  const account = await deps.storage.findAccount(userId)
  if (account === undefined) throw new AppError('error.not_found', 'No such account')
  return overviewOf(deps, account)
}

/** The account whose email is `email` as sign-in compares emails, or none (an unusable email matches none). */
export async function findAccountsByEmail(deps: Deps, email: string): Promise<AccountOverview[]> {
  const key = normalizeEmail(email)?.emailKey
  const account = key === undefined ? undefined : await deps.storage.findAccountByEmailKey(key)
  return account === undefined ? [] : [await overviewOf(deps, account)]
}

/** AdminAccountResponse: what the operator API and the CLI show. */
export function accountOverviewView(overview: AccountOverview): Static<typeof AdminAccountResponse> {
  const { account, holdings } = overview
  return {
    user_id: account.userId,
    email: account.email,
    created_at: timestamp(account.createdAt),
    state: account.deletedAt !== null ? 'deleted' : account.suspendedAt === null ? 'active' : 'suspended',
    ...(account.deletedAt === null ? {} : { deleted_at: timestamp(account.deletedAt) }),
    usage: { bytes: holdings.storedBytes, assets: holdings.liveAssets },
    second_factor: overview.secondFactor,
    moderation: moderationRecordView(overview.record),
  }
}
