// Stdin read line by line, for `device add` and `join` when no terminal is there (pairing.ts).
import { createInterface, type Interface } from 'node:readline'
import type { StdinStream } from '../io.ts'
import { Interrupted, UsageError } from './command.ts'

/**
 * Stdin read line by line, for when there is no terminal: the password first (with
 * --password-stdin), then one answer per question. Unlike login's --password-stdin, which reads
 * stdin to its end, so that a script can answer after it has seen the code.
 */
export class StdinLines {
  readonly #input: StdinStream
  readonly #reader: Interface
  readonly #lines: string[] = []
  #ended = false
  #waiting: ((line: string | null) => void) | null = null

  constructor(input: StdinStream) {
    this.#input = input
    this.#reader = createInterface({ input, crlfDelay: Infinity, terminal: false })
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
    this.#input.destroy?.()
  }
}
