// The one error type services throw. Only http/ turns it into a response.
import type { ErrorCode } from './contract/errors.ts'

export class AppError extends Error {
  readonly code: ErrorCode
  /** Extra problem members, e.g. `submitted`/`stored` on a directory conflict. */
  readonly extensions: Readonly<Record<string, unknown>>
  /** Seconds for the Retry-After header (423, 429). */
  readonly retryAfterS: number | undefined

  constructor(code: ErrorCode, detail?: string, options: { extensions?: Record<string, unknown>; retryAfterS?: number } = {}) {
    super(detail ?? code)
    this.name = 'AppError'
    this.code = code
    this.extensions = options.extensions ?? {}
    this.retryAfterS = options.retryAfterS
  }
}
