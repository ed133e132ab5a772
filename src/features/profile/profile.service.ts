// Get and update the profile (SPEC.md "Account and profile", API.md section 5).
import type { Static } from 'typebox'
import { timestamp } from '../../contract/common.ts'
import type { ProfileResponse } from '../../contract/profile.ts'
import type { Deps } from '../../deps.ts'
import { normalizeDisplayName } from '../../domain/account.ts'
import { AppError } from '../../errors.ts'
import type { Caller } from '../context.ts'
import type { Account, AccountStore } from '../../storage/port/accounts.ts'

async function found(store: AccountStore, userId: string): Promise<Account> {
  const account = await store.findAccount(userId)
  if (account === undefined) throw new AppError('error.not_found', 'The account no longer exists')
  return account
}

/** ProfileResponse: what GET /v1/profile and the account export show. */
export function profileView(account: Account): Static<typeof ProfileResponse> {
  return {
    user_id: account.userId,
    email: account.email,
    ...(account.displayName === null ? {} : { display_name: account.displayName }),
    created_at: timestamp(account.createdAt),
  }
}

/** The account as the bearer check read it: no further query. */
export function getProfile(caller: Caller): Account {
  return caller.account
}

/** An absent key leaves the name, null clears it, a string sets it (1-100 characters after trimming). */
export async function updateProfile(deps: Deps, caller: Caller, body: { display_name?: string | null }): Promise<Account> {
  if (body.display_name === undefined) return caller.account
  const displayName = body.display_name === null ? null : normalizeDisplayName(body.display_name)
  if (body.display_name !== null && displayName === null) {
    throw new AppError('error.request.invalid', 'display_name must be 1-100 characters after trimming')
  }
  return deps.storage.transaction(async (tx) => {
    await found(tx, caller.userId)
    await tx.setDisplayName(caller.userId, displayName)
    return found(tx, caller.userId)
  })
}
