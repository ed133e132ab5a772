// `coffer-photos` run as a person or a script runs it. Most tests run its commands in-process
// (runPhotos in src/cli/photos/program.ts, the code the binary runs) on streams of the test's own:
// its config folder (COFFER_PHOTOS_HOME), answers on stdin, and what it printed, at no cost of a
// process start. What only a process shows (a signal, a SIGKILL mid-write, a terminal, the
// restart with its memory settings, the compile cache) runs the real binary: spawnPhotos, onTerminal.
import { spawn, type ChildProcess } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { stripVTControlCharacters } from 'node:util'
import { PassThrough } from 'node:stream'
import { expect } from 'vitest'
import type { Library } from '../../src/client/albums.ts'
import { Home } from '../../src/cli/photos/home.ts'
import { runPhotos } from '../../src/cli/photos/program.ts'
import { fromBase64 } from '../../src/sdk/bytes.ts'
import type { CofferClient } from '../../src/sdk/client.ts'
import { IdentityKey } from '../../src/sdk/identity.ts'
import { PASSWORD } from './actors.ts'
import { ROOT } from './process.ts'
import { collected } from './streams.ts'

export const PHOTOS_CLI = path.join(ROOT, 'src/cli/photos/main.ts')

export interface PhotosRun {
  readonly code: number | null
  /** The signal that ended the process (spawnPhotos); null when it exited, and always in-process. */
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

export interface PhotosOptions {
  /** Written to stdin, then stdin is closed (e.g. the password for --password-stdin); with keepStdinOpen, stdin stays open after it. */
  readonly stdin?: string
  /** Leaves stdin open, for answers written later with write (and closed with endStdin). */
  readonly keepStdinOpen?: boolean
  /** Environment variables besides COFFER_PHOTOS_HOME. */
  readonly env?: Record<string, string>
  /** The folder it runs in (default: the checkout's root). */
  readonly cwd?: string
  /** Flags for node itself, before the program (spawnPhotos). */
  readonly nodeArgs?: readonly string[]
}

/** A run under way, in-process or in a process of its own. */
export interface StartedPhotos {
  /** stdout so far (e.g. to wait for a --json event before stopping it). */
  stdout(): string
  /** stderr so far. */
  stderr(): string
  readonly done: Promise<PhotosRun>
  /** True once it has ended. */
  ended(): boolean
  /** Writes to its stdin (keepStdinOpen). */
  write(text: string): void
  /** Closes its stdin. */
  endStdin(): void
}

/** A run in-process: Ctrl-C is interrupt(), what SIGINT and SIGTERM do to the binary. */
export interface PhotosInProcess extends StartedPhotos {
  interrupt(): void
}

/** The real binary in a process of its own. */
export interface PhotosProcess extends StartedPhotos {
  readonly child: ChildProcess
}

/** Starts `coffer-photos <args>` in-process with COFFER_PHOTOS_HOME = `home`. */
export function startPhotos(home: string, args: readonly string[], options: PhotosOptions = {}): PhotosInProcess {
  const stdin = new PassThrough()
  const stdout = collected()
  const stderr = collected()
  if (options.stdin !== undefined) stdin.write(options.stdin)
  if (options.keepStdinOpen !== true) stdin.end()
  const run = runPhotos(args, {
    stdin,
    stdout: stdout.stream,
    stderr: stderr.stream,
    env: { COFFER_PHOTOS_HOME: home, ...options.env },
    cwd: options.cwd ?? ROOT,
  })
  let ended = false
  const done = run.exit.then((code) => {
    ended = true
    stdin.destroy() // as a process's stdin goes with it
    return { code, signal: null, stdout: stdout.text(), stderr: stderr.text() }
  })
  return {
    stdout: stdout.text,
    stderr: stderr.text,
    done,
    ended: () => ended,
    write: (text) => void (stdin.writable && stdin.write(text)),
    endStdin: () => void stdin.end(),
    interrupt: () => void run.interrupt(),
  }
}

/** Runs `coffer-photos <args>` in-process to its end. */
export function photos(home: string, args: readonly string[], options: PhotosOptions = {}): Promise<PhotosRun> {
  return startPhotos(home, args, options).done
}

/** Starts the real binary, `node src/cli/photos/main.ts <args>`, with COFFER_PHOTOS_HOME = `home`. */
export function spawnPhotos(home: string, args: readonly string[], options: PhotosOptions = {}): PhotosProcess {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), PHOTOS_CLI, ...args], {
    cwd: options.cwd ?? ROOT,
    env: { PATH: process.env.PATH ?? '', COFFER_PHOTOS_HOME: home, ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')))
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
  child.stdin!.on('error', () => {}) // it may have exited before a late answer
  if (options.keepStdinOpen === true) {
    if (options.stdin !== undefined) child.stdin!.write(options.stdin)
  } else child.stdin!.end(options.stdin ?? '')
  const done = new Promise<PhotosRun>((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }))
  })
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    done,
    ended: () => child.exitCode !== null || child.signalCode !== null,
    write: (text) => void child.stdin!.write(text),
    endStdin: () => void child.stdin!.end(),
  }
}

/** The --json lines of a run, parsed. */
export function events(run: Pick<PhotosRun, 'stdout'>): Array<Record<string, unknown> & { event: string }> {
  return run.stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown> & { event: string })
}

