// What a run of one of the command-line programs (`coffer`, `coffer-photos`) takes from the
// process around it: its standard streams, its environment and the folder it runs in. Each
// program's main.ts hands over the process's own; the tests run commands in-process with
// streams of their own (test/support/cli.ts, test/support/photos-cli.ts), several at once.

/** An output stream as a command writes to it: text, and whether a terminal shows it. */
export interface TextStream extends NodeJS.WritableStream {
  readonly isTTY?: boolean
  /** A terminal's width in characters. */
  readonly columns?: number
}

/** Standard input: a terminal or not; destroyed once read, so that it keeps no process alive. */
export interface StdinStream extends NodeJS.ReadableStream {
  readonly isTTY?: boolean
  destroy?(): void
}

export interface CommandIo {
  readonly stdin: StdinStream
  readonly stdout: TextStream
  readonly stderr: TextStream
  readonly env: Readonly<Record<string, string | undefined>>
  /** Where relative paths on the command line start from. */
  readonly cwd: string
}

/** The process's own streams, environment and folder. */
export function processIo(): CommandIo {
  return { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() }
}
