// The parent's side of a process under test: every server (and the raw argon2 loop) runs in a
// child process of its own, so that the load generator in this process never shares its event
// loop. The child announces itself over IPC (see child-side.ts); its stdout goes to /dev/null
// (log lines are still formatted and written, as in production, just not kept), its stderr is
// kept for diagnostics.
import { fork, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { FromChild, ToChild } from './child-side.ts'
import { processCpuSeconds } from './cpu.ts'

export interface Child<Ready> {
  readonly pid: number
  /** What the child announced when it was ready (a server's URL, for example). */
  readonly ready: Ready
  /** User plus system CPU seconds the child has used so far, all its threads included. */
  cpuSeconds(): number
  /** Sends a request to the child's handler and waits for its answer. */
  request<T>(body: unknown): Promise<T>
  stop(): Promise<void>
}

export interface ChildOptions {
  /** Over the bench's own environment; undefined unsets a variable. */
  readonly env?: Record<string, string | undefined>
  readonly startTimeoutMs?: number
}

/** The bench's own environment with `overrides` over it; undefined unsets a variable. */
export function childEnvironment(overrides: Record<string, string | undefined> = {}): Record<string, string> {
  const merged: Record<string, string | undefined> = { ...process.env, ...overrides }
  return Object.fromEntries(Object.entries(merged).filter((entry): entry is [string, string] => entry[1] !== undefined))
}

/** `script` is relative to bench/ (for example `servers/coffer.ts`). */
export async function startChild<Ready>(script: string, options: ChildOptions = {}): Promise<Child<Ready>> {
  const file = fileURLToPath(new URL(`../${script}`, import.meta.url))
  const child = fork(file, [], {
    env: childEnvironment(options.env),
    // For investigations, e.g. BENCH_CHILD_EXEC_ARGV='--cpu-prof --cpu-prof-dir=/tmp/prof'.
    execArgv: (process.env.BENCH_CHILD_EXEC_ARGV ?? '').split(' ').filter((a) => a !== ''),
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  })
  let stderr = ''
  child.stderr?.setEncoding('utf8')
  child.stderr?.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-8000)
  })
  const ready = await new Promise<Ready>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${script} did not start within ${options.startTimeoutMs ?? 60_000} ms\n${stderr}`))
    }, options.startTimeoutMs ?? 60_000)
    const onMessage = (message: FromChild) => {
      if (message.kind !== 'ready') return
      clearTimeout(timer)
      child.off('exit', onExit)
      child.off('message', onMessage)
      resolve(message.body as Ready)
    }
    const onExit = (code: number | null, signal: string | null) => {
      clearTimeout(timer)
      reject(new Error(`${script} exited before it was ready (code ${code}, signal ${signal})\n${stderr}`))
    }
    child.on('message', onMessage)
    child.once('exit', onExit)
  })
  return wrap(script, child, ready, () => stderr)
}

function wrap<Ready>(script: string, child: ChildProcess, ready: Ready, stderr: () => string): Child<Ready> {
  const pid = child.pid
  if (pid === undefined) throw new Error(`${script} has no pid`)
  let nextId = 1
  const pending = new Map<number, { resolve: (body: unknown) => void; reject: (error: Error) => void }>()
  child.on('message', (message: FromChild) => {
    if (message.kind !== 'reply') return
    const waiter = pending.get(message.id)
    pending.delete(message.id)
    if (message.error !== undefined) waiter?.reject(new Error(`${script}: ${message.error}`))
    else waiter?.resolve(message.body)
  })
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      for (const waiter of pending.values()) waiter.reject(new Error(`${script} exited\n${stderr()}`))
      pending.clear()
      resolve()
    }),
  )
  return {
    pid,
    ready,
    cpuSeconds: () => processCpuSeconds(pid),
    request<T>(body: unknown): Promise<T> {
      const id = nextId++
      const message: ToChild = { kind: 'request', id, body }
      return new Promise<T>((resolve, reject) => {
        pending.set(id, { resolve: resolve as (body: unknown) => void, reject })
        child.send(message)
      })
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
      await exited
      clearTimeout(timer)
    },
  }
}
