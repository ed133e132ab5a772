// The shape of a `coffer-photos` command and the exit codes every command shares
// (docs/photos.md, "Exit codes"). Each command lives in its own file beside this one and is
// listed in program.ts, which loads a command's file only when that command runs.
import type { ParseArgsConfig } from 'node:util'
import type { ZoneOffset } from '../../client/taken.ts'
import type { Home } from './home.ts'
import type { Output } from './output.ts'
import type { Prompts } from './prompts.ts'

export const EXIT = {
  ok: 0,
  /** Not everything was done: verify found something not durable or not verified, some files failed, or an unexpected error. */
  failed: 1,
  /** The command line is wrong (unknown command or option, missing argument). */
  usage: 2,
  /** Not logged in, not set up, or the session ended: run `login` / `setup`. */
  setup: 3,
  /** The server refused (a problem answer that retrying does not fix), or a recovery phrase does not open the escrow. */
  refused: 4,
  /** The server could not be reached, even after retries. */
  unreachable: 5,
  /** A local problem: a file or folder could not be read or written. */
  local: 6,
  /** The server is not trustworthy: it served an album's history other than the one this account's devices wrote and saw. */
  untrusted: 7,
  /** Interrupted (Ctrl-C); what was done is kept and the next run continues. */
  interrupted: 130,
} as const

export type ExitCode = (typeof EXIT)[keyof typeof EXIT]

export interface Invocation {
  readonly positionals: readonly string[]
  /** Each option's value: a string, true for a flag, every value given of a `multiple` option. */
  readonly values: Readonly<Record<string, string | boolean | readonly string[] | undefined>>
  readonly out: Output
  /** Aborted on Ctrl-C (SIGINT) or SIGTERM: stop starting new work and return. */
  readonly signal: AbortSignal
  /** The config folder this run uses (home.ts homeFolder, from its environment). */
  readonly home: Home
  /** Questions to the person, and what stdin holds. */
  readonly prompts: Prompts
  /** A path given on the command line, made absolute from the folder the command runs in. */
  readonly resolvePath: (given: string) => string
  /**
   * The person's time zone, which times without a place of their own are shown in (a date taken
   * from a modification or upload time): TZ of the run's environment when it names a zone, else
   * this machine's.
   */
  readonly zone: ZoneOffset
  /**
   * Whether videos are read with ffprobe and ffmpeg when they are on the PATH (a poster frame, the
   * length): yes unless FFMPEG_SWITCH (COFFER_FFMPEG) is "off" in the run's environment.
   */
  readonly ffmpeg: boolean
}

/** The environment variable that, set to "off", backs videos up without reading them with ffmpeg (no poster, no length). */
export const FFMPEG_SWITCH = 'COFFER_FFMPEG'

export interface Command {
  /** The command's `--help`: its arguments and options, one per line. */
  readonly usage: string
  readonly options: NonNullable<ParseArgsConfig['options']>
  /**
   * Arguments the command takes as they are even when they start with "-", which the option
   * parser would otherwise refuse as an unknown option: a pairing code is base64url, and one in
   * 32 begins with "-".
   */
  readonly literal?: (arg: string) => boolean
  run(invocation: Invocation): Promise<ExitCode>
}

/** The command line does not fit the command: shown with the command's usage, exit 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError'
}

/** Something the person must do first (log in, set up): shown as is, exit 3. */
export class SetupNeeded extends Error {
  override readonly name = 'SetupNeeded'
}

/** What the person gave is refused, though the command line is right (a recovery phrase that does not open the escrow): shown as is, exit 4. */
export class Refused extends Error {
  override readonly name = 'Refused'
}

/** The person stopped a prompt (Ctrl-C) or said no at one: nothing more is done, exit 130. */
export class Interrupted extends Error {
  override readonly name = 'Interrupted'
}
