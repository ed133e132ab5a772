// A real TCP proxy between a test server and its PostgreSQL, on a port of its own, that the
// test breaks on command: cut every connection, reset or hold new ones, or cut everything the
// moment the server sends a given statement. The server sees what a restart, a failover or a
// broken network does to it, with nothing of its own replaced.
import net from 'node:net'

/**
 * What happens to a new connection: forwarded to the database; reset at once (the database
 * refuses connections); or accepted and never answered (a network that drops packets).
 */
export type ProxyMode = 'forward' | 'refuse' | 'hold'

export interface TcpProxy {
  /** `url` (a postgres:// URL) with the proxy's address in place of the database's. */
  route(url: string): string
  setMode(mode: ProxyMode): void
  /**
   * Destroys every connection through the proxy, both sides; answers how many of them had been
   * established: the database had said it was ready for a query (ReadyForQuery). Held ones
   * never reached it, and one still starting fails its connect rather than being lost.
   */
  cut(): number
  /**
   * Cuts every connection when the server next sends `text` (a statement of its SQL): the
   * bytes carrying it never reach the database. Resolves with what cut() answered.
   */
  cutWhenSent(text: string): Promise<number>
  close(): Promise<void>
}

interface Link {
  readonly client: net.Socket
  readonly upstream: net.Socket | null
  /** The database has sent a ReadyForQuery on it: the connection is established. */
  ready: boolean
}

/** PostgreSQL's ReadyForQuery message ('Z', length 5) but its status byte. */
const READY_FOR_QUERY = Buffer.from([0x5a, 0, 0, 0, 5])

export async function startTcpProxy(database: { host: string; port: number }): Promise<TcpProxy> {
  const links = new Set<Link>()
  let mode: ProxyMode = 'forward'
  let trigger: { text: Buffer; fire: (cut: number) => void } | null = null

  const cut = () => {
    const count = [...links].filter((link) => link.ready).length
    for (const link of links) {
      link.client.destroy()
      link.upstream?.destroy()
    }
    links.clear()
    return count
  }

  const server = net.createServer((client) => {
    // A cut connection errors on both sides; the proxy has nothing to say about it.
    client.on('error', () => {})
    if (mode === 'refuse') {
      client.resetAndDestroy()
      return
    }
    const upstream = mode === 'hold' ? null : net.connect(database)
    const link: Link = { client, upstream, ready: false }
    links.add(link)
    client.on('close', () => {
      links.delete(link)
      upstream?.destroy()
    })
    if (upstream === null) {
      // Read and drop what the server sends, so that its giving up (end, close) is seen.
      client.resume()
      return
    }
    upstream.on('error', () => client.destroy())
    upstream.on('close', () => client.destroy())
    upstream.on('data', (chunk: Buffer) => {
      link.ready ||= chunk.includes(READY_FOR_QUERY)
      client.write(chunk)
    })
    // The end of what was sent before, so that a statement split across two reads still matches.
    let tail = Buffer.alloc(0)
    client.on('data', (chunk: Buffer) => {
      if (trigger !== null) {
        const seen = Buffer.concat([tail, chunk])
        if (seen.includes(trigger.text)) {
          const { fire } = trigger
          trigger = null
          fire(cut())
          return
        }
        tail = seen.subarray(Math.max(0, seen.length - trigger.text.length + 1))
      }
      upstream.write(chunk)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo

  return {
    route(url) {
      const routed = new URL(url)
      routed.hostname = '127.0.0.1'
      routed.port = String(port)
      return routed.toString()
    },
    setMode(next) {
      mode = next
    },
    cut,
    cutWhenSent(text) {
      return new Promise((resolve) => {
        trigger = { text: Buffer.from(text, 'utf8'), fire: resolve }
      })
    },
    async close() {
      cut()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}
