// What a service knows about the request it serves, without knowing HTTP.
import type { Account } from '../storage/port/accounts.ts'

/** The authenticated caller of a bearer operation. */
export interface Caller {
  readonly sessionId: string
  readonly userId: string
  readonly authenticatedAt: number
  /** The account as the bearer check read it, at the start of this request. */
  readonly account: Account
}

/** Recorded on the sessions a request opens. */
export interface RequestMeta {
  readonly userAgent: string | null
  readonly ipAddress: string | null
}
