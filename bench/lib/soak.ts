// The soak (`npm run soak`, bench/soak.ts; and test/e2e/soak.test.ts for 60 s per engine in
// CI): a bounded mixed workload against the real server, `node src/main.ts`, on SQLite or
// PostgreSQL. `clients` virtual users (soak-user.ts) each run one operation after another for
// `seconds`, as fast as the server answers; every answer is checked. The result: per operation
// its count, expected refusals, errors and p50/p99 latency; every error by kind; the server's
// resident memory and V8 heap (from /metrics) sampled every `sampleSeconds`, with their trend
// after warm-up; the server's log lines by level; CPU; whether the server stopped cleanly.
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { CofferProblem } from '../../src/sdk/client.ts'
import { freshSchema, serverEnv } from './coffer.ts'
import { cpuWindow, residentBytes } from './cpu.ts'
import { inParallel } from './loop.ts'
import { describeMachine, formatMachine } from './machine.ts'
import { startMain, type LogCounts } from './main-process.ts'
import { table } from './report.ts'
import { OPERATION_NAMES, OPERATIONS, VirtualUser, type OperationName } from './soak-user.ts'
import { median, percentile, slope } from './stats.ts'

const MIB = 1024 * 1024
/** The memory trend is judged only on runs at least this long: a minute is all warm-up. */
export const TREND_MIN_SECONDS = 300
/**
 * An upward trend, judged on the V8 heap in use (live JavaScript objects plus garbage not yet
 * collected): over the second half of the run it grows faster than this (least-squares slope)
 * AND the floor (lowest sample) of the last quarter exceeds that of the second quarter by more
 * than TREND_MAX_FLOOR_RATIO. Floors, not medians: the lowest samples are the ones just after a
 * collection, which a leak raises. Resident memory is reported the same way but not judged: V8
 * sizes its heap in a sawtooth minutes long (on SQLite at about 430 operations/s, resident memory
 * rose from 226 to 444 MiB over four minutes after falling from 425 to 226 MiB in one full
 * collection), so a 10-minute window holds one or two rising edges that look like a trend while
 * the heap floor stays flat (docs/benchmarks.md, "Soak").
 */
export const TREND_MAX_SLOPE_MIB_PER_MIN = 1
export const TREND_MAX_FLOOR_RATIO = 1.25
/** The series the verdict reads. */
export const JUDGED_SERIES = 'V8 heap used'
const MAINTENANCE_MESSAGE = 'maintenance removed expired rows and garbage'

export interface SoakOptions {
  readonly seconds: number
  readonly clients: number
  /** PostgreSQL to run on (a fresh schema, dropped at the end); null: SQLite in the data folder. */
  readonly postgresUrl: string | null
  readonly sampleSeconds: number
  /** More server variables (SWEEP_INTERVAL_S, ...); the production defaults otherwise. */
  readonly serverEnv?: Record<string, string>
  /** Ends the load early (Ctrl-C): the run still stops the server, cleans up and reports. */
  readonly signal?: AbortSignal
  log(line: string): void
}

export interface OperationFigures {
  readonly name: OperationName
  readonly completed: number
  /** Of `completed`: the expected refusals. */
  readonly refused: number
  readonly errors: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly maxMs: number
  /** p50 of the operations that started in the first and in the second half of the run: a drift tells of degradation. */
  readonly p50FirstHalfMs: number
  readonly p50SecondHalfMs: number
}

export interface SoakError {
  readonly operation: OperationName
  /** `<status> <problem code>`, `network: <cause>` or the check that failed. */
  readonly kind: string
  readonly count: number
  readonly example: string
}

export interface MemorySample {
  /** Seconds since the load started (0: after set-up, before the load). */
  readonly atS: number
  readonly residentBytes: number
  /** From the server's /metrics (prom-client): null when it could not be read. */
  readonly heapUsedBytes: number | null
  readonly externalBytes: number | null
  /** Operations completed since the previous sample. */
  readonly operations: number
}

export interface Trend {
  readonly series: string
  /** Least-squares slope over the second half of the run, MiB per minute. */
  readonly slopeMibPerMin: number
  readonly secondQuarterMedianMib: number
  readonly lastQuarterMedianMib: number
  /** The lowest sample of each quarter. */
  readonly secondQuarterFloorMib: number
  readonly lastQuarterFloorMib: number
  /** lastQuarterFloor / secondQuarterFloor. */
  readonly floorRatio: number
  /** null: not judged (a run shorter than TREND_MIN_SECONDS, or a series reported for information). */
  readonly pass: boolean | null
}

