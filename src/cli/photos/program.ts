// `coffer-photos`: back up a folder of photos to a Coffer server, end-to-end encrypted, and get
// them back (docs/photos.md). Each command is a file beside this one, listed in commands.ts; this
// reads the command line, runs one, and turns what went wrong into one sentence and an exit code.
// It touches no process-wide state: main.ts runs it on the process's streams and signals, and the
// tests run it in-process on streams of their own.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { localZone, zoneOffset } from '../../client/taken.ts'
import type { CommandIo } from '../io.ts'
import { EXIT, FFMPEG_SWITCH, UsageError, type Command, type ExitCode } from './command.ts'
import { COMMANDS } from './commands.ts'
import { Home, homeFolder } from './home.ts'
import { consoleOutput, describeError, errorLine, sessionEnded } from './output.ts'
import { Prompts } from './prompts.ts'

const GLOBAL_OPTIONS = { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } as const

/** The version of the package this program is part of: what `coffer-photos --version` prints. */
function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version
}

function overview(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length), 8)
  return [
    'usage: coffer-photos <command> [arguments] [--json] [--help]',
    '       coffer-photos --version',
    '',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    "Run `coffer-photos <command> --help` for a command's arguments and options.",
    'The account, keys and local state live in $COFFER_PHOTOS_HOME (default $XDG_CONFIG_HOME/coffer-photos).',
    '--json prints one JSON object per line on stdout, for scripts.',
  ].join('\n')
}

/** The server the config folder `home` is logged in to, to name in the sentence after a session ended; null when the folder does not say. */
function savedServer(home: Home): string | null {
  try {
    return home.readAccount()?.server ?? null
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
  const restore = <T>(value: T): T => (typeof value === 'string' ? ((literals.get(value) as T | undefined) ?? value) : value)
  return {
    ...parsed,
    positionals: parsed.positionals.map(restore),
    values: Object.fromEntries(Object.entries(parsed.values).map(([key, value]) => [key, restore(value)])),
  }
}

/** A run of coffer-photos under way. */
export interface PhotosRun {
  /** The exit code, once the command is done. */
  readonly exit: Promise<ExitCode>
  /**
   * Ctrl-C: the command stops after the work in flight (the next run continues). False when it
   * was already stopping: then the caller leaves at once (main.ts exits with 130).
   */
  interrupt(): boolean
}

/** Starts `coffer-photos <args>` on `io`. */
export function runPhotos(args: readonly string[], io: CommandIo): PhotosRun {
  const stop = new AbortController()
  return {
    exit: run(args, io, stop.signal),
    interrupt() {
      if (stop.signal.aborted) return false
      io.stderr.write('coffer-photos: stopping after the files in flight; press Ctrl-C again to leave at once (the next run continues either way)\n')
      stop.abort()
      return true
    },
  }
}

async function run(args: readonly string[], io: CommandIo, signal: AbortSignal): Promise<ExitCode> {
  const [name, ...rest] = args
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(`${overview()}\n`)
    return name === undefined ? EXIT.usage : EXIT.ok
  }
  if (name === '--version' || name === '-V') {
    io.stdout.write(`coffer-photos ${packageVersion()}\n`)
    return EXIT.ok
  }
  const listed = COMMANDS.find((c) => c.name === name)
  if (listed === undefined) {
    io.stderr.write(`coffer-photos: no command "${name}"\n\n${overview()}\n`)
    return EXIT.usage
  }
  const command = await listed.load()
  let parsed: ReturnType<typeof parseArgs>
  try {
    parsed = parseCommandLine(command, rest)
  } catch (error) {
    io.stderr.write(`coffer-photos ${listed.name}: ${(error as Error).message}\n\n${command.usage}\n`)
    return EXIT.usage
  }
  if (parsed.values.help === true) {
    io.stdout.write(`${command.usage}\n`)
    return EXIT.ok
  }
  const out = consoleOutput(parsed.values.json === true, io)
  const home = new Home(homeFolder(io.env, io.cwd))
  try {
    const code = await command.run({
      positionals: parsed.positionals,
      values: parsed.values as Record<string, string | boolean | string[] | undefined>,
      out,
      signal,
      home,
      prompts: new Prompts(io),
      resolvePath: (given) => path.resolve(io.cwd, given),
      zone: (io.env.TZ ? zoneOffset(io.env.TZ) : null) ?? localZone,
      ffmpeg: io.env[FFMPEG_SWITCH] !== 'off',
    })
    return signal.aborted && code === EXIT.ok ? EXIT.interrupted : code
  } catch (error) {
    const described = describeError(error, sessionEnded(error) ? savedServer(home) : null)
    io.stderr.write(`${errorLine(described)}\n`)
    if (error instanceof UsageError) io.stderr.write(`\n${command.usage}\n`)
    out.event('error', { message: described.message, code: described.code, exit: described.exit })
    return described.exit
  }
}
