// The server as a separate process (`node src/main.ts`), the way an operator runs it, on the
// test's own database (see database.ts) and data folder.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { freshDatabase, type TestDatabase } from './database.ts'

export const ROOT = path.resolve(import.meta.dirname, '../..')
const MAIN = path.join(ROOT, 'src/main.ts')

export interface Workspace {
  readonly directory: string
  readonly database: TestDatabase
  /** The server's environment: DATA_DIR, DATABASE_URL, an ephemeral port, fast password hashing. */
  readonly env: Record<string, string>
  remove(): Promise<void>
}

export async function workspace(prefix: string): Promise<Workspace> {
  const directory = await mkdtemp(path.join(tmpdir(), `coffer-${prefix}-`))
  const database = await freshDatabase(directory)
  const target = database.target
  // The server reads DATABASE_URL only; a PostgreSQL test schema rides in the URL's options.
  const databaseUrl =
    target.engine === 'postgres'
      ? `${target.url}${target.url.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${target.searchPath ?? 'public'}`)}`
      : `sqlite:${target.file}`
  return {
    directory,
    database,
    env: { DATA_DIR: directory, DATABASE_URL: databaseUrl, PORT: '0', PASSWORD_HASH_MEMORY_KIB: '64', PASSWORD_HASH_ITERATIONS: '1' },
    async remove() {
      await database.drop()
      await rm(directory, { recursive: true, force: true })
    },
  }
}

export interface Started {
  readonly child: ChildProcess
  /** Every line of stdout and stderr so far. */
  readonly lines: string[]
  readonly exited: Promise<number | null>
  /** SIGKILL if still running, then wait for the exit. */
  kill(): Promise<void>
}

/**
 * Node's compile cache for the processes the tests start (unless a test sets its own): each
 * loads the server's hundreds of modules, and compiling them again every time took about a
 * third of a start's CPU.
 */
const COMPILE_CACHE = path.join(tmpdir(), 'coffer-test-compile-cache')

export function startProcess(env: Record<string, string>, script = MAIN, args: readonly string[] = []): Started {
  const child = spawn(process.execPath, [script, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', NODE_COMPILE_CACHE: COMPILE_CACHE, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const lines: string[] = []
  for (const stream of [child.stdout, child.stderr]) createInterface({ input: stream }).on('line', (line) => lines.push(line))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return {
    child,
    lines,
    exited,
    async kill() {
      if (child.exitCode === null) child.kill('SIGKILL')
      await exited
    },
  }
}

export async function waitFor(lines: readonly string[], pattern: RegExp, timeoutMs = 40_000): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    for (const line of lines) {
      const match = pattern.exec(line)
      if (match) return match
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}; output:\n${lines.join('\n')}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** Starts the server and waits until it listens; `url` is its address. */
export async function serveProcess(env: Record<string, string>): Promise<Started & { url: string }> {
  const started = startProcess(env)
  const match = await waitFor(started.lines, /Server listening at (http:\/\/127\.0\.0\.1:\d+)/)
  return { ...started, url: match[1] ?? '' }
}
