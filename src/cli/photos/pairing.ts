// What `device add` and `join` share (decision 0019): asking the person whether the two screens
// show the same short authentication string, the answers read from stdin when there is no
// terminal, and the sentences for a channel that is gone or an exchange that stopped.
import { CofferProblem } from '../../sdk/client.ts'
import { EnrollmentError } from '../../client/enrollment.ts'
import { Interrupted, SetupNeeded, UsageError } from './command.ts'
import type { Output } from './output.ts'
import type { Prompts } from './prompts.ts'
import type { StdinLines } from './stdin-lines.ts'

export const EXPIRED = 'the pairing code is wrong or has expired; run `coffer-photos device add` again'

/**
 * Shows the SAS and asks whether the other screen shows the same. On a terminal: a yes/no
 * prompt (no by default). Without one: the `sas` event (with --json) or the lines above, then a
 * line from stdin; only "yes" or "y" (any case) means yes, anything else no.
 */
export async function sameCodeOnBothScreens(
  sas: string,
  other: string,
  out: Output,
  prompts: Prompts,
  lines: StdinLines | null,
  signal: AbortSignal,
  fields: Record<string, unknown> = {},
): Promise<boolean> {
  out.say('')
  out.say(`Check that ${other} shows the same code:`)
  out.say('')
  out.say(`    ${sas}`)
  out.say('')
  out.event('sas', { sas, ...fields })
  if (lines === null) return prompts.confirmed(false, { message: `Does ${other} show ${sas}?`, signal })
  if (out.json) out.warn(`coffer-photos: does ${other} show ${sas}? write yes or no on stdin`)
  else out.say('Does it? Write yes or no:')
  const answer = await lines.next(signal)
  if (answer === null) throw new UsageError('stdin ended before the answer: write yes or no on stdin after the code is shown (there is no terminal to ask on)')
  return /^\s*(yes|y)\s*$/i.test(answer)
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
