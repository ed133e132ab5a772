// retryingFetch: a request with bytes in memory is tried again on a network failure; a streamed
// body is sent once, and with redirect "error" so that Node's fetch does not tee it (and keep
// every chunk of the upload) to be able to follow a redirect.
import { describe, expect, it } from 'vitest'
import { retryingFetch } from './retry.ts'

function recordingFetch(failures: number): { fetch: typeof fetch; inits: (RequestInit | undefined)[] } {
  const inits: (RequestInit | undefined)[] = []
  return {
    inits,
    fetch: async (_input, init) => {
      inits.push(init)
      if (inits.length <= failures) throw new TypeError('fetch failed')
      return new Response(null, { status: 204 })
    },
  }
}

describe('retryingFetch', () => {
  it('tries bytes in memory again, keeping the caller\'s redirect mode', async () => {
    const base = recordingFetch(1)
    const response = await retryingFetch(base.fetch, { baseDelayMs: 1 })('http://coffer.test/x', { method: 'PUT', body: new Uint8Array([1, 2]) })
    expect(response.status).toBe(204)
    expect(base.inits).toHaveLength(2)
    expect(base.inits.map((init) => init?.redirect)).toEqual([undefined, undefined])
  })

  it('sends a streamed body once, with redirect "error"', async () => {
    async function* chunks(): AsyncGenerator<Uint8Array> {
      yield new Uint8Array([1])
    }
    const init = { method: 'PUT', body: chunks(), duplex: 'half' } as unknown as RequestInit
    const failing = recordingFetch(1)
    await expect(retryingFetch(failing.fetch, { baseDelayMs: 1 })('http://coffer.test/x', init)).rejects.toThrow('fetch failed')
    expect(failing.inits).toHaveLength(1)
    const base = recordingFetch(0)
    await retryingFetch(base.fetch)('http://coffer.test/x', init)
    expect(base.inits[0]).toMatchObject({ method: 'PUT', duplex: 'half', redirect: 'error' })
  })
})
