// The freshness gate (SPEC "Authentication"), the terminal's half: some operations need the
// password proved within the last 10 minutes (FRESHNESS_WINDOW_S), and when the server asks,
// src/client/account.ts withFreshSignIn proves it with the password this prompt gives. Used by
// setup (the first directory publish binds the identity key) and `device add` (issuing an
// enrollment code).
import type { PasswordPrompt } from '../../client/account.ts'
import { SetupNeeded } from './command.ts'
import type { Prompts } from './prompts.ts'

export interface PasswordSource {
  /** --password-stdin was given. */
  readonly fromStdin: boolean
  /** How this command reads the password from stdin (default: all of stdin, as login does). */
  readonly readStdin?: () => Promise<string>
  readonly signal: AbortSignal
  /** How to run the command again, for the message when there is no way to ask: e.g. "setup". */
  readonly command: string
}

/** The password when the server asks for it: from stdin, else the terminal; SetupNeeded saying how when there is neither. */
export function passwordPrompt(prompts: Prompts, password: PasswordSource): PasswordPrompt {
  return async () => {
    if (!password.fromStdin && !prompts.interactive()) {
      throw new SetupNeeded(
        `the server wants the password proved again (the sign-in is older than 10 minutes): run ${password.command} again with --password-stdin, or on a terminal`,
      )
    }
    return password.fromStdin && password.readStdin ? password.readStdin() : prompts.accountPassword(password.fromStdin, password.signal)
  }
}
