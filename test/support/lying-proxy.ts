// A lying server for the clients' tests: a real HTTP proxy in front of a test server that passes
// every request through untouched, except that an album's feed (GET /v1/albums/{id}/feed) can
// be rewritten on the way back by the test (entries left out, moved, served again or changed).
// A client pointed at it (coffer-photos `login <proxy url>`, the web app opened from it) sees a
// server that tells it a different history than the one it stores. One proxy per device lets a
// test show two devices two different histories (a fork).
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Feed } from '../../src/sdk/client.ts'

export type FeedEntry = Feed['entries'][number]

/** Rewrites one page of an album's feed as the server answered it (`after`: the page's query). */
export type FeedRewrite = (albumId: string, entries: FeedEntry[], after: number) => FeedEntry[]

export interface LyingProxy {
  /** Its base URL: give it to the client instead of the server's. */
  readonly url: string
  /** What to do to each feed page from now on; null: pass it through. */
  rewrite: FeedRewrite | null
  /** Feed pages answered so far (rewritten or not). */
  readonly feedPages: number
  close(): Promise<void>
}

const FEED = /^\/v1\/albums\/([0-9a-f-]{36})\/feed(?:\?|$)/

export async function startLyingProxy(target: string): Promise<LyingProxy> {
  const upstream = new URL(target)
  let feedPages = 0
  const proxy: { rewrite: FeedRewrite | null } = { rewrite: null }
  const server = http.createServer((request, response) => {
    const feed = request.method === 'GET' ? FEED.exec(request.url ?? '') : null
    const forwarded = http.request(
      { host: upstream.hostname, port: upstream.port, method: request.method, path: request.url, headers: { ...request.headers, host: upstream.host } },
      (answer) => {
        const rewrite = proxy.rewrite
        if (feed === null || answer.statusCode !== 200) {
          response.writeHead(answer.statusCode ?? 502, answer.headers)
          answer.pipe(response)
          return
        }
        const chunks: Buffer[] = []
        answer.on('data', (chunk: Buffer) => chunks.push(chunk))
        answer.on('end', () => {
          feedPages++
          let body = Buffer.concat(chunks)
          if (rewrite !== null) {
            const page = JSON.parse(body.toString('utf8')) as Feed
            const after = Number(new URL(request.url ?? '', 'http://x').searchParams.get('after') ?? '0')
            const entries = rewrite(feed[1]!, page.entries, after)
            body = Buffer.from(JSON.stringify({ entries, next_after: entries.at(-1)?.sync_seq ?? after }))
          }
          const headers = { ...answer.headers, 'content-length': String(body.length) }
          delete headers['content-encoding']
          delete headers['transfer-encoding']
          response.writeHead(200, headers)
          response.end(body)
        })
      },
    )
    forwarded.on('error', () => response.destroy())
    request.pipe(forwarded)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    get rewrite() {
      return proxy.rewrite
    },
    set rewrite(rewrite: FeedRewrite | null) {
      proxy.rewrite = rewrite
    },
    get feedPages() {
      return feedPages
    },
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
