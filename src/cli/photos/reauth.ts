// The freshness gate (SPEC "Authentication"): some operations need the password proved within
// the last 10 minutes (FRESHNESS_WINDOW_S). This runs one, and when the server answers 403
// error.auth.reauthentication_required, proves the password (reauthenticate) and runs it again.
// Used by setup (the first directory publish binds the identity key) and `device add` (issuing
// an enrollment code).
import { CofferProblem, type CofferClient } from '../../sdk/client.ts'
import { SetupNeeded } from './command.ts'
import { accountPassword, interactive } from './prompts.ts'

export interface PasswordSource {
  /** --password-stdin was given. */
  readonly fromStdin: boolean
  /** How this command reads the password from stdin (default: all of stdin, as login does). */
  readonly readStdin?: () => Promise<string>
  readonly signal: AbortSignal
  /** How to run the command again, for the message when there is no way to ask: e.g. "setup". */
  readonly command: string
}

export async function withFreshSignIn<T>(client: CofferClient, action: () => Promise<T>, password: PasswordSource): Promise<T> {
  try {
    return await action()
  } catch (error) {
    if (!(error instanceof CofferProblem && error.code === 'error.auth.reauthentication_required')) throw error
    if (!password.fromStdin && !interactive()) {
      throw new SetupNeeded(`the server wants the password proved again (the sign-in is older than 10 minutes): run ${password.command} again with --password-stdin, or on a terminal`)
    }
    await client.reauthenticate(password.fromStdin && password.readStdin ? await password.readStdin() : await accountPassword(password.fromStdin, password.signal))
    return action()
  }
}