export interface SoakResult {
  readonly engine: 'sqlite' | 'postgres'
  readonly machine: string
  readonly loadAverage: { readonly before: readonly number[]; readonly after: readonly number[] }
  readonly seconds: number
  readonly clients: number
  readonly sampleSeconds: number
  readonly operations: readonly OperationFigures[]
  readonly errors: readonly SoakError[]
  readonly errorCount: number
  readonly refusedCount: number
  readonly completedCount: number
  readonly samples: readonly MemorySample[]
  readonly trends: readonly Trend[]
  /** Cores used on average over the load: the server (with its PostgreSQL backends), this process, the rest of the machine. */
  readonly cpu: { readonly serverCores: number; readonly loadgenCores: number; readonly otherCores: number }
  readonly serverLog: LogCounts
  /** Maintenance passes that removed something (logged at info). */
  readonly maintenancePasses: number
  /** The server's exit code after SIGTERM: 0 is a clean shutdown. */
  readonly exitCode: number | null
}

/** Whether the run passed: no error, no server error line, a clean stop, no upward memory trend when judged. */
export function failures(result: SoakResult): string[] {
  const found: string[] = []
  if (result.errorCount > 0) found.push(`${result.errorCount} error(s)`)
  const serverErrors = (result.serverLog.byLevel.error ?? 0) + (result.serverLog.byLevel.fatal ?? 0)
  if (serverErrors > 0) found.push(`${serverErrors} server log line(s) at error or fatal`)
  if (result.exitCode !== 0) found.push(`the server exited with ${result.exitCode} after SIGTERM`)
  for (const trend of result.trends) if (trend.pass === false) found.push(`${trend.series} trends upward after warm-up`)
  const idle = result.operations.filter((o) => o.completed === 0).map((o) => o.name)
  if (idle.length > 0) found.push(`never ran: ${idle.join(', ')}`)
  return found
}

function describeError(error: unknown): string {
  if (error instanceof CofferProblem) return `${error.status} ${error.code}`
  if (error instanceof TypeError && error.message === 'fetch failed') {
    const cause = (error as TypeError & { cause?: { code?: string; message?: string } }).cause
    return `network: ${cause?.code ?? cause?.message ?? 'fetch failed'}`
  }
  return error instanceof Error ? error.message.slice(0, 200) : String(error).slice(0, 200)
}

async function heapFromMetrics(url: string): Promise<{ heapUsed: number; external: number } | null> {
  try {
    const text = await (await fetch(`${url}/metrics`)).text()
    const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN)
    const heapUsed = read('coffer_nodejs_heap_size_used_bytes')
    const external = read('coffer_nodejs_external_memory_bytes')
    return Number.isFinite(heapUsed) && Number.isFinite(external) ? { heapUsed, external } : null
  } catch {
    return null
  }
}

