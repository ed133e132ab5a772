// Measurements and how they are taken: HTTP load with autocannon from this process against a
// child server, or a child's own loop; contenders warmed up, then measured alternately in
// rounds so that drift (thermal, noisy neighbours) hits subject and ceiling alike.
import autocannon from 'autocannon'
import type { Child } from './child.ts'
import type { LoopRun, LoopRunResult } from './child-side.ts'
import { cpuWindow, waitForQuiet } from './cpu.ts'

export interface Measurement {
  /** Completed operations per second. */
  readonly rate: number
  readonly completed: number
  readonly seconds: number
  readonly p50Ms: number
  readonly p99Ms: number
  /** CPU of the process under test, in cores (1.0 = one core busy the whole time). */
  readonly subjectCores: number
  /** CPU of this process (the load generator), in cores; about 0 when the child loops by itself. */
  readonly loadgenCores: number
  /** CPU that the rest of the machine used meanwhile, in cores: other work skews the figure. */
  readonly otherCores: number
  /** Anything that makes the figure untrustworthy (wrong statuses, socket errors). */
  readonly problems: readonly string[]
}

export interface Contender {
  readonly name: string
  measure(seconds: number): Promise<Measurement>
}

export interface HttpLoad {
  readonly url: string
  readonly method?: 'GET' | 'POST'
  readonly headers?: Record<string, string>
  readonly body?: string
  readonly connections: number
  /** Every response must have this status; others are problems. */
  readonly expectStatus: number
}

/** Measures `load` for `seconds` against the server in `child`, CPU of both sides included. */
export async function measureHttp(child: Child<unknown>, load: HttpLoad, seconds: number): Promise<Measurement> {
  const cpu = cpuWindow(() => child.cpuSeconds())
  const result = await autocannon({
    url: load.url,
    method: load.method ?? 'GET',
    connections: load.connections,
    duration: seconds,
    pipelining: 1,
    ...(load.headers === undefined ? {} : { headers: load.headers }),
    ...(load.body === undefined ? {} : { body: load.body }),
  })
  const { subjectCores, loadgenCores, otherCores } = cpu.end()

  const problems: string[] = []
  for (const [status, { count }] of Object.entries(result.statusCodeStats)) {
    if (Number(status) !== load.expectStatus) problems.push(`${count} responses with status ${status} (expected ${load.expectStatus})`)
  }
  if (result.errors > 0) problems.push(`${result.errors} socket errors`)
  if (result.timeouts > 0) problems.push(`${result.timeouts} timeouts`)
  const completed = result.requests.total
  if (completed === 0) problems.push('no request completed')
  return {
    rate: completed / result.duration,
    completed,
    seconds: result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    subjectCores,
    loadgenCores,
    otherCores,
    problems,
  }
}

/**
 * A contender that is a child looping by itself (the raw ceilings under bench/servers/): asked
 * over IPC to run `request(seconds)` (a LoopRun and whatever else that child needs), its CPU
 * accounted from here. The child counts `units` (bytes, ...); the figure is `units / unitSize`
 * (1 by default) per second.
 */
export function childLoop<R extends LoopRun>(name: string, child: Child<unknown>, request: (seconds: number) => R, unitSize = 1): Contender {
  return {
    name,
    async measure(seconds) {
      const cpu = cpuWindow(() => child.cpuSeconds())
      const result = await child.request<LoopRunResult>(request(seconds))
      const { subjectCores, loadgenCores, otherCores } = cpu.end()
      const completed = result.units / unitSize
      return {
        rate: result.seconds === 0 ? 0 : completed / result.seconds,
        completed,
        seconds: result.seconds,
        p50Ms: result.p50Ms,
        p99Ms: result.p99Ms,
        subjectCores,
        loadgenCores,
        otherCores,
        problems: result.operations === 0 ? ['no operation completed'] : [],
      }
    },
  }
}

