// retryingFetch against a network that fails as real ones do (the base fetch stands in for the
// network, not for a component of ours).
import { describe, expect, it } from 'vitest'
import { retryingFetch } from './retry.ts'

type Answer = Response | Error

function network(answers: Answer[]): { fetch: typeof fetch; calls: number; inits: (RequestInit | undefined)[] } {
  const state = {
    calls: 0,
    inits: [] as (RequestInit | undefined)[],
    fetch: (async (_input: unknown, init?: RequestInit) => {
      state.inits.push(init)
      const answer = answers[Math.min(state.calls++, answers.length - 1)]!
      if (answer instanceof Error) throw answer
      return answer
    }) as typeof fetch,
  }
  return state
}

const fast = { baseDelayMs: 1, maxDelayMs: 5 }

describe('retryingFetch', () => {
  it('retries a request that could not be sent, and 502/503/504, then answers what came', async () => {
    const net = network([
      new TypeError('fetch failed'),
      new Response('', { status: 503 }),
      new Response('', { status: 502 }),
      new Response('ok', { status: 200 }),
    ])
    const retries: string[] = []
    const response = await retryingFetch(net.fetch, { ...fast, onRetry: ({ reason }) => retries.push(reason) })('http://x/')
    expect(await response.text()).toBe('ok')
    expect(net.calls).toBe(4)
    expect(retries).toEqual(['fetch failed', 'HTTP 503', 'HTTP 502'])
  })

  it('gives up after its attempts: the last failure is the answer', async () => {
    const refused = network([new TypeError('fetch failed')])
    await expect(retryingFetch(refused.fetch, { ...fast, attempts: 3 })('http://x/')).rejects.toThrow('fetch failed')
    expect(refused.calls).toBe(3)
    const unavailable = network([new Response('', { status: 503 })])
    expect((await retryingFetch(unavailable.fetch, { ...fast, attempts: 2 })('http://x/')).status).toBe(503)
    expect(unavailable.calls).toBe(2)
  })

  it('does not retry what the server decided (4xx, 500) nor what is not a network failure', async () => {
    for (const status of [400, 401, 409, 429, 500]) {
      const net = network([new Response('', { status }), new Response('', { status: 200 })])
      expect((await retryingFetch(net.fetch, fast)('http://x/')).status).toBe(status)
      expect(net.calls).toBe(1)
    }
    const aborted = network([new DOMException('stopped', 'AbortError'), new Response('', { status: 200 })])
    await expect(retryingFetch(aborted.fetch, fast)('http://x/')).rejects.toThrow('stopped')
    expect(aborted.calls).toBe(1)
  })

  it('sends a streamed body once: it cannot be sent again', async () => {
    const net = network([new TypeError('fetch failed'), new Response('', { status: 200 })])
    const body = new ReadableStream({
      start: (controller) => {
        controller.enqueue(new Uint8Array([1]))
        controller.close()
      },
    })
    await expect(retryingFetch(net.fetch, fast)('http://x/', { method: 'PUT', body })).rejects.toThrow('fetch failed')
    expect(net.calls).toBe(1)
    const bytes = network([new TypeError('fetch failed'), new Response('', { status: 200 })])
    expect((await retryingFetch(bytes.fetch, fast)('http://x/', { method: 'PUT', body: new Uint8Array([1]) })).status).toBe(200)
    expect(bytes.calls).toBe(2)
  })

  it('sends a streamed body with redirect "error" (so fetch does not keep every chunk to follow a redirect); bytes keep the caller\'s mode', async () => {
    async function* chunks(): AsyncGenerator<Uint8Array> {
      yield new Uint8Array([1])
    }
    const streamed = network([new Response(null, { status: 204 })])
    await retryingFetch(streamed.fetch, fast)('http://x/', { method: 'PUT', body: chunks(), duplex: 'half' } as unknown as RequestInit)
    expect(streamed.inits[0]).toMatchObject({ method: 'PUT', duplex: 'half', redirect: 'error' })
    const bytes = network([new Response(null, { status: 204 })])
    await retryingFetch(bytes.fetch, fast)('http://x/', { method: 'PUT', body: new Uint8Array([1]) })
    expect(bytes.inits[0]?.redirect).toBeUndefined()
  })

  it('waits what Retry-After says (capped), and stops waiting when aborted', async () => {
    const net = network([new Response('', { status: 503, headers: { 'retry-after': '3' } }), new Response('', { status: 200 })])
    const delays: number[] = []
    await retryingFetch(net.fetch, { baseDelayMs: 1, maxDelayMs: 20, onRetry: ({ delayMs }) => delays.push(delayMs) })('http://x/')
    expect(delays).toEqual([20])
    const stop = new AbortController()
    const slow = network([new TypeError('fetch failed')])
    const pending = retryingFetch(slow.fetch, { baseDelayMs: 60_000, maxDelayMs: 60_000, signal: stop.signal })('http://x/')
    stop.abort(new Error('interrupted'))
    await expect(pending).rejects.toThrow('interrupted')
  })
})
