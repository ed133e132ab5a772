// The operator API (API.md section 8) for tools an operator writes: find an account (by id or
// email), suspend and reinstate it, reset its second factor, take down, restore, hold and release an asset. Enabled on a server
// only when ADMIN_TOKEN is set; every action answers the affected account's moderation record.
import type { Static } from 'typebox'
import type { AdminAccountResponse } from '../contract/custody.ts'
import { problemOf, type LinkList, type LinkView, type ModerationRecord } from './client.ts'

/** An account as the operator sees it: standing, usage, second factor and moderation record. */
export type AdminAccount = Static<typeof AdminAccountResponse>

export interface CofferAdminOptions {
  readonly baseUrl: string
  /** The server's ADMIN_TOKEN. */
  readonly adminToken: string
  readonly fetch?: typeof fetch
}

export class CofferAdmin {
  readonly baseUrl: string
  readonly #adminToken: string
  readonly #fetch: typeof fetch

  constructor(options: CofferAdminOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '')
    this.#adminToken = options.adminToken
    // Bound: a browser's fetch called as a method of this object throws "Illegal invocation".
    this.#fetch = options.fetch ?? fetch.bind(globalThis)
  }

  /** The account with this email (compared as sign-in compares it: trimmed, case-insensitive), or none. */
  async findAccounts(email: string): Promise<AdminAccount[]> {
    const { accounts } = await this.#get<{ accounts: AdminAccount[] }>(`accounts?email=${encodeURIComponent(email)}`)
    return accounts
  }

  /** Throws a CofferProblem 404 error.not_found when there is no such account. */
  account(userId: string): Promise<AdminAccount> {
    return this.#get(`accounts/${encodeURIComponent(userId)}`)
  }

  /** Content writes of the account answer 403 error.account.suspended until it is reinstated. */
  suspend(userId: string, reason?: string): Promise<ModerationRecord> {
    return this.#act(`accounts/${encodeURIComponent(userId)}/suspend`, reason)
  }

  reinstate(userId: string, reason?: string): Promise<ModerationRecord> {
    return this.#act(`accounts/${encodeURIComponent(userId)}/reinstate`, reason)
  }

  /** Removes the account's second factor (the owner lost the authenticator) and ends every session of it. */
  resetSecondFactor(userId: string, reason?: string): Promise<ModerationRecord> {
    return this.#act(`accounts/${encodeURIComponent(userId)}/reset-second-factor`, reason)
  }

  /**
   * Deletes the account and everything it holds, as its owner can (what a legal hold or a
   * retention floor keeps stays until it lapses); the account's record afterwards. Idempotent.
   */
  deleteAccount(userId: string, reason?: string): Promise<ModerationRecord> {
    return this.#act(`accounts/${encodeURIComponent(userId)}/delete`, reason)
  }

  /** The asset's blobs are withheld: downloads answer 451, verification says not retrievable. */
  takeDown(assetId: string, reason?: string): Promise<ModerationRecord> {
    return this.#act(`assets/${encodeURIComponent(assetId)}/take-down`, reason)
  }

  /** Undoes a takedown: the asset's blobs are served again. Recorded as its own event (`restored`). */
  restore(assetId: string, reason?: string): Promise<ModerationRecord> {
    return this.#act(`assets/${encodeURIComponent(assetId)}/restore`, reason)
  }

  /** Every blob the asset ever referenced is kept from garbage collection until the hold is lifted. */
  legalHold(assetId: string, reason?: string): Promise<ModerationRecord> {
    return this.#act(`assets/${encodeURIComponent(assetId)}/legal-hold`, reason)
  }

  liftHold(assetId: string, reason?: string): Promise<ModerationRecord> {
    return this.#act(`assets/${encodeURIComponent(assetId)}/lift-hold`, reason)
  }

  /** Public links of an account or an album (or the newest of all), newest first: their owner's copy left out. */
  listLinks(query: { readonly userId?: string; readonly albumId?: string; readonly limit?: number } = {}): Promise<LinkList> {
    const params = new URLSearchParams()
    if (query.userId !== undefined) params.set('user_id', query.userId)
    if (query.albumId !== undefined) params.set('album_id', query.albumId)
    if (query.limit !== undefined) params.set('limit', String(query.limit))
    return this.#get(`links?${params}`)
  }

  /** Every read through the link answers 410 error.link.disabled from now; the reason is shown to its owner. */
  disableLink(linkId: string, reason?: string): Promise<LinkView> {
    return this.#act(`links/${encodeURIComponent(linkId)}/disable`, reason)
  }

  #act<T = ModerationRecord>(path: string, reason: string | undefined): Promise<T> {
    return this.#call(path, {
      method: 'POST',
      headers: reason === undefined ? {} : { 'content-type': 'application/json' },
      ...(reason === undefined ? {} : { body: JSON.stringify({ reason }) }),
    })
  }

  #get<T>(path: string): Promise<T> {
    return this.#call(path, { method: 'GET', headers: {} })
  }

  async #call<T>(path: string, init: RequestInit & { headers: Record<string, string> }): Promise<T> {
    const response = await this.#fetch(`${this.baseUrl}/v1/admin/${path}`, {
      ...init,
      headers: { authorization: `Bearer ${this.#adminToken}`, ...init.headers },
    })
    if (!response.ok) throw await problemOf(response)
    return (await response.json()) as T
  }
}
