// What `coffer-photos` prints. For people: results on stdout, progress and warnings on stderr.
// With --json: one JSON object per line on stdout (`{"event": ..., ...}`), nothing else there,
// so that a script can read it line by line; errors still go to stderr as text as well.
import { AlbumTamperedError } from '../../client/tampering.ts'
import { ProtocolUnsupportedError } from '../../client/protocol.ts'
import { CofferProblem } from '../../sdk/client.ts'
import { CofferInputError } from '../../sdk/input-error.ts'
import type { CommandIo, TextStream } from '../io.ts'
import { EXIT, Interrupted, Refused, SetupNeeded, UsageError, type Command, type ExitCode, type Invocation } from './command.ts'
import { ConfigFileError } from './home.ts'

export interface Output {
  readonly json: boolean
  /** A line of the human report (dropped with --json). */
  say(text: string): void
  /** A machine-readable event (a JSON line with --json; dropped otherwise). */
  event(name: string, fields: Record<string, unknown>): void
  /** A warning or note for the person, on stderr in both modes. */
  warn(text: string): void
  /** Where live progress is drawn (stderr): rewritten in place when it is a terminal. */
  readonly progress: TextStream
  /**
   * Shows `line` (a progress line on a terminal) until the answered function is called: until
   * then, each line said or warned (a retry of the client library's too) clears it first and
   * has it drawn again after, so that it lands on a line of its own.
   */
  live(line: LiveLine): () => void
}

/** A line drawn in place at the bottom of a terminal. */
export interface LiveLine {
  /** Clears it; answers whether anything was shown. */
  clear(): boolean
  /** Draws it again, as it was. */
  redraw(): void
}

export function consoleOutput(json: boolean, io: Pick<CommandIo, 'stdout' | 'stderr'>): Output {
  let shown: LiveLine | null = null
  const above = (write: () => void): void => {
    const cleared = shown?.clear() === true
    write()
    if (cleared) shown?.redraw()
  }
  return {
    json,
    say: (text) => {
      if (!json) above(() => io.stdout.write(`${text}\n`))
    },
    event: (name, fields) => {
      if (json) io.stdout.write(`${JSON.stringify({ event: name, ...fields })}\n`)
    },
    warn: (text) => above(() => io.stderr.write(`${text}\n`)),
    progress: io.stderr,
    live(line) {
      shown = line
      return () => {
        if (shown === line) shown = null
      }
    },
  }
}

/**
 * How much a command that moves files (backup, restore) says: `quiet`, only its last line (the
 * summary) and what went wrong; `verbose`, also one line per file; `normal`, the opening line,
 * the progress, the summary and what went wrong.
 */
export type Verbosity = 'quiet' | 'normal' | 'verbose'

export const VERBOSITY_OPTIONS = { quiet: { type: 'boolean', short: 'q' }, verbose: { type: 'boolean', short: 'v' } } as const satisfies Command['options']

/** --quiet, --verbose, or neither. */
export function verbosityOf(values: Invocation['values']): Verbosity {
  if (values.quiet === true && values.verbose === true) throw new UsageError('--quiet and --verbose do not go together')
  return values.quiet === true ? 'quiet' : values.verbose === true ? 'verbose' : 'normal'
}

/** An error as one sentence a person understands, the stable code when there is one, and the exit code. */
export interface DescribedError {
  readonly message: string
  readonly code: string | null
  readonly exit: ExitCode
}

/** The 401s that refuse the session itself (its token is gone or spent): log in again. The others refuse what was sent (a wrong password or code). */
const SESSION_ENDED = new Set(['error.auth.unauthenticated', 'error.auth.session_expired'])

/** True when the server refused the session itself: it was revoked (revoke, revoke-all, another device) or it expired. */
export function sessionEnded(error: unknown): boolean {
  return error instanceof CofferProblem && error.status === 401 && SESSION_ENDED.has(error.code)
}

/** What a device whose session ended is told, whichever command found out. The keys stay: signing in again is all it takes. */
export function signedOutSentence(server: string | null): string {
  return `this device was signed out (its session was revoked or expired); run \`coffer-photos login ${server ?? '<server-url>'}\` to sign in again`
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
])

function networkCause(error: unknown): string | null {
  for (let at: unknown = error, depth = 0; at instanceof Error && depth < 5; at = at.cause, depth++) {
    const code = (at as { code?: unknown }).code
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return code
  }
  return error instanceof TypeError && error.message === 'fetch failed' ? 'fetch failed' : null
}

/** `server`, when known (the config folder's), is named in what to run after a session ended. */
export function describeError(error: unknown, server: string | null = null): DescribedError {
  if (error instanceof UsageError) return { message: error.message, code: null, exit: EXIT.usage }
  if (error instanceof SetupNeeded) return { message: error.message, code: null, exit: EXIT.setup }
  if (error instanceof Interrupted) return { message: error.message, code: null, exit: EXIT.interrupted }
  if (error instanceof Refused) return { message: error.message, code: null, exit: EXIT.refused }
  if (error instanceof ConfigFileError) return { message: error.message, code: null, exit: EXIT.local }
  if (error instanceof AlbumTamperedError)
    return {
      message: `the server is not trustworthy: ${error.message}; nothing of this album is freed until it serves the album as written`,
      code: null,
      exit: EXIT.untrusted,
    }
  if (error instanceof CofferProblem) {
    const detail = typeof error.problem.detail === 'string' && error.problem.detail.length > 0 ? error.problem.detail : error.problem.title
    const sentence = `the server refused: ${detail.replace(/\.$/, '')}`
    if (sessionEnded(error)) return { message: signedOutSentence(server), code: error.code, exit: EXIT.setup }
    if (error.status >= 500) return { message: `the server failed: ${detail.replace(/\.$/, '')}; try again later`, code: error.code, exit: EXIT.unreachable }
    return { message: sentence, code: error.code, exit: EXIT.refused }
  }
  const network = networkCause(error)
  if (network !== null)
    return { message: `the server could not be reached (${network}); check the address and your connection`, code: null, exit: EXIT.unreachable }
  if (error instanceof CofferInputError || error instanceof ProtocolUnsupportedError) return { message: error.message, code: null, exit: EXIT.refused }
  const code = (error as { code?: unknown })?.code
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return { message: (error as Error).message, code: null, exit: EXIT.local }
  return { message: error instanceof Error ? error.message : String(error), code: null, exit: EXIT.failed }
}

export function errorLine(described: DescribedError): string {
  return `coffer-photos: ${described.message}${described.code === null ? '' : ` [${described.code}]`}`
}
