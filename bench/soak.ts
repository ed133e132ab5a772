// `npm run soak`: a bounded mixed workload against the real server (bench/lib/soak.ts): sign-ins,
// reads, uploads, lifecycle writes, relay, verification, by SOAK_CLIENTS virtual users for
// SOAK_SECONDS; prints per-operation counts, errors and p50/p99 latency, and the server's
// resident memory over time with its trend after warm-up. Exits 1 on any error (expected
// refusals aside), any server log line at error level, an unclean stop, or, on a run of
// TREND_MIN_SECONDS or more, an upward memory trend.
//
// Environment:
//   SOAK_SECONDS          seconds of load (default 600)
//   SOAK_CLIENTS          virtual users, each one operation at a time (default 8)
//   SOAK_DATABASE_URL     run on this PostgreSQL (a fresh schema, dropped at the end); unset: SQLite
//   SOAK_SAMPLE_SECONDS   memory sampling interval (default 5)
//   SOAK_JSON             also write the whole result (every sample) as JSON to this file
//   SOAK_SERVER_ENV       more server variables, e.g. "SWEEP_INTERVAL_S=10 LOG_LEVEL=warn"
import { writeFile } from 'node:fs/promises'
import { describeOperations, failures, formatSoak, runSoak } from './lib/soak.ts'

function positive(name: string, fallback: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`)
  return value
}

function serverVariables(raw: string | undefined): Record<string, string> {
  const pairs = (raw ?? '').split(/\s+/).filter((p) => p !== '')
  return Object.fromEntries(
    pairs.map((pair) => {
      const at = pair.indexOf('=')
      if (at <= 0) throw new Error(`SOAK_SERVER_ENV: "${pair}" is not NAME=value`)
      return [pair.slice(0, at), pair.slice(at + 1)]
    }),
  )
}

const log = (line: string) => process.stdout.write(`${line}\n`)
// Ctrl-C or SIGTERM ends the load early; the server is still stopped, the schema dropped, the figures printed.
const stop = new AbortController()
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`  (${signal}: ending the load now)`)
    stop.abort()
  })
}
const result = await runSoak({
  signal: stop.signal,
  seconds: positive('SOAK_SECONDS', 600),
  clients: Math.round(positive('SOAK_CLIENTS', 8)),
  postgresUrl: process.env.SOAK_DATABASE_URL || null,
  sampleSeconds: positive('SOAK_SAMPLE_SECONDS', 5),
  serverEnv: serverVariables(process.env.SOAK_SERVER_ENV),
  log,
})
log('')
log(formatSoak(result))
log('')
log('Operations (picked at random by weight, one at a time per client, as fast as the server answers):')
log(describeOperations())
if (process.env.SOAK_JSON) await writeFile(process.env.SOAK_JSON, `${JSON.stringify(result, null, 2)}\n`)
const failed = failures(result)
log('')
log(failed.length === 0 ? 'soak: pass' : `soak: FAIL: ${failed.join('; ')}`)
process.exit(failed.length === 0 ? 0 : 1)
