// `coffer-photos`: back up a folder of photos to a Coffer server, end-to-end encrypted, and get
// them back (docs/photos.md). Each command is a file beside this one; this reads the command
// line, runs one, and turns what went wrong into one sentence and an exit code. Loaded by main.ts.
import { parseArgs } from 'node:util'
import { albums, ls } from './albums.ts'
import { backup } from './backup.ts'
import { device } from './device.ts'
import { exportCommand } from './export.ts'
import { EXIT, UsageError, type Command, type ExitCode } from './command.ts'
import { devices } from './devices.ts'
import { replace, rm } from './edit.ts'
import { freeUp } from './free-up.ts'
import { join } from './join.ts'
import { login } from './login.ts'
import { deleteAccount } from './delete-account.ts'
import { logout } from './logout.ts'
import { Home } from './home.ts'
import { consoleOutput, describeError, errorLine, sessionEnded } from './output.ts'
import { recover } from './recover.ts'
import { restore } from './restore.ts'
import { revokeAll } from './revoke-all.ts'
import { revoke, sessions } from './sessions.ts'
import { setup } from './setup.ts'
import { status } from './status.ts'
import { verify } from './verify.ts'

const COMMANDS: readonly Command[] = [login, setup, device, join, recover, status, backup, albums, ls, verify, restore, rm, replace, freeUp, devices, sessions, revoke, revokeAll, exportCommand, logout, deleteAccount]

const GLOBAL_OPTIONS = { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } as const

function overview(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length), 8)
  return [
    'usage: coffer-photos <command> [arguments] [--json] [--help]',
    '',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Run `coffer-photos <command> --help` for a command\'s arguments and options.',
    'The account, keys and local state live in $COFFER_PHOTOS_HOME (default $XDG_CONFIG_HOME/coffer-photos).',
    '--json prints one JSON object per line on stdout, for scripts.',
  ].join('\n')
}

/** The server this config folder is logged in to, to name in the sentence after a session ended; null when the folder does not say. */
function savedServer(): string | null {
  try {
    return new Home().readAccount()?.server ?? null
  } catch {
    return null
  }
}

/**
 * parseArgs on `args`, where each argument `literal` accepts is read as it is (a positional, or
 * an option's value): it goes through the parser as a placeholder that cannot look like an
 * option, and is put back in the result.
 */
function parseCommandLine(command: Command, args: readonly string[]): ReturnType<typeof parseArgs> {
  const literals = new Map<string, string>()
  const shielded = args.map((arg) => {
    if (!arg.startsWith('-') || command.literal?.(arg) !== true) return arg
    const placeholder = `\u0000literal${literals.size}`
    literals.set(placeholder, arg)
    return placeholder
  })
  const parsed = parseArgs({ args: shielded, allowPositionals: true, strict: true, options: { ...GLOBAL_OPTIONS, ...command.options } })
  const restore = <T,>(value: T): T => (typeof value === 'string' ? ((literals.get(value) as T | undefined) ?? value) : value)
  return { ...parsed, positionals: parsed.positionals.map(restore), values: Object.fromEntries(Object.entries(parsed.values).map(([key, value]) => [key, restore(value)])) }
}

async function main(args: string[]): Promise<ExitCode> {
  const [name, ...rest] = args
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${overview()}\n`)
    return name === undefined ? EXIT.usage : EXIT.ok
  }
  const command = COMMANDS.find((c) => c.name === name)
  if (command === undefined) {
    process.stderr.write(`coffer-photos: no command "${name}"\n\n${overview()}\n`)
    return EXIT.usage
  }
  let parsed: ReturnType<typeof parseArgs>
  try {
    parsed = parseCommandLine(command, rest)
  } catch (error) {
    process.stderr.write(`coffer-photos ${command.name}: ${(error as Error).message}\n\n${command.usage}\n`)
    return EXIT.usage
  }
  if (parsed.values.help === true) {
    process.stdout.write(`${command.usage}\n`)
    return EXIT.ok
  }
  const out = consoleOutput(parsed.values.json === true)
  const stop = new AbortController()
  const interrupt = (): void => {
    if (stop.signal.aborted) process.exit(EXIT.interrupted) // a second Ctrl-C: leave now
    out.warn('coffer-photos: stopping after the files in flight; press Ctrl-C again to leave at once (the next run continues either way)')
    stop.abort()
  }
  process.on('SIGINT', interrupt)
  process.on('SIGTERM', interrupt)
  try {
    const code = await command.run({ positionals: parsed.positionals, values: parsed.values as Record<string, string | boolean | undefined>, out, signal: stop.signal })
    return stop.signal.aborted && code === EXIT.ok ? EXIT.interrupted : code
  } catch (error) {
    const described = describeError(error, sessionEnded(error) ? savedServer() : null)
    process.stderr.write(`${errorLine(described)}\n`)
    if (error instanceof UsageError) process.stderr.write(`\n${command.usage}\n`)
    out.event('error', { message: described.message, code: described.code, exit: described.exit })
    return described.exit
  }
}

// A reader that stops early (`coffer-photos ls ... | head`) is not an error of ours.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? EXIT.ok)
  throw error
})
process.exitCode = await main(process.argv.slice(2))