/** The trend of one series after warm-up (see TREND_MAX_*); judged when `judge`. */
export function trendOf(series: string, points: ReadonlyArray<{ atS: number; bytes: number }>, seconds: number, judge: boolean): Trend {
  const within = (from: number, to: number) => points.filter((p) => p.atS >= from * seconds && p.atS <= to * seconds).map((p) => p.bytes / MIB)
  const slopeMibPerMin = slope(points.filter((p) => p.atS >= seconds / 2).map((p) => ({ x: p.atS / 60, y: p.bytes / MIB })))
  const secondQuarter = within(0.25, 0.5)
  const lastQuarter = within(0.75, 1)
  const floor = (values: number[]) => (values.length === 0 ? 0 : Math.min(...values))
  const secondQuarterFloorMib = floor(secondQuarter)
  const lastQuarterFloorMib = floor(lastQuarter)
  const floorRatio = secondQuarterFloorMib === 0 ? 0 : lastQuarterFloorMib / secondQuarterFloorMib
  const upward = slopeMibPerMin > TREND_MAX_SLOPE_MIB_PER_MIN && floorRatio > TREND_MAX_FLOOR_RATIO
  return {
    series,
    slopeMibPerMin,
    secondQuarterMedianMib: median(secondQuarter),
    lastQuarterMedianMib: median(lastQuarter),
    secondQuarterFloorMib,
    lastQuarterFloorMib,
    floorRatio,
    pass: judge ? !upward : null,
  }
}

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const engine = options.postgresUrl === null ? 'sqlite' : 'postgres'
  const cleanups: Array<() => Promise<void>> = []
  const defer = (cleanup: () => Promise<void>) => cleanups.push(cleanup)
  try {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), `coffer-soak-${engine}-`))
    defer(() => rm(dataDir, { recursive: true, force: true }))
    const env: Record<string, string | undefined> = { ...serverEnv(dataDir, 'info'), ...options.serverEnv }
    if (options.postgresUrl !== null) {
      // src/main.ts reads DATABASE_URL only: the schema rides in the URL's options, as in test/support/process.ts.
      const schema = await freshSchema(options.postgresUrl, defer)
      const url = options.postgresUrl
      env.DATABASE_URL = `${url}${url.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`
    }
    const server = await startMain({ env, engine, watch: [MAINTENANCE_MESSAGE] })
    let stopped = false
    defer(async () => {
      if (!stopped) await server.stop()
    })
    options.log(`soak: ${engine}, ${options.clients} clients, ${options.seconds} s; server pid ${server.pid} at ${server.url}`)

    const users = Array.from({ length: options.clients }, () => new VirtualUser(server.url))
    const setUpStarted = performance.now()
    await inParallel(users, options.clients, (user) => user.setUp())
    options.log(
      `  set up ${options.clients} users in ${((performance.now() - setUpStarted) / 1000).toFixed(1)} s (register, directory, album, channel, 2 assets each)`,
    )

    const latencies = new Map<OperationName, number[]>(OPERATION_NAMES.map((name) => [name, []]))
    /** When each operation started (seconds into the load), in the order of `latencies`. */
    const startedAt = new Map<OperationName, number[]>(OPERATION_NAMES.map((name) => [name, []]))
    const refused = new Map<OperationName, number>(OPERATION_NAMES.map((name) => [name, 0]))
    const errorCounts = new Map<OperationName, number>(OPERATION_NAMES.map((name) => [name, 0]))
    const errors = new Map<string, { operation: OperationName; kind: string; count: number; example: string }>()
    let completedSinceSample = 0

    const samples: MemorySample[] = []
    const takeSample = async (atS: number) => {
      const resident = residentBytes(server.pid)
      const heap = await heapFromMetrics(server.url)
      samples.push({
        atS,
        residentBytes: resident,
        heapUsedBytes: heap?.heapUsed ?? null,
        externalBytes: heap?.external ?? null,
        operations: completedSinceSample,
      })
      completedSinceSample = 0
    }
    const loadBefore = os.loadavg()
    await takeSample(0)
    const cpu = cpuWindow(() => server.cpuSeconds())
    const started = performance.now()
    const deadline = started + options.seconds * 1000
    const elapsedS = () => (performance.now() - started) / 1000

    let sampling = true
    const sampler = (async () => {
      for (let n = 1; sampling; n++) {
        const due = started + n * options.sampleSeconds * 1000
        while (sampling && performance.now() < due) await new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.min(250, due - performance.now()))))
        if (!sampling) break
        await takeSample(Math.round(elapsedS()))
        const last = samples.at(-1)
        if (last !== undefined && n % Math.max(1, Math.round(60 / options.sampleSeconds)) === 0) {
          const errorTotal = [...errorCounts.values()].reduce((a, b) => a + b, 0)
          options.log(
            `  ${last.atS} s: resident ${(last.residentBytes / MIB).toFixed(1)} MiB, heap ${last.heapUsedBytes === null ? '?' : (last.heapUsedBytes / MIB).toFixed(1)} MiB, ${(last.operations / options.sampleSeconds).toFixed(0)} ops/s, ${errorTotal} error(s) so far`,
          )
        }
      }
    })()

    const worker = async (user: VirtualUser) => {
      while (performance.now() < deadline && options.signal?.aborted !== true) {
        const name = user.next()
        const t0 = performance.now()
        try {
          const outcome = await user.run(name)
          latencies.get(name)?.push(performance.now() - t0)
          startedAt.get(name)?.push((t0 - started) / 1000)
          if (outcome === 'refused') refused.set(name, (refused.get(name) ?? 0) + 1)
          completedSinceSample++
        } catch (error) {
          errorCounts.set(name, (errorCounts.get(name) ?? 0) + 1)
          const kind = describeError(error)
          const key = `${name}\u0000${kind}`
          const seen = errors.get(key)
          if (seen === undefined) {
            const example = error instanceof Error ? error.message.slice(0, 300) : String(error).slice(0, 300)
            errors.set(key, { operation: name, kind, count: 1, example })
            options.log(`  ERROR at ${elapsedS().toFixed(0)} s in ${name}: ${kind}${example === kind ? '' : ` (${example})`}`)
          } else {
            seen.count++
          }
          // A failing server is not hammered at full speed.
          await new Promise((resolve) => setTimeout(resolve, 100))
        }
      }
    }
    await Promise.all(users.map(worker))
    const measuredS = elapsedS()
    const cpuUsed = cpu.end()
    sampling = false
    await sampler
    if ((samples.at(-1)?.atS ?? 0) < Math.round(measuredS)) await takeSample(Math.round(measuredS))
    const loadAfter = os.loadavg()

    await inParallel(users, options.clients, (user) => user.tearDown().catch(() => {}))
    const exitCode = await server.stop()
    stopped = true

    const operations: OperationFigures[] = OPERATION_NAMES.map((name) => {
      const all = latencies.get(name) ?? []
      const at = startedAt.get(name) ?? []
      const half = (first: boolean) => all.filter((_, i) => (at[i] ?? 0) < measuredS / 2 === first).sort((a, b) => a - b)
      const sorted = [...all].sort((a, b) => a - b)
      return {
        name,
        completed: sorted.length,
        refused: refused.get(name) ?? 0,
        errors: errorCounts.get(name) ?? 0,
        p50Ms: percentile(sorted, 0.5),
        p99Ms: percentile(sorted, 0.99),
        maxMs: sorted.at(-1) ?? 0,
        p50FirstHalfMs: percentile(half(true), 0.5),
        p50SecondHalfMs: percentile(half(false), 0.5),
      }
    })
    const judge = measuredS >= TREND_MIN_SECONDS
    const trends = [
      trendOf(
        'resident memory',
        samples.map((s) => ({ atS: s.atS, bytes: s.residentBytes })),
        measuredS,
        false,
      ),
      trendOf(
        JUDGED_SERIES,
        samples.flatMap((s) => (s.heapUsedBytes === null ? [] : [{ atS: s.atS, bytes: s.heapUsedBytes }])),
        measuredS,
        judge,
      ),
    ]
    const logs = server.logs()
    return {
      engine,
      machine: formatMachine(describeMachine()),
      loadAverage: { before: loadBefore, after: loadAfter },
      seconds: measuredS,
      clients: options.clients,
      sampleSeconds: options.sampleSeconds,
      operations,
      errors: [...errors.values()].sort((a, b) => b.count - a.count),
      errorCount: operations.reduce((sum, o) => sum + o.errors, 0),
      refusedCount: operations.reduce((sum, o) => sum + o.refused, 0),
      completedCount: operations.reduce((sum, o) => sum + o.completed, 0),
      samples,
      trends,
      cpu: { serverCores: cpuUsed.subjectCores, loadgenCores: cpuUsed.loadgenCores, otherCores: cpuUsed.otherCores },
      serverLog: logs,
      maintenancePasses: logs.watched[MAINTENANCE_MESSAGE] ?? 0,
      exitCode,
    }
  } finally {
    while (cleanups.length > 0) {
      try {
        await cleanups.pop()?.()
      } catch (error) {
        options.log(`cleanup failed: ${String(error)}`)
      }
    }
  }
}

