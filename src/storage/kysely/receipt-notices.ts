// Notices of receipt requests between instances (decision 0073), on PostgreSQL: a request's
// insert and its taking each send a NOTIFY in their transaction (custody.ts), delivered when it
// commits; each instance that needs them LISTENs on one connection of its own, outside the pool
// (a pooled connection is not held between queries). Channels are the database's, not the
// schema's: an instance also hears other schemas' notices, which cost it a look that finds nothing.
import pg from 'pg'
import type { ReceiptNotices, ReceiptWatch } from '../port/custody.ts'

/** Sent with the chain's number when a request is made for it. */
export const REQUESTED_CHANNEL = 'coffer_receipt_requested'
/** Sent with the request's id when a transaction that appends its receipts takes it. */
export const TAKEN_CHANNEL = 'coffer_receipt_taken'
/** How long to wait before listening again after the connection was lost. */
const RECONNECT_MS = 1_000

export function watchPostgresReceiptRequests(
  connection: { readonly url: string; readonly connectTimeoutMs: number },
  log: { warn(details: object, message: string): void },
  notices: ReceiptNotices,
): ReceiptWatch {
  let current: pg.Client | null = null
  let closed = false
  let retry: NodeJS.Timeout | null = null
  const lost = (client: pg.Client, error?: Error) => {
    if (current === client) {
      current = null
      notices.listening(false)
      // As the pool's connections are reported (postgres.ts): the driver's words only. Meanwhile the instance polls.
      log.warn({ cause: error?.message ?? 'Connection ended' }, 'database connection lost')
    }
    client.removeAllListeners('notification')
    client.end().catch(() => {})
    if (!closed && retry === null)
      retry = setTimeout(() => {
        retry = null
        void listen()
      }, RECONNECT_MS).unref()
  }
  const listen = async () => {
    const client = new pg.Client({ connectionString: connection.url, connectionTimeoutMillis: connection.connectTimeoutMs })
    client.on('notification', ({ channel, payload }) => {
      if (channel === REQUESTED_CHANNEL) notices.requested(Number(payload))
      else if (channel === TAKEN_CHANNEL && payload !== undefined) notices.taken(payload)
    })
    client.on('error', (error) => lost(client, error))
    client.on('end', () => lost(client))
    try {
      await client.connect()
      await client.query(`listen ${REQUESTED_CHANNEL}; listen ${TAKEN_CHANNEL}`)
    } catch (error) {
      lost(client, error instanceof Error ? error : new Error(String(error)))
      return
    }
    if (closed) return void client.end().catch(() => {})
    current = client
    notices.listening(true)
  }
  void listen()
  return {
    async close() {
      closed = true
      if (retry !== null) clearTimeout(retry)
      const client = current
      current = null
      await client?.end()
    },
  }
}
