// The child's side of child.ts: announce readiness, answer the parent's requests, and shut
// down cleanly on SIGTERM or when the parent goes away.

export type ToChild = { readonly kind: 'request'; readonly id: number; readonly body: unknown }

export type FromChild =
  | { readonly kind: 'ready'; readonly body: unknown }
  | { readonly kind: 'reply'; readonly id: number; readonly body?: unknown; readonly error?: string }

function send(message: FromChild): void {
  if (process.send === undefined) throw new Error('a bench child must be started by bench/lib/child.ts (no IPC channel)')
  process.send(message)
}

export interface ChildHandlers {
  /** Answers a request of the parent. */
  readonly onRequest?: (body: unknown) => Promise<unknown>
  /** Releases what the child holds (server, database) before it exits. */
  readonly onStop?: () => Promise<void>
}

export function serveParent(ready: unknown, handlers: ChildHandlers = {}): void {
  let stopping = false
  const stop = async () => {
    if (stopping) return
    stopping = true
    try {
      await handlers.onStop?.()
    } catch (error) {
      process.stderr.write(`unclean stop: ${String(error)}\n`)
    }
    process.exit(0)
  }
  process.once('SIGTERM', () => void stop())
  process.once('disconnect', () => void stop())
  process.on('message', (message: ToChild) => {
    if (message.kind !== 'request') return
    const onRequest = handlers.onRequest ?? (async () => {
      throw new Error('this child takes no requests')
    })
    onRequest(message.body).then(
      (body) => send({ kind: 'reply', id: message.id, body }),
      (error: unknown) => send({ kind: 'reply', id: message.id, error: error instanceof Error ? error.message : String(error) }),
    )
  })
  send({ kind: 'ready', body: ready })
}

/** Exits with the failure on stderr (the parent shows it) if start-up throws. */
export async function startOrDie(start: () => Promise<void>): Promise<void> {
  try {
    await start()
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exit(1)
  }
}