/** A run's --json `summary` event. */
export const summaryOf = (run: Pick<PhotosRun, 'stdout'>): Record<string, unknown> => events(run).find((e) => e.event === 'summary')!

/** `ls <album> --json` in `home` (it must succeed): its files by name. */
export async function listedFiles(home: string, album: string, options: PhotosOptions = {}): Promise<Map<string, Record<string, unknown>>> {
  const run = await photos(home, ['ls', album, '--json'], options)
  expectOk(run)
  return new Map(
    events(run)
      .filter((e) => e.event === 'file')
      .map((e) => [e.name as string, e]),
  )
}

/** Waits until `run` printed the --json event `name`; fails with its output when it exits first or `timeoutMs` passes. */
export async function waitForEvent(run: StartedPhotos, name: string, timeoutMs = 60_000): Promise<Record<string, unknown>> {
  const until = Date.now() + timeoutMs
  for (;;) {
    const stdout = run.stdout()
    const found = events({ stdout: stdout.slice(0, stdout.lastIndexOf('\n') + 1) }).find((e) => e.event === name) // whole lines only
    if (found) return found
    if (run.ended() || Date.now() > until) throw new Error(`no "${name}" event; stdout:\n${run.stdout()}\nstderr:\n${run.stderr()}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

/**
 * A new device in `home`, joined (`join` there, signing in to `server` as `email`) with a pairing
 * code from `device add` on the device in `from`; both say yes to the same code. Both runs, each ok.
 */
export async function pairedDevice(
  from: string,
  home: string,
  server: string,
  email: string,
  password: string,
): Promise<{ added: PhotosRun; joined: PhotosRun }> {
  const add = startPhotos(from, ['device', 'add', '--json'], { keepStdinOpen: true })
  const code = (await waitForEvent(add, 'pairing_code')).pairing_code as string
  const join = startPhotos(home, ['join', server, code, '--email', email, '--password-stdin', '--device-name', 'Joined', '--json'], {
    stdin: `${password}\n`,
    keepStdinOpen: true,
  })
  await Promise.all([waitForEvent(add, 'sas'), waitForEvent(join, 'sas')])
  for (const run of [join, add]) {
    run.write('yes\n')
    run.endStdin()
  }
  const [added, joined] = await Promise.all([add.done, join.done])
  expectOk(added)
  expectOk(joined)
  return { added, joined }
}

/** A JSON file coffer-photos wrote in the config folder `home`. */
export async function readJson<T = Record<string, string>>(home: string, name: string): Promise<T> {
  return JSON.parse(await readFile(path.join(home, name), 'utf8')) as T
}

/** The one line a failed command writes to stderr (the usage that may follow a usage error aside). */
export const errorLineOf = (run: PhotosRun): string => run.stderr.split('\n')[0] ?? ''

/** Expects exit 0, showing what the command printed when it was not. */
export function expectOk(run: Pick<PhotosRun, 'code' | 'stdout' | 'stderr'>): void {
  expect(run.code, `stdout:\n${run.stdout}\nstderr:\n${run.stderr}`).toBe(0)
}

/**
 * coffer-photos on a terminal of its own (util-linux's `script` gives it a pseudo-terminal; Debian:
 * bsdutils, essential): what it drew so far, keys to type, and its end.
 */
export function onTerminal(home: string, args: readonly string[]) {
  const command = [process.execPath, PHOTOS_CLI, ...args].map((word) => `'${word.replaceAll("'", "'\\''")}'`).join(' ')
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', COFFER_PHOTOS_HOME: home, TERM: 'xterm' },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let screen = ''
  child.stdout.on('data', (chunk: Buffer) => (screen += chunk.toString('utf8')))
  child.stderr.on('data', (chunk: Buffer) => (screen += chunk.toString('utf8')))
  const done = new Promise<number | null>((resolve) => child.on('close', resolve))
  /** The screen's text without its escape sequences. */
  const text = (): string => stripVTControlCharacters(screen)
  return {
    text,
    done,
    type: (keys: string) => child.stdin.write(keys),
    /** Waits until the screen, from `from` on, shows `pattern`; answers where it ends. */
    async waitFor(pattern: RegExp, from = 0): Promise<number> {
      try {
        await expect.poll(() => text().slice(from), { timeout: 30_000, interval: 50 }).toMatch(pattern)
      } catch (error) {
        throw new Error(`the terminal did not show ${pattern}; it shows:\n${text()}`, { cause: error })
      }
      const match = pattern.exec(text().slice(from))!
      return from + match.index + match[0].length
    },
  }
}

/** The account of the config folder `home` as a test reads it: its keys, and `client` logged in as `email` (a session of the test's own). */
export async function accountLibrary(home: string, client: CofferClient, email: string): Promise<Library> {
  const keys = new Home(home).readKeys()!
  await client.login(email, PASSWORD)
  const identity = IdentityKey.fromSeeds(fromBase64(keys.identity_seeds))
  const { user_id: userId } = await client.getProfile()
  return {
    client,
    identity,
    identityPublicKey: identity.publicKey,
    userId,
    deviceId: new Home(home).readAccount()!.device_id,
    masterKey: fromBase64(keys.master_key),
  }
}
