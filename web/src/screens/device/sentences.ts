// The account flows' failures as sentences for the device screens (web/src/lib/errors.ts has the
// server's codes; these are src/client's own errors, kept out of it so that the operator page's
// bundle does not take in the account flows).
import { AccountSetUpElsewhereError, NoEscrowError, RecoveryPhraseError } from '#photos/account.ts'
import { EnrollmentError } from '#photos/enrollment.ts'
import { CofferProblem } from '#sdk/client.ts'

const OTHER_SAID = {
  declined: 'the person there said the codes do not match',
  invalid: 'it found something wrong in what this browser sent',
  stopped: 'it was stopped',
} as const

function enrollmentSentence(error: EnrollmentError): string {
  switch (error.stop) {
    case 'declined':
      return 'You said the codes are not the same, so nothing was added. Start again on both devices; if the codes differ again, someone may be in between: stop, and add the device another day or with your recovery phrase.'
    case 'aborted':
      return `The other device cancelled (${error.reason === null ? 'it gave no reason' : OTHER_SAID[error.reason]}), so nothing was added. Start again on both devices.`
    case 'invalid':
      return `Something in the exchange did not check out (${error.message}), so nothing was added. Start again with a new pairing code.`
    case 'expired':
      return 'The pairing code expired before both devices finished, so nothing was added. Start again with a new pairing code.'
    case 'stopped':
      return 'Stopped: nothing was added.'
  }
}

/** The error a device screen shows: a sentence for the account flows' errors, the error itself otherwise (ErrorLine words it). */
export function explained(error: unknown): unknown {
  if (error instanceof EnrollmentError) return new Error(enrollmentSentence(error))
  if (error instanceof RecoveryPhraseError) {
    return new Error(
      error.reason === 'wrong'
        ? 'That recovery phrase does not open your account: it is not the phrase shown when the account was set up (the last one shown, if setup ran more than once). Nothing was changed. Check each word against your written copy.'
        : 'These 24 words are not a recovery phrase: a word is wrong or out of place. Compare them with your written copy, in order.',
    )
  }
  if (error instanceof NoEscrowError) {
    return new Error(
      error.setUpStarted
        ? 'Your account has no recovery phrase yet: setting it up did not finish on its first device. Finish it there, or add this browser from that device with a pairing code.'
        : 'Your account was never set up on any device, so there is nothing to recover. Set this browser up as your first device instead.',
    )
  }
  if (error instanceof AccountSetUpElsewhereError) {
    return new Error(
      'Your account is already set up on another device. Add this browser with a pairing code from that device, or recover with your recovery phrase.',
    )
  }
  if (error instanceof CofferProblem && error.code === 'error.auth.invalid_credentials') {
    return new Error('That is not your password, so nothing was changed. Try again.')
  }
  if (error instanceof CofferProblem && error.code === 'error.enroll.channel_not_found') {
    return new Error('That pairing code is not open (mistyped, already used, or expired). Check it, or ask the other device for a new one.')
  }
  return error
}
