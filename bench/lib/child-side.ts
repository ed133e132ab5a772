// The child's side of child.ts: announce readiness, answer the parent's requests, and shut
// down cleanly on SIGTERM or when the parent goes away; and the timed loops of the children
// that measure by themselves (the raw ceilings under bench/servers/).
import { percentile } from './stats.ts'

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
    const onRequest =
      handlers.onRequest ??
      (async () => {
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

/** What the parent asks a looping child for (measure.ts childLoop): run for `seconds` with `concurrency` loops. */
export interface LoopRun {
  readonly seconds: number
  readonly concurrency: number
}

export interface LoopRunResult {
  /** Operations completed. */
  readonly operations: number
  /** What they completed, in the child's unit (1 per operation unless it says otherwise: bytes, ...). */
  readonly units: number
  /** From the start to the end of the last operation. */
  readonly seconds: number
  readonly p50Ms: number
  readonly p99Ms: number
}

/**
 * Runs `op(loop)` in `concurrency` independent loops until `seconds` have passed (an operation
 * under way then is finished and counted). `op` answers the units it completed (anything but a
 * number: 1).
 */
export async function timedLoops(run: LoopRun, op: (loop: number) => Promise<unknown>): Promise<LoopRunResult> {
  const started = performance.now()
  const deadline = started + run.seconds * 1000
  const latencies: number[] = []
  let units = 0
  let lastEnd = started
  const loop = async (index: number) => {
    while (performance.now() < deadline) {
      const t0 = performance.now()
      // Not `units += await op()`: that reads `units` before the await, losing the other loops' counts.
      const done = await op(index)
      units += typeof done === 'number' ? done : 1
      lastEnd = performance.now()
      latencies.push(lastEnd - t0)
    }
  }
  await Promise.all(Array.from({ length: run.concurrency }, (_, i) => loop(i)))
  latencies.sort((a, b) => a - b)
  return { operations: latencies.length, units, seconds: (lastEnd - started) / 1000, p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99) }
}