const mib = (bytes: number) => (bytes / MIB).toFixed(1)

/** The result as Markdown (it pastes straight into docs/benchmarks.md). */
export function formatSoak(result: SoakResult): string {
  const lines: string[] = []
  const rate = (n: number) => (n / result.seconds).toFixed(1)
  lines.push(`## Soak: ${result.engine}, ${result.clients} clients, ${result.seconds.toFixed(0)} s (${result.machine})`)
  lines.push('')
  lines.push(
    `load average before ${result.loadAverage.before.map((l) => l.toFixed(2)).join(' ')}, after ${result.loadAverage.after.map((l) => l.toFixed(2)).join(' ')}; CPU over the run: server ${result.cpu.serverCores.toFixed(2)} cores${result.engine === 'postgres' ? ' (with the postgres backends)' : ''}, load generator ${result.cpu.loadgenCores.toFixed(2)}, rest of the machine ${result.cpu.otherCores.toFixed(2)}`,
  )
  lines.push('')
  lines.push(
    table(
      ['operation', 'count', 'per s', 'expected refusals', 'errors', 'p50 ms', 'p99 ms', 'max ms', 'p50 ms 1st half -> 2nd half'],
      [
        ...result.operations.map((o) => [
          o.name,
          String(o.completed),
          rate(o.completed),
          String(o.refused),
          String(o.errors),
          o.p50Ms.toFixed(1),
          o.p99Ms.toFixed(1),
          o.maxMs.toFixed(0),
          `${o.p50FirstHalfMs.toFixed(1)} -> ${o.p50SecondHalfMs.toFixed(1)}`,
        ]),
        ['all', String(result.completedCount), rate(result.completedCount), String(result.refusedCount), String(result.errorCount), '', '', '', ''],
      ],
    ),
  )
  if (result.errors.length > 0) {
    lines.push('')
    lines.push(
      table(
        ['operation', 'error', 'count', 'example'],
        result.errors.map((e) => [e.operation, e.kind, String(e.count), e.example.replaceAll('|', '\\|')]),
      ),
    )
  }
  lines.push('')
  const first = result.samples[0]
  const last = result.samples.at(-1)
  const residents = result.samples.map((s) => s.residentBytes)
  lines.push(
    `Resident memory (VmRSS) every ${result.sampleSeconds} s: ${first === undefined ? '?' : mib(first.residentBytes)} MiB after set-up, ${last === undefined ? '?' : mib(last.residentBytes)} MiB at the end, ${mib(Math.min(...residents))}-${mib(Math.max(...residents))} MiB over the run.`,
  )
  lines.push('')
  lines.push(
    table(
      ['series', 'slope, 2nd half (MiB/min)', 'median 2nd -> last quarter (MiB)', 'floor 2nd -> last quarter (MiB)', 'floor ratio', 'target', 'result'],
      result.trends.map((t) => {
        const judged = t.series === JUDGED_SERIES
        return [
          t.series,
          t.slopeMibPerMin.toFixed(2),
          `${t.secondQuarterMedianMib.toFixed(1)} -> ${t.lastQuarterMedianMib.toFixed(1)}`,
          `${t.secondQuarterFloorMib.toFixed(1)} -> ${t.lastQuarterFloorMib.toFixed(1)}`,
          t.floorRatio.toFixed(3),
          judged ? `not both > ${TREND_MAX_SLOPE_MIB_PER_MIN} MiB/min and > ${TREND_MAX_FLOOR_RATIO}` : '-',
          t.pass === null ? (judged ? `info (judged from ${TREND_MIN_SECONDS} s)` : 'info') : t.pass ? 'pass' : 'FAIL',
        ]
      }),
    ),
  )
  lines.push('')
  lines.push(
    `Series (s: resident MiB / heap used MiB / ops per s): ${result.samples
      .map((s, i) => {
        const previous = i === 0 ? null : result.samples[i - 1]
        const span = previous === null || previous === undefined ? 0 : s.atS - previous.atS
        return `${s.atS}: ${mib(s.residentBytes)}/${s.heapUsedBytes === null ? '?' : mib(s.heapUsedBytes)}/${span > 0 ? (s.operations / span).toFixed(0) : '-'}`
      })
      .join(', ')}`,
  )
  lines.push('')
  lines.push(
    `Server log lines by level: ${
      Object.entries(result.serverLog.byLevel)
        .map(([level, n]) => `${level} ${n}`)
        .join(', ') || 'none'
    }; maintenance passes that removed something: ${result.maintenancePasses}; exit code after SIGTERM: ${result.exitCode}.`,
  )
  for (const line of result.serverLog.errors.slice(0, 5)) lines.push(`  server error: ${line.slice(0, 400)}`)
  if (result.serverLog.warnings.length > 0) lines.push(`  first warning: ${result.serverLog.warnings[0]?.slice(0, 300)}`)
  return lines.join('\n')
}

/** The operations and what each does, for the report's notes and docs/benchmarks.md. */
export function describeOperations(): string {
  return OPERATION_NAMES.map((name) => `- **${name}** (weight ${OPERATIONS[name].weight}): ${OPERATIONS[name].what}`).join('\n')
}
