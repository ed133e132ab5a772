// The server exactly as an operator runs it, `node src/main.ts` (with its maintenance sweep and
// its SIGTERM shutdown, which bench/servers/coffer.ts leaves out), as a child process configured
// through its environment only. Its log lines (stdout, JSON) are read as they come: the ones
// at error level and above are kept for the report, the rest only counted.
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { childEnvironment } from './child.ts'
import { commandCpuSeconds, processCpuSeconds } from './cpu.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url))

/** pino's numeric levels. */
const WARN = 40
const ERROR = 50

export interface LogCounts {
  /** Lines per pino level name (info, warn, error, fatal, ...). */
  readonly byLevel: Record<string, number>
  /** The first lines at error level or above, verbatim (at most 20). */
  readonly errors: readonly string[]
  /** The first lines at warn level, verbatim (at most 20). */
  readonly warnings: readonly string[]
  /** Lines whose `msg` matched a watched message, per message. */
  readonly watched: Record<string, number>
}

export interface MainProcess {
  readonly pid: number
  readonly url: string
  /** CPU seconds of the server (all its threads); on PostgreSQL plus the `postgres` backends, which work for it. */
  cpuSeconds(): number
  logs(): LogCounts
  /** SIGTERM, then waits for the exit (SIGKILL after `graceMs`); answers the exit code (null: killed by a signal). */
  stop(graceMs?: number): Promise<number | null>
}

export interface MainOptions {
  /** Undefined unsets a variable of the bench's environment. */
  readonly env: Record<string, string | undefined>
  readonly engine: 'sqlite' | 'postgres'
  /** Log messages (`msg`) to count, e.g. the maintenance pass's. */
  readonly watch?: readonly string[]
  readonly startTimeoutMs?: number
}

const LEVEL_NAMES: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' }

/** Starts `node src/main.ts` (this process's node) on 127.0.0.1 and an ephemeral port; resolves once it listens. */
export async function startMain(options: MainOptions): Promise<MainProcess> {
  const child = spawn(process.execPath, [MAIN], {
    cwd: ROOT,
    env: childEnvironment({ ...options.env, HOST: '127.0.0.1', PORT: '0' }),
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: a Ctrl-C in the terminal reaches the parent only, which ends the
    // load first and then stops the server (SIGTERM), rather than the server vanishing mid-run.
    detached: true,
  })
  // Never left behind, however the parent ends.
  const killOnExit = () => child.kill('SIGKILL')
  process.once('exit', killOnExit)
  child.once('exit', () => process.off('exit', killOnExit))
  const pid = child.pid
  if (pid === undefined) throw new Error('src/main.ts did not start')
  const byLevel: Record<string, number> = {}
  const errors: string[] = []
  const warnings: string[] = []
  const watched: Record<string, number> = Object.fromEntries((options.watch ?? []).map((m) => [m, 0]))
  let stderr = ''
  let listening: (url: string) => void = () => {}
  const listeningAt = new Promise<string>((resolve) => (listening = resolve))

  createInterface({ input: child.stdout }).on('line', (line) => {
    // Cheap on the common path: every request logs a line at info.
    const level = Number(/"level":(\d+)/.exec(line)?.[1] ?? Number.NaN)
    const name = LEVEL_NAMES[level] ?? 'unparsed'
    byLevel[name] = (byLevel[name] ?? 0) + 1
    if (level >= ERROR && errors.length < 20) errors.push(line)
    else if (level === WARN && warnings.length < 20) warnings.push(line)
    const message = /"msg":"((?:[^"\\]|\\.)*)"/.exec(line)?.[1]
    if (message !== undefined) {
      if (message in watched) watched[message] = (watched[message] ?? 0) + 1
      const at = /^Server listening at (http:\/\/127\.0\.0\.1:\d+)$/.exec(message)
      if (at?.[1] !== undefined) listening(at[1])
    }
  })
  child.stderr.setEncoding('utf8')
  child.stderr.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-8000)
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))

  const timeoutMs = options.startTimeoutMs ?? 60_000
  let timer: NodeJS.Timeout | undefined
  const url = await Promise.race([
    listeningAt,
    exited.then((code) => {
      throw new Error(`src/main.ts exited before it listened (code ${code})\n${stderr}`)
    }),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`src/main.ts did not listen within ${timeoutMs} ms\n${stderr}`)), timeoutMs)
    }),
  ])
    .catch((error: unknown) => {
      child.kill('SIGKILL')
      throw error
    })
    .finally(() => clearTimeout(timer))

  return {
    pid,
    url,
    cpuSeconds: () => processCpuSeconds(pid) + (options.engine === 'postgres' ? commandCpuSeconds('postgres') : 0),
    logs: () => ({ byLevel: { ...byLevel }, errors: [...errors], warnings: [...warnings], watched: { ...watched } }),
    async stop(graceMs = 30_000) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode
      child.kill('SIGTERM')
      const killer = setTimeout(() => child.kill('SIGKILL'), graceMs)
      const code = await exited
      clearTimeout(killer)
      return code
    },
  }
}
