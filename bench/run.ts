// `npm run bench [-- <scenario>...]`: runs the scenarios of bench/scenarios/ (all, or those
// named), each subject against a ceiling measured in the same run, and prints one table of
// ratios against targets (and the memory scenario's checks). Every server under test is a
// child process; the load generator (autocannon, or bench/lib/loop.ts's closed loops) runs here.
//
// Environment:
//   BENCH_SECONDS          seconds per measurement (default 4)
//   BENCH_WARMUP_SECONDS   seconds of warm-up per contender (default 1)
//   BENCH_ROUNDS           measurements per contender, alternated (default 2)
//   BENCH_QUIET_TIMEOUT_SECONDS  before each measurement, wait up to this long for the rest of the
//                          machine to go quiet (default 15; 0: never wait); a row measured beside other work says "(noisy)"
//   BENCH_RETRIES          a measurement disturbed by other work is taken again up to this many times (default 2)
//   BENCH_DATABASE_URL     PostgreSQL for the PostgreSQL contenders (else TEST_DATABASE_URL; else skipped)
//   BENCH_STRICT=1         exit 1 when a target is missed (an invalid measurement always does)
//   BENCH_CHILD_EXEC_ARGV  extra node flags for every child, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"
//   BENCH_REVOKE_BATCH, BENCH_LIFECYCLE_BATCH  single-use operations prepared per measurement at most
//   BENCH_UPLOAD_MIB, BENCH_MEMORY_MIB  blob sizes of the upload (64) and memory (1024) scenarios
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describeMachine, formatMachine } from './lib/machine.ts'
import { NOISY_CORES, type Measured } from './lib/measure.ts'
import { checksTable, detailsTable, resultsTable } from './lib/report.ts'
import { noisy, verdict, type BenchContext, type Check, type Row } from './lib/scenario.ts'
import { scenarios } from './scenarios/index.ts'

function positive(name: string, fallback: number, zeroAllowed = false): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value < 0 || (value === 0 && !zeroAllowed)) throw new Error(`${name} must be a positive number, got "${raw}"`)
  return value
}

const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'))
const unknown = wanted.filter((name) => !scenarios.some((s) => s.name === name))
if (unknown.length > 0) {
  process.stderr.write(`unknown scenario(s): ${unknown.join(', ')}; known: ${scenarios.map((s) => s.name).join(', ')}\n`)
  process.exit(2)
}
const selected = wanted.length === 0 ? scenarios : scenarios.filter((s) => wanted.includes(s.name))

// Each scenario's children and databases go when the scenario ends (they must not share the
// CPU with the next one), and on Ctrl-C or SIGTERM. What a later scenario reuses (the photo
// scenarios' servers: restore restores what backup stored) goes when the run ends.
const cleanups: Array<() => Promise<void>> = []
const runCleanups: Array<() => Promise<void>> = []
const cleanUp = async (list = cleanups) => {
  while (list.length > 0) {
    try {
      await list.pop()?.()
    } catch (error) {
      process.stderr.write(`cleanup failed: ${String(error)}\n`)
    }
  }
}
const cleanUpRun = () => cleanUp().then(() => cleanUp(runCleanups))

const workDir = await mkdtemp(path.join(tmpdir(), 'coffer-bench-'))
const removeWorkDir = () => rm(workDir, { recursive: true, force: true })
// Ctrl-C, or a `timeout` around the run: children stopped, schemas dropped, temp files gone.
for (const [signal, status] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  process.once(signal, () => {
    void cleanUpRun()
      .then(removeWorkDir)
      .then(() => process.exit(status))
  })
}
const context: BenchContext = {
  schedule: {
    warmupS: positive('BENCH_WARMUP_SECONDS', 1),
    measureS: positive('BENCH_SECONDS', 4),
    rounds: Math.round(positive('BENCH_ROUNDS', 2)),
    quietTimeoutS: positive('BENCH_QUIET_TIMEOUT_SECONDS', 15, true),
    retries: Math.round(positive('BENCH_RETRIES', 2, true)),
  },
  postgresUrl: process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || null,
  workDir,
  log: (line) => process.stdout.write(`${line}\n`),
  defer: (cleanup) => {
    cleanups.push(cleanup)
  },
  deferToRunEnd: (cleanup) => {
    runCleanups.push(cleanup)
  },
}

const machine = formatMachine(describeMachine())
context.log(`machine: ${machine}`)
context.log(`schedule: ${context.schedule.warmupS} s warm-up, ${context.schedule.rounds} x ${context.schedule.measureS} s per contender, alternated`)

const rows: Row[] = []
const checks: Check[] = []
const measured: Measured[] = []
const notes: string[] = []
let failed: unknown = null
const started = performance.now()
for (const scenario of selected) {
  context.log(`\n== ${scenario.name}: ${scenario.summary}`)
  const scenarioStarted = performance.now()
  try {
    const result = await scenario.run(context)
    rows.push(...result.rows)
    checks.push(...(result.checks ?? []))
    measured.push(...result.measured)
    notes.push(...result.notes.map((n) => `${scenario.name}: ${n}`))
  } catch (error) {
    failed = error
  } finally {
    await cleanUp()
  }
  context.log(`  (${scenario.name} took ${((performance.now() - scenarioStarted) / 1000).toFixed(0)} s)`)
  if (failed !== null) break
}
await cleanUp(runCleanups)
await removeWorkDir()

if (rows.length > 0 || checks.length > 0) {
  context.log(`\n## Results (${machine})\n`)
  if (rows.length > 0) context.log(resultsTable(rows))
  if (checks.length > 0) context.log(`${rows.length > 0 ? '\n' : ''}${checksTable(checks)}`)
  if (measured.length > 0) {
    context.log('\n## Per contender\n')
    context.log(detailsTable(measured))
  }
  if (notes.length > 0) context.log(`\n${notes.map((n) => `- ${n}`).join('\n')}`)
  if (rows.some(noisy))
    context.log(`- (noisy): other work on the machine took ${NOISY_CORES}+ cores during a measurement of that row; its figures are suspect.`)
}
context.log(`\ntotal ${((performance.now() - started) / 1000).toFixed(0)} s`)

if (failed !== null) {
  process.stderr.write(`\nbench failed: ${failed instanceof Error ? (failed.stack ?? failed.message) : String(failed)}\n`)
  process.exit(1)
}
const verdicts = rows.map(verdict)
if (verdicts.includes('INVALID')) process.exit(1)
if (process.env.BENCH_STRICT === '1' && (verdicts.includes('FAIL') || checks.some((c) => c.pass === false))) process.exit(1)
