// The operator API (API.md section 8) for tools an operator writes: suspend and reinstate an
// account, take down, hold and release an asset. Enabled on a server only when ADMIN_TOKEN is
// set; every action answers the affected account's moderation record.
import { problemOf, type ModerationRecord } from './client.ts'

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
    this.#fetch = options.fetch ?? fetch
  }

  /** Content writes of the account answer 403 error.account.suspended until it is reinstated. */
  suspend(userId: string, reason?: string): Promise<ModerationRecord> {
    return this.#act(`accounts/${encodeURIComponent(userId)}/suspend`, reason)
  }

  reinstate(userId: string, reason?: string): Promise<ModerationRecord> {
    return this.#act(`accounts/${encodeURIComponent(userId)}/reinstate`, reason)
  }

  /** The asset's blobs are withheld: downloads answer 451, verification says not retrievable. */
  takeDown(assetId: string, reason?: string): Promise<ModerationRecord> {
    return this.#act(`assets/${encodeURIComponent(assetId)}/take-down`, reason)
  }

  /** Every blob the asset ever referenced is kept from garbage collection until the hold is lifted. */
  legalHold(assetId: string, reason?: string): Promise<ModerationRecord> {
    return this.#act(`assets/${encodeURIComponent(assetId)}/legal-hold`, reason)
  }

  liftHold(assetId: string, reason?: string): Promise<ModerationRecord> {
    return this.#act(`assets/${encodeURIComponent(assetId)}/lift-hold`, reason)
  }

  async #act(path: string, reason: string | undefined): Promise<ModerationRecord> {
    const response = await this.#fetch(`${this.baseUrl}/v1/admin/${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.#adminToken}`, ...(reason === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(reason === undefined ? {} : { body: JSON.stringify({ reason }) }),
    })
    if (!response.ok) throw await problemOf(response)
    return (await response.json()) as ModerationRecord
  }
}
