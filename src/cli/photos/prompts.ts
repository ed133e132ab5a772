// Questions `coffer-photos` asks a person at a terminal (@inquirer/prompts, decision 0003), and
// the flags that answer them for scripts. Prompts draw on stderr, so that stdout keeps only the
// results (and only JSON lines with --json). Without a terminal nothing is asked: a missing
// answer is a UsageError naming the flag that gives it.
import { Interrupted, UsageError } from './command.ts'

// Loaded when a question is asked, not on every start (scripts never need it).
const inquirer = () => import('@inquirer/prompts')

/** True when a person can answer: stdin is a terminal. */
export function interactive(): boolean {
  return process.stdin.isTTY === true
}

async function asked<T>(prompt: Promise<T>): Promise<T> {
  try {
    return await prompt
  } catch (error) {
    // Ctrl-C inside a prompt (the terminal is in raw mode, so no SIGINT) or SIGTERM.
    if (error instanceof Error && (error.name === 'ExitPromptError' || error.name === 'AbortPromptError')) throw new Interrupted('stopped at the prompt')
    throw error
  }
}

const context = (signal: AbortSignal) => ({ output: process.stderr, signal })

/** The flag's value, else the person's answer, else a UsageError saying which flag to pass. */
export async function answer(given: string | undefined, question: { message: string; flag: string; signal: AbortSignal; validate?: (value: string) => true | string }): Promise<string> {
  if (given !== undefined) {
    const verdict = question.validate?.(given) ?? true
    if (verdict !== true) throw new UsageError(`${question.flag}: ${verdict}`)
    return given
  }
  if (!interactive()) throw new UsageError(`${question.flag} is needed: there is no terminal to ask on`)
  const { input } = await inquirer()
  return asked(input({ message: question.message, ...(question.validate ? { validate: question.validate } : {}) }, context(question.signal)))
}

let stdinRead: Promise<string> | null = null

/** All of stdin as UTF-8, read to its end once (a second call gets the same text). */
export function stdinText(): Promise<string> {
  stdinRead ??= (async () => {
    const chunks: Buffer[] = []
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
    return Buffer.concat(chunks).toString('utf8')
  })()
  return stdinRead
}

/** Reads stdin to its end: the password of --password-stdin, without its final line break. */
async function passwordFromStdin(): Promise<string> {
  const text = (await stdinText()).replace(/\r?\n$/, '')
  if (text === '') throw new UsageError('--password-stdin: stdin held no password')
  return text
}

/** The account password: from stdin with --password-stdin, else asked without echo on a terminal. */
export async function accountPassword(fromStdin: boolean, signal: AbortSignal): Promise<string> {
  if (fromStdin) return passwordFromStdin()
  if (!interactive()) throw new UsageError('a password is needed: pass --password-stdin and write it on stdin (there is no terminal to ask on)')
  const { password } = await inquirer()
  return asked(password({ message: 'Password', toggleMask: false, validate: (value) => value !== '' || 'type the password' }, context(signal)))
}

/** A yes/no question; `--yes` answers yes, and without a terminal there must be a --yes. */
export async function confirmed(yes: boolean, question: { message: string; signal: AbortSignal }): Promise<boolean> {
  if (yes) return true
  if (!interactive()) throw new UsageError('--yes is needed: there is no terminal to confirm on')
  const { confirm } = await inquirer()
  return asked(confirm({ message: question.message, default: false }, context(question.signal)))
}

/**
 * Words typed on a terminal, shown only while each is typed: the ones before it are dots, and
 * the answer is not echoed once given (a recovery phrase, kept out of the scrollback and from
 * over a shoulder). `validate` may refuse it with a reason, and the person types it again.
 */
export async function maskedWords(question: { message: string; signal: AbortSignal; validate: (value: string) => true | string }): Promise<string> {
  if (!interactive()) throw new UsageError('there is no terminal to ask on')
  const { input } = await inquirer()
  return asked(input({ message: question.message, transformer: maskAllButLastWord, validate: question.validate }, context(question.signal)))
}

/** "abandon ability abl" -> "••••••• ••••••• abl"; once answered, "(hidden)". */
export function maskAllButLastWord(value: string, { isFinal }: { isFinal: boolean }): string {
  if (isFinal) return '(hidden)'
  return value.replace(/\S+(?=\s)/g, (word) => '•'.repeat(word.length))
}
