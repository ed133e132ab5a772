// What a service knows about the request it serves, without knowing HTTP.

/** The authenticated caller of a bearer operation. */
export interface Caller {
  readonly sessionId: string
  readonly userId: string
  readonly authenticatedAt: number
}

/** Recorded on the sessions a request opens. */
export interface RequestMeta {
  readonly userAgent: string | null
  readonly ipAddress: string | null
}
