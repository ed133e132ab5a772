// The shape every scenario under bench/scenarios/ has. A scenario starts its own children,
// measures subject(s) and ceiling(s) with `alternate` (measure.ts), and returns rows of
// subject/ceiling ratios against targets. bench/run.ts lists the scenarios, filters them by
// name from the command line, and prints one table for all of them.
import { alternate, NOISY_CORES, type Contender, type Measured, type Schedule } from './measure.ts'

export interface BenchContext {
  readonly schedule: Schedule
  /** A PostgreSQL URL (BENCH_DATABASE_URL or TEST_DATABASE_URL), or null: PostgreSQL contenders are skipped. */
  readonly postgresUrl: string | null
  /** A fresh temporary directory of this run, removed at its end. */
  readonly workDir: string
  log(line: string): void
  /** Runs when the scenario ends, even after a failure, last deferred first. */
  defer(cleanup: () => Promise<void>): void
  /** Runs when the whole run ends, after the last scenario: for children a later scenario reuses. */
  deferToRunEnd(cleanup: () => Promise<void>): void
}

/** The ratio subject/ceiling must be at least `min` (and at most `max` when given). */
export interface Target {
  readonly min: number
  readonly max?: number
}

export interface Row {
  readonly scenario: string
  readonly subject: Measured
  readonly ceiling: Measured
  /** null: the row is reported for information only. */
  readonly target: Target | null
  /** What one completed operation is, for the table (req, verify, ...). */
  readonly unit: string
}

/**
 * A figure that is not a rate against a ceiling (a memory growth, an exact byte count), with
 * its own target: `pass` is null when it is reported for information only.
 */
export interface Check {
  readonly scenario: string
  readonly name: string
  readonly value: string
  readonly target: string
  readonly pass: boolean | null
}

export interface ScenarioResult {
  readonly rows: readonly Row[]
  /** Per-contender figures beyond the rows (rounds, latency, CPU). */
  readonly measured: readonly Measured[]
  readonly notes: readonly string[]
  /** Figures with a target of their own (the memory scenario's). */
  readonly checks?: readonly Check[]
}

export interface Scenario {
  /** What `npm run bench -- <name>` selects. */
  readonly name: string
  readonly summary: string
  run(context: BenchContext): Promise<ScenarioResult>
}

export function row(scenario: string, measured: ReadonlyMap<string, Measured>, subject: string, ceiling: string, target: Target | null, unit = 'req'): Row {
  const s = measured.get(subject)
  const c = measured.get(ceiling)
  if (s === undefined || c === undefined) throw new Error(`${scenario}: no measurement for ${s === undefined ? subject : ceiling}`)
  return { scenario, subject: s, ceiling: c, target, unit }
}

/** The note of a scenario run without a PostgreSQL URL. */
export const POSTGRES_SKIPPED = 'PostgreSQL skipped: set BENCH_DATABASE_URL or TEST_DATABASE_URL to measure it too.'

/**
 * How most scenarios end: the contenders measured alternately, one row per subject against
 * `ceiling`, every contender in the details.
 */
export async function measureAgainst(
  context: BenchContext,
  scenario: string,
  contenders: readonly Contender[],
  subjects: ReadonlyArray<readonly [subject: string, target: Target | null]>,
  ceiling: string,
  unit: string,
  notes: readonly string[],
): Promise<ScenarioResult> {
  const measured = await alternate(contenders, context.schedule, context.log)
  return {
    rows: subjects.map(([subject, target]) => row(scenario, measured, subject, ceiling, target, unit)),
    measured: [...measured.values()],
    notes,
  }
}

export function ratio(row: Row): number {
  return row.ceiling.pooled.rate === 0 ? 0 : row.subject.pooled.rate / row.ceiling.pooled.rate
}

export type Verdict = 'pass' | 'FAIL' | 'info' | 'INVALID'

export function verdict(row: Row): Verdict {
  if (row.subject.pooled.problems.length > 0 || row.ceiling.pooled.problems.length > 0) return 'INVALID'
  if (row.target === null) return 'info'
  const r = ratio(row)
  return r >= row.target.min && (row.target.max === undefined || r <= row.target.max) ? 'pass' : 'FAIL'
}

export function formatTarget(target: Target | null): string {
  if (target === null) return '-'
  return target.max === undefined ? `>= ${target.min.toFixed(2)}` : `${target.min.toFixed(2)}-${target.max.toFixed(2)}`
}

/** Whether something else on the machine took CPU while a figure of the row was measured. */
export function noisy(row: Row): boolean {
  return [...row.subject.rounds, ...row.ceiling.rounds].some((m) => m.otherCores >= NOISY_CORES)
}
