// A fetch that retries what a flaky network or a restarting server breaks, for CofferClient's
// `fetch` option: a request that could not be sent (connection refused or reset, DNS) or that
// got 502, 503 or 504 is sent again after a growing, jittered pause (Retry-After when the server
// gives one), up to `attempts` times. A streamed body cannot be sent twice, so such a request
// is tried once; the caller (the sync engine) retries the whole file instead. It is also sent
// with `redirect: "error"`: otherwise Node's fetch (undici 7) clones the request to be able to
// follow a redirect, teeing its body, and the unread branch keeps every chunk sent, the whole
// file (a redirect could not resend a streamed body anyway).

/** A failure worth trying again for: the network (a TypeError from fetch), or the server (5xx, 429), anywhere in the cause chain. */
export function transientFailure(error: unknown): boolean {
  for (let at: unknown = error, depth = 0; at instanceof Error && depth < 5; at = at.cause, depth++) {
    const status = (at as { status?: unknown }).status
    if (typeof status === 'number') return status >= 500 || status === 429
    if (at instanceof TypeError) return true
  }
  return false
}

export interface RetryOptions {
  /** Tries in all, the first included; 5 unless given. */
  readonly attempts?: number
  /** The first pause; each next one doubles, up to `maxDelayMs`. */
  readonly baseDelayMs?: number
  readonly maxDelayMs?: number
  /** Told before each pause (e.g. to show "server unreachable, retrying in 2 s"). */
  readonly onRetry?: (info: { readonly attempt: number; readonly delayMs: number; readonly reason: string }) => void
  readonly signal?: AbortSignal
}

const RETRY_STATUSES = new Set([502, 503, 504])

function replayable(init: RequestInit | undefined): boolean {
  const body = init?.body
  return (
    body === undefined ||
    body === null ||
    typeof body === 'string' ||
    body instanceof Uint8Array ||
    body instanceof ArrayBuffer ||
    body instanceof URLSearchParams ||
    body instanceof Blob
  )
}

function retryAfterMs(response: Response): number | null {
  const value = response.headers.get('retry-after')
  return value !== null && /^\d+$/.test(value) ? Number(value) * 1000 : null
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', stop)
      resolve()
    }, ms)
    const stop = (): void => {
      clearTimeout(timer)
      reject(signal!.reason)
    }
    signal?.addEventListener('abort', stop, { once: true })
  })
}

export function retryingFetch(base: typeof fetch = fetch, options: RetryOptions = {}): typeof fetch {
  const attempts = options.attempts ?? 5
  const baseDelayMs = options.baseDelayMs ?? 500
  const maxDelayMs = options.maxDelayMs ?? 10_000
  return async (input, givenInit) => {
    const once = !replayable(givenInit)
    const init = once ? { ...givenInit, redirect: 'error' as const } : givenInit
    for (let attempt = 1; ; attempt++) {
      const last = once || attempt >= attempts
      const backoff = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2)
      let reason: string
      let delayMs = backoff
      try {
        const response = await base(input, init)
        if (last || !RETRY_STATUSES.has(response.status)) return response
        reason = `HTTP ${response.status}`
        delayMs = Math.min(maxDelayMs, retryAfterMs(response) ?? backoff)
        await response.body?.cancel()
      } catch (error) {
        if (last || !(error instanceof TypeError)) throw error
        reason = error.message
      }
      options.onRetry?.({ attempt, delayMs, reason })
      await pause(delayMs, options.signal)
    }
  }
}
