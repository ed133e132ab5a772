// The SDK's client in the browser, on this origin. Two adaptations of fetch:
// - A body given as an async iterable (the SDK streams files that way in Node) is gathered
//   into a Blob first: browsers stream request bodies only over HTTP/2, and Coffer is often
//   plain HTTP/1.1 on a loopback address or behind a proxy.
// - Token refresh is shared by every tab: a refresh token is single-use, so two tabs refreshing
//   the same pair would present it twice and the server would end the session as stolen. A
//   refresh runs under a Web Lock; inside it, if another tab already rotated the pair, its
//   new pair is answered without asking the server.
import { CofferClient, type Tokens } from '#sdk/client.ts'
import { readSession, saveSession, type SavedSession } from './store.ts'

const REFRESH_PATH = '/v1/auth/refresh'

function isAsyncIterable(body: unknown): body is AsyncIterable<Uint8Array> {
  return typeof body === 'object' && body !== null && Symbol.asyncIterator in body && !(body instanceof ReadableStream)
}

async function gathered(body: AsyncIterable<Uint8Array>): Promise<Blob> {
  const parts: BlobPart[] = []
  for await (const chunk of body) parts.push(chunk as Uint8Array<ArrayBuffer>)
  return new Blob(parts)
}

/** The refresh token a refresh request presents. */
function presentedRefreshToken(init: RequestInit | undefined): string | null {
  try {
    return (JSON.parse(String(init?.body)) as { refresh_token?: string }).refresh_token ?? null
  } catch {
    return null
  }
}

export const browserFetch: typeof fetch = async (input, init) => {
  let request = init
  if (isAsyncIterable(init?.body)) {
    const { duplex: _duplex, ...rest } = init as RequestInit & { duplex?: string }
    request = { ...rest, body: await gathered(init.body) }
  }
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url
  if (new URL(url, location.href).pathname !== REFRESH_PATH) return fetch(input, request)
  return navigator.locks.request('coffer-token-refresh', async () => {
    const saved = await readSession()
    const presented = presentedRefreshToken(request)
    if (saved !== undefined && presented !== null && saved.tokens.refresh_token !== presented) {
      return new Response(JSON.stringify(saved.tokens), { status: 200, headers: { 'content-type': 'application/json' } })
    }
    const response = await fetch(input, request)
    if (response.ok && saved !== undefined) {
      const tokens = (await response.clone().json()) as Tokens
      await saveSession({ ...saved, tokens })
    }
    return response
  })
}

/** A client on this origin with no session (register, sign in). */
export function anonymousClient(): CofferClient {
  return new CofferClient({ baseUrl: location.origin, fetch: browserFetch })
}

/**
 * A client for a saved session; every new token pair is saved, and `onSignedOut` is told when
 * the server no longer takes the session (a refresh refused: revoked, or expired).
 */
export function sessionClient(session: SavedSession, onSignedOut: () => void): CofferClient {
  return new CofferClient({
    baseUrl: location.origin,
    fetch: browserFetch,
    tokens: session.tokens,
    onTokens: (tokens) => {
      if (tokens === null) onSignedOut()
      else void saveSession({ ...session, tokens })
    },
  })
}
