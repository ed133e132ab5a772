// What `device add` and `join` share (decision 0019): asking the person whether the two screens
// show the same short authentication string, the answers read from stdin when there is no
// terminal, and the sentences for a channel that is gone or an exchange that stopped.
import { createInterface, type Interface } from 'node:readline'
import { CofferProblem } from '../../sdk/client.ts'
import { EnrollmentError } from '../../client/enrollment.ts'
import { Interrupted, SetupNeeded, UsageError } from './command.ts'
import type { Output } from './output.ts'
import { confirmed, interactive } from './prompts.ts'

export const EXPIRED = 'the pairing code is wrong or has expired; run `coffer-photos device add` again'

/**
 * Stdin read line by line, for when there is no terminal: the password first (with
 * --password-stdin), then one answer per question. Unlike login's --password-stdin, which reads
 * stdin to its end, so that a script can answer after it has seen the code.
 */
export class StdinLines {
  readonly #reader: Interface
  readonly #lines: string[] = []
  #ended = false
  #waiting: ((line: string | null) => void) | null = null

  constructor() {
    this.#reader = createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false })
    this.#reader.on('line', (line) => {
      const waiting = this.#waiting
      this.#waiting = null
      if (waiting) waiting(line)
      else this.#lines.push(line)
    })
    this.#reader.on('close', () => {
      this.#ended = true
      this.#waiting?.(null)
      this.#waiting = null
    })
  }

  /** The next line, or null at the end of stdin. */
  next(signal: AbortSignal): Promise<string | null> {
    const line = this.#lines.shift()
    if (line !== undefined) return Promise.resolve(line)
    if (this.#ended) return Promise.resolve(null)
    return new Promise((resolve, reject) => {
      const stop = (): void => {
        this.#waiting = null
        reject(new Interrupted('stopped while waiting for an answer on stdin'))
      }
      signal.addEventListener('abort', stop, { once: true })
      this.#waiting = (got) => {
        signal.removeEventListener('abort', stop)
        resolve(got)
      }
    })
  }

  /** The password of --password-stdin: the first line. */
  async password(signal: AbortSignal): Promise<string> {
    const line = await this.next(signal)
    if (line === null || line === '') throw new UsageError('--password-stdin: the first line of stdin held no password')
    return line
  }

  /** Stops reading, so that stdin no longer keeps the process alive. */
  close(): void {
    this.#reader.close()
    process.stdin.destroy()
  }
}

/**
 * Shows the SAS and asks whether the other screen shows the same. On a terminal: a yes/no
 * prompt (no by default). Without one: the `sas` event (with --json) or the lines above, then a
 * line from stdin; only "yes" or "y" (any case) means yes, anything else no.
 */
export async function sameCodeOnBothScreens(sas: string, other: string, out: Output, lines: StdinLines | null, signal: AbortSignal, fields: Record<string, unknown> = {}): Promise<boolean> {
  out.say('')
  out.say(`Check that ${other} shows the same code:`)
  out.say('')
  out.say(`    ${sas}`)
  out.say('')
  out.event('sas', { sas, ...fields })
  if (lines === null) return confirmed(false, { message: `Does ${other} show ${sas}?`, signal })
  if (out.json) out.warn(`coffer-photos: does ${other} show ${sas}? write yes or no on stdin`)
  else out.say('Does it? Write yes or no:')
  const answer = await lines.next(signal)
  if (answer === null) throw new UsageError('stdin ended before the answer: write yes or no on stdin after the code is shown (there is no terminal to ask on)')
  return /^\s*(yes|y)\s*$/i.test(answer)
}

/** The stdin reader for a command that may need one: none on a terminal (the prompts read it). */
export function stdinLinesUnlessTerminal(): StdinLines | null {
  return interactive() ? null : new StdinLines()
}

/** The sentence for a stopped exchange: a channel that is gone is "wrong or expired"; Ctrl-C is an interruption. */
export function pairingError(error: unknown, signal: AbortSignal, expired: string, after: string): unknown {
  if (error instanceof CofferProblem && error.code === 'error.enroll.channel_not_found') return new SetupNeeded(expired)
  if (error instanceof EnrollmentError) {
    if (error.stop === 'expired') return new SetupNeeded(expired)
    if (error.stop === 'stopped' && signal.aborted) return new Interrupted(`stopped${after}`)
    return new Error(`${error.message}${after}`)
  }
  return error
}
