// Closed-loop load for operations that autocannon cannot express: a round trip of two requests
// (relay), or single-use requests prepared beforehand (revoke-all proofs, lifecycle manifests,
// blob uploads). `concurrency` workers each run one operation after another, as fast as the
// server answers them, from this process (the load generator), against a child server.
import { connect, type Socket } from 'node:net'
import { cpuWindow } from './cpu.ts'
import type { Contender, Measurement } from './measure.ts'
import { percentile } from './stats.ts'

export interface HttpAnswer {
  readonly status: number
  readonly body: Buffer
}

/**
 * One keep-alive HTTP/1.1 connection over a raw socket: a request at a time, the response read
 * by its Content-Length. Much cheaper for the load generator than node:http or fetch, so that
 * a fast ceiling is bound by the server rather than by this process (as autocannon is, for the
 * scenarios that can use it).
 */
class Connection {
  readonly #socket: Socket
  #buffered: Buffer = Buffer.alloc(0)
  #waiter: { resolve: (answer: HttpAnswer) => void; reject: (error: Error) => void } | null = null
  #failure: Error | null = null

  constructor(hostname: string, port: number) {
    this.#socket = connect({ host: hostname, port, noDelay: true })
    this.#socket.on('data', (chunk: Buffer) => {
      this.#buffered = this.#buffered.length === 0 ? chunk : Buffer.concat([this.#buffered, chunk])
      this.#deliver()
    })
    const fail = (error: Error) => {
      this.#failure ??= error
      this.#waiter?.reject(error)
      this.#waiter = null
    }
    this.#socket.on('error', fail)
    this.#socket.on('close', () => fail(new Error('the server closed the connection')))
  }

  get usable(): boolean {
    return this.#failure === null
  }

  send(request: Buffer): Promise<HttpAnswer> {
    if (this.#failure !== null) return Promise.reject(this.#failure)
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject }
      this.#socket.write(request)
    })
  }

  #deliver(): void {
    const headEnd = this.#buffered.indexOf('\r\n\r\n')
    if (headEnd < 0 || this.#waiter === null) return
    const head = this.#buffered.toString('latin1', 0, headEnd)
    const status = Number(head.slice(9, 12))
    const length = /\r\ncontent-length: *(\d+)/i.exec(head)
    if (length === null && /\r\ntransfer-encoding:/i.test(head)) {
      this.#waiter.reject(new Error('a chunked response (this client reads Content-Length only)'))
      this.#waiter = null
      return
    }
    const bodyLength = length === null ? 0 : Number(length[1])
    if (this.#buffered.length < headEnd + 4 + bodyLength) return
    const body = this.#buffered.subarray(headEnd + 4, headEnd + 4 + bodyLength)
    this.#buffered = this.#buffered.subarray(headEnd + 4 + bodyLength)
    const waiter = this.#waiter
    this.#waiter = null
    waiter.resolve({ status, body })
  }

  close(): void {
    this.#socket.destroy()
  }
}

/** Keep-alive HTTP/1.1 to one server: a connection per request in flight, reused. */
export class HttpClient {
  readonly #hostname: string
  readonly #port: number
  readonly #host: string
  readonly #idle: Connection[] = []
  readonly #all: Connection[] = []

  constructor(baseUrl: string) {
    const url = new URL(baseUrl)
    this.#hostname = url.hostname
    this.#port = Number(url.port)
    this.#host = url.host
  }

