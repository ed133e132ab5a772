// Questions `coffer-photos` asks a person at a terminal (@inquirer/prompts, decision 0003), and
// the flags that answer them for scripts. Prompts draw on stderr, so that stdout keeps only the
// results (and only JSON lines with --json). Without a terminal nothing is asked: a missing
// answer is a UsageError naming the flag that gives it.
import type { CommandIo } from '../io.ts'
import { Interrupted, UsageError } from './command.ts'
import { StdinLines } from './stdin-lines.ts'

// Loaded when a question is asked, not on every start (scripts never need it).
const inquirer = () => import('@inquirer/prompts')

async function asked<T>(prompt: Promise<T>): Promise<T> {
  try {
    return await prompt
  } catch (error) {
    // Ctrl-C inside a prompt (the terminal is in raw mode, so no SIGINT) or SIGTERM.
    if (error instanceof Error && (error.name === 'ExitPromptError' || error.name === 'AbortPromptError')) throw new Interrupted('stopped at the prompt')
    throw error
  }
}

/**
 * The questions of one run, asked on its terminal (stdin and stderr of its CommandIo), and what
 * its stdin holds when no terminal is there.
 */
export class Prompts {
  readonly #io: CommandIo
  #stdinRead: Promise<string> | null = null

  constructor(io: CommandIo) {
    this.#io = io
  }

  /** True when a person can answer: stdin is a terminal. */
  interactive(): boolean {
    return this.#io.stdin.isTTY === true
  }

  #context(signal: AbortSignal) {
    return { input: this.#io.stdin, output: this.#io.stderr, signal }
  }

  /** The flag's value, else the person's answer, else a UsageError saying which flag to pass. */
  async answer(
    given: string | undefined,
    question: { message: string; flag: string; signal: AbortSignal; validate?: (value: string) => true | string },
  ): Promise<string> {
    if (given !== undefined) {
      const verdict = question.validate?.(given) ?? true
      if (verdict !== true) throw new UsageError(`${question.flag}: ${verdict}`)
      return given
    }
    if (!this.interactive()) throw new UsageError(`${question.flag} is needed: there is no terminal to ask on`)
    const { input } = await inquirer()
    return asked(input({ message: question.message, ...(question.validate ? { validate: question.validate } : {}) }, this.#context(question.signal)))
  }

  /** All of stdin as UTF-8, read to its end once (a second call gets the same text). */
  stdinText(): Promise<string> {
    this.#stdinRead ??= (async () => {
      const chunks: Buffer[] = []
      for await (const chunk of this.#io.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)
      return Buffer.concat(chunks).toString('utf8')
    })()
    return this.#stdinRead
  }

  /** Reads stdin to its end: the password of --password-stdin, without its final line break. */
  async #passwordFromStdin(): Promise<string> {
    const text = (await this.stdinText()).replace(/\r?\n$/, '')
    if (text === '') throw new UsageError('--password-stdin: stdin held no password')
    return text
  }

  /** The account password: from stdin with --password-stdin, else asked without echo on a terminal. */
  accountPassword(fromStdin: boolean, signal: AbortSignal): Promise<string> {
    return this.#password(fromStdin, 'Password', signal)
  }

  /** The password a new public link asks for (`link --password`): read as the account password is. */
  linkPassword(fromStdin: boolean, signal: AbortSignal): Promise<string> {
    return this.#password(fromStdin, 'Password for the link', signal)
  }

  async #password(fromStdin: boolean, message: string, signal: AbortSignal): Promise<string> {
    if (fromStdin) return this.#passwordFromStdin()
    if (!this.interactive()) throw new UsageError('a password is needed: pass --password-stdin and write it on stdin (there is no terminal to ask on)')
    const { password } = await inquirer()
    return asked(password({ message, toggleMask: false, validate: (value) => value !== '' || 'type the password' }, this.#context(signal)))
  }

  /** A yes/no question; `--yes` answers yes, and without a terminal there must be a --yes. */
  async confirmed(yes: boolean, question: { message: string; signal: AbortSignal }): Promise<boolean> {
    if (yes) return true
    if (!this.interactive()) throw new UsageError('--yes is needed: there is no terminal to confirm on')
    const { confirm } = await inquirer()
    return asked(confirm({ message: question.message, default: false }, this.#context(question.signal)))
  }

  /**
   * Words typed on a terminal, shown only while each is typed: the ones before it are dots, and
   * the answer is not echoed once given (a recovery phrase, kept out of the scrollback and from
   * over a shoulder). `validate` may refuse it with a reason, and the person types it again.
   */
  async maskedWords(question: { message: string; signal: AbortSignal; validate: (value: string) => true | string }): Promise<string> {
    if (!this.interactive()) throw new UsageError('there is no terminal to ask on')
    const { input } = await inquirer()
    return asked(input({ message: question.message, transformer: maskAllButLastWord, validate: question.validate }, this.#context(question.signal)))
  }

  /** Stdin line by line, for a command that reads answers from it when no terminal is there; null on a terminal (the prompts read it). */
  linesUnlessTerminal(): StdinLines | null {
    return this.interactive() ? null : new StdinLines(this.#io.stdin)
  }
}

/** "abandon ability abl" -> "••••••• ••••••• abl"; once answered, "(hidden)". */
export function maskAllButLastWord(value: string, { isFinal }: { isFinal: boolean }): string {
  if (isFinal) return '(hidden)'
  return value.replace(/\S+(?=\s)/g, (word) => '•'.repeat(word.length))
}
