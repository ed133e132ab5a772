// Notices of receipt requests between instances (decision 0073), on PostgreSQL: a request's
// insert and its taking each send a NOTIFY in their transaction (custody.ts), delivered when it
// commits; each instance LISTENs on one connection of its own, outside the pool (a pooled
// connection is not held between queries). Channels are the database's, not the schema's: each
// notice names its schema, and an instance hears only its own schema's.
import pg from 'pg'
import type { CustodyBundle, ReceiptNotices, ReceiptRequest, ReceiptWatch } from '../port/custody.ts'

/**
 * Sent with the request as JSON (its schema, id, chain, asset, upload, requested_at, and its
 * bundle's blobs and envelope hash unless they would make the notice too long: null then) when a
 * request is made: the holder needs no read to carry it.
 */
export const REQUESTED_CHANNEL = 'coffer_receipt_requested'
/** Sent with the schema and the request's id, space-separated, when a transaction that appends its receipts takes it. */
export const TAKEN_CHANNEL = 'coffer_receipt_taken'
/** The longest bundle (as JSON) a notice carries: PostgreSQL refuses a payload of 8,000 bytes or more. */
export const NOTICE_BUNDLE_MAX = 6_000

interface RequestedPayload {
  readonly schema: string
  readonly request_id: string
  readonly chain: number
  readonly asset_id: string
  readonly upload_id: string
  /** The bundle column as it is stored, or null when too long for a notice. */
  readonly bundle: string | null
  readonly requested_at: number
}

function requestOf(payload: RequestedPayload): ReceiptRequest | null {
  if (payload.bundle === null) return null
  const { blobs, envelopeHash } = JSON.parse(payload.bundle) as Pick<CustodyBundle, 'blobs' | 'envelopeHash'>
  return {
    requestId: payload.request_id,
    chain: payload.chain,
    bundle: { assetId: payload.asset_id, uploadId: payload.upload_id, blobs, envelopeHash },
    requestedAt: Number(payload.requested_at),
  }
}
/** How long to wait before listening again after the connection was lost. */
const RECONNECT_MS = 1_000

export function watchPostgresReceiptRequests(
  connection: { readonly url: string; readonly searchPath?: string; readonly connectTimeoutMs: number },
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
    const client = new pg.Client({
      connectionString: connection.url,
      connectionTimeoutMillis: connection.connectTimeoutMs,
      ...(connection.searchPath ? { options: `-c search_path=${connection.searchPath}` } : {}),
    })
    /** The schema this instance works in: notices of others are not its own. */
    let schema: string | null = null
    client.on('notification', ({ channel, payload }) => {
      if (payload === undefined || schema === null) return
      if (channel === REQUESTED_CHANNEL) {
        const requested = JSON.parse(payload) as RequestedPayload
        if (requested.schema === schema) notices.requested(requested.chain, requestOf(requested))
      } else if (channel === TAKEN_CHANNEL) {
        const [from, requestId] = payload.split(' ')
        if (from === schema && requestId !== undefined) notices.taken(requestId)
      }
    })
    client.on('error', (error) => lost(client, error))
    client.on('end', () => lost(client))
    try {
      await client.connect()
      schema = (await client.query<{ schema: string }>('select current_schema() as schema')).rows[0]?.schema ?? null
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