  async call(method: string, path: string, headers: Record<string, string> = {}, body?: string | Buffer): Promise<HttpAnswer> {
    const payload = body === undefined ? null : typeof body === 'string' ? Buffer.from(body) : body
    let head = `${method} ${path} HTTP/1.1\r\nhost: ${this.#host}\r\n`
    for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`
    if (payload !== null) head += `content-length: ${payload.length}\r\n`
    head += '\r\n'
    const request = payload === null ? Buffer.from(head, 'latin1') : Buffer.concat([Buffer.from(head, 'latin1'), payload])
    let connection = this.#idle.pop()
    while (connection !== undefined && !connection.usable) connection = this.#idle.pop()
    if (connection === undefined) {
      connection = new Connection(this.#hostname, this.#port)
      this.#all.push(connection)
    }
    const answer = await connection.send(request)
    this.#idle.push(connection)
    return answer
  }

  close(): void {
    for (const connection of this.#all) connection.close()
  }
}

/** Throws a problem (the response's status and start of body) unless the status is `expected`. */
export function expectStatus(answer: HttpAnswer, expected: number, what: string): void {
  if (answer.status !== expected) {
    throw new Error(`${what}: status ${answer.status} (expected ${expected}): ${answer.body.toString('utf8').slice(0, 160)}`)
  }
}

export interface LoopOptions {
  readonly concurrency: number
  readonly seconds: number
  /** CPU seconds of the process under test so far (Child.cpuSeconds). */
  readonly subjectCpu: () => number
  /** Where every operation's latency (ms) goes too, for percentiles over several measurements. */
  readonly latencies?: number[]
}

/**
 * Runs `op(worker)` in `concurrency` closed loops for `seconds` (or until every worker's `op`
 * answers null: nothing left to do). `op` answers the units it completed (1 operation, or the
 * MiB an upload carried) and throws on an unexpected answer: the worker then stops and the
 * measurement carries the problem (the row becomes INVALID).
 */
export async function closedLoop(options: LoopOptions, op: (worker: number) => Promise<number | null>): Promise<Measurement> {
  const cpu = cpuWindow(options.subjectCpu)
  const started = performance.now()
  const deadline = started + options.seconds * 1000
  const latencies: number[] = []
  const problems = new Map<string, number>()
  let units = 0
  const worker = async (index: number) => {
    while (performance.now() < deadline) {
      const t0 = performance.now()
      let done: number | null
      try {
        done = await op(index)
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error)
        problems.set(message, (problems.get(message) ?? 0) + 1)
        return
      }
      if (done === null) return
      units += done
      const latency = performance.now() - t0
      latencies.push(latency)
      options.latencies?.push(latency)
    }
  }
  await Promise.all(Array.from({ length: options.concurrency }, (_, i) => worker(i)))
  const { subjectCores, loadgenCores, otherCores, seconds } = cpu.end()
  latencies.sort((a, b) => a - b)
  const found = [...problems].map(([message, count]) => `${count} x ${message}`)
  if (units === 0 && found.length === 0) found.push('no operation completed')
  return {
    rate: units / seconds,
    completed: units,
    seconds,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    subjectCores,
    loadgenCores,
    otherCores,
    problems: found,
  }
}

export interface PreparedLoad<T> {
  readonly name: string
  /** The server the operations go to: each measurement gets a fresh keep-alive client for it. */
  readonly url: string
  readonly concurrency: number
  readonly subjectCpu: () => number
  /** Rate guessed before the first measurement (it sizes the warm-up batch). */
  readonly initialRate: number
  /** At most this many operations per measurement (their preparation costs time too). */
  readonly maxBatch: number
  /** Units one operation completes (the MiB of one upload); 1 by default. */
  readonly unitsPerItem?: number
  /** Makes `perWorker` single-use operations ready for each worker (not timed). */
  prepare(perWorker: number): Promise<T[][]>
  /** Runs one operation; throws on an unexpected answer; answers the units it completed. */
  run(item: T, http: HttpClient, worker: number): Promise<number>
}

/** A batch of single-use operations made ready, to be run once. */
export interface PreparedBatch {
  /** Runs the batch for `seconds` at most (less when it is spent first). */
  run(seconds: number): Promise<Measurement>
}

/**
 * Batches of single-use operations: each is prepared (outside any measured window) for about
 * `seconds` at the last measured rate, capped at `maxBatch`, and its run ends when the time
 * is up or the batch is spent, whichever comes first; its rate is what completed over the
 * time it took, and sizes the next batch.
 */
export function preparedBatches<T>(load: PreparedLoad<T>): { prepare(seconds: number): Promise<PreparedBatch> } {
  let rate = load.initialRate
  return {
    async prepare(seconds) {
      const wanted = Math.min(load.maxBatch, Math.max(load.concurrency * 2, Math.ceil((rate * seconds * 1.15) / (load.unitsPerItem ?? 1))))
      const batches = await load.prepare(Math.ceil(wanted / load.concurrency))
      // Let what the preparation left behind (fsyncs, WAL checkpoints) settle.
      await new Promise((resolve) => setTimeout(resolve, 250))
      return {
        async run(runSeconds) {
          const http = new HttpClient(load.url)
          let measurement: Measurement
          try {
            measurement = await closedLoop({ concurrency: load.concurrency, seconds: runSeconds, subjectCpu: load.subjectCpu }, async (worker) => {
              const item = batches[worker]?.pop()
              return item === undefined ? null : load.run(item, http, worker)
            })
          } finally {
            http.close()
          }
          if (measurement.rate > 0) rate = measurement.rate
          return measurement
        },
      }
    },
  }
}

/** A contender whose operations are single use (see preparedBatches): a batch per measurement. */
export function preparedContender<T>(load: PreparedLoad<T>): Contender {
  const batches = preparedBatches(load)
  return {
    name: load.name,
    measure: async (seconds) => (await batches.prepare(seconds)).run(seconds),
  }
}

/** Runs `task` for every element with at most `parallel` in flight (for preparations). */
export async function inParallel<T, R>(items: readonly T[], parallel: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length)
  let next = 0
  const lane = async () => {
    while (next < items.length) {
      const index = next++
      results[index] = await task(items[index] as T, index)
    }
  }
  await Promise.all(Array.from({ length: Math.min(parallel, items.length) }, lane))
  return results
}