/** Several measurements of one contender as one: total completed over total time. */
export function pool(measurements: readonly Measurement[]): Measurement {
  const completed = measurements.reduce((sum, m) => sum + m.completed, 0)
  const seconds = measurements.reduce((sum, m) => sum + m.seconds, 0)
  const weighted = (pick: (m: Measurement) => number) => (seconds === 0 ? 0 : measurements.reduce((sum, m) => sum + pick(m) * m.seconds, 0) / seconds)
  return {
    rate: seconds === 0 ? 0 : completed / seconds,
    completed,
    seconds,
    p50Ms: weighted((m) => m.p50Ms),
    p99Ms: Math.max(0, ...measurements.map((m) => m.p99Ms)),
    subjectCores: weighted((m) => m.subjectCores),
    loadgenCores: weighted((m) => m.loadgenCores),
    otherCores: weighted((m) => m.otherCores),
    problems: [...new Set(measurements.flatMap((m) => m.problems))],
  }
}

export interface Schedule {
  readonly warmupS: number
  readonly measureS: number
  readonly rounds: number
  /** Before each measurement, wait up to this long for the rest of the machine to go quiet. */
  readonly quietTimeoutS: number
  /** How many times a measurement disturbed by other work is taken again. */
  readonly retries: number
}

/** Other work above this (in cores) during a measurement marks its figure as noisy. */
export const NOISY_CORES = 0.25

export interface Measured {
  readonly name: string
  readonly rounds: readonly Measurement[]
  readonly pooled: Measurement
}

/**
 * Warms every contender up once (unless `schedule.warmupS` is 0: contenders whose measurement is
 * a whole job from a cold start), then measures them in turn, `rounds` times over
 * (A B C, A B C, ...). Returns the pooled figure of each, by name.
 */
export async function alternate(contenders: readonly Contender[], schedule: Schedule, log: (line: string) => void): Promise<Map<string, Measured>> {
  for (const contender of schedule.warmupS === 0 ? [] : contenders) {
    log(`  warm-up   ${contender.name} (${schedule.warmupS} s)`)
    await contender.measure(schedule.warmupS)
  }
  const taken = new Map<string, Measurement[]>(contenders.map((c) => [c.name, []]))
  for (let round = 1; round <= schedule.rounds; round++) {
    for (const contender of contenders) {
      const measurement = await measureQuietly(contender, schedule, log)
      taken.get(contender.name)?.push(measurement)
      log(
        `  round ${round}   ${contender.name}: ${formatRate(measurement.rate)}/s, subject ${measurement.subjectCores.toFixed(2)} cores, load generator ${measurement.loadgenCores.toFixed(2)}, rest of machine ${measurement.otherCores.toFixed(2)}${measurement.problems.length > 0 ? `  PROBLEMS: ${measurement.problems.join('; ')}` : ''}`,
      )
    }
  }
  return new Map([...taken].map(([name, rounds]) => [name, { name, rounds, pooled: pool(rounds) }]))
}

/**
 * One measurement, taken when the rest of the machine is quiet if it gets quiet in time; a
 * measurement that other work disturbed anyway is taken again (`schedule.retries` times at most)
 * and the least disturbed attempt is kept.
 */
async function measureQuietly(contender: Contender, schedule: Schedule, log: (line: string) => void): Promise<Measurement> {
  let best: Measurement | null = null
  for (let attempt = 0; attempt <= schedule.retries; attempt++) {
    const busy = await waitForQuiet(NOISY_CORES, schedule.quietTimeoutS)
    if (busy >= NOISY_CORES) log(`  (the machine is busy with other work: ${busy.toFixed(2)} cores; measuring anyway)`)
    const measurement = await contender.measure(schedule.measureS)
    if (best === null || measurement.otherCores < best.otherCores) best = measurement
    if (measurement.otherCores < NOISY_CORES) break
    if (attempt < schedule.retries) log(`  (other work took ${measurement.otherCores.toFixed(2)} cores during ${contender.name}: measuring again)`)
  }
  if (best === null) throw new Error('no attempt was made')
  return best
}

export function formatRate(rate: number): string {
  return rate >= 100 ? Math.round(rate).toLocaleString('en-US') : rate.toFixed(1)
}
