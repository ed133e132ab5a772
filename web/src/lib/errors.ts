// Every failure the person sees is a sentence that says what happened and what to do next.
// Problems from the server are matched by their stable code (docs/errors.md); anything else
// (the network, a format error) by its kind.
import { IdentityKeyChangedError } from '#photos/sharing.ts'
import { CofferProblem } from '#sdk/client.ts'

const BY_CODE: Readonly<Record<string, string>> = {
  'error.auth.invalid_credentials': 'That email and password do not match an account. Check them and try again.',
  'error.auth.account_exists': 'An account with this email already exists. Sign in instead.',
  'error.auth.account_locked': 'Too many wrong attempts: this account is locked for a while. Try again later.',
  'error.auth.invalid_code':
    'That code is not right, or it was used already. Enter the current 6-digit code from your authenticator app, or a recovery code you have not used.',
  'error.auth.challenge_expired': 'The sign-in took too long. Start again with your email and password.',
  'error.auth.session_expired': 'Your session has ended. Sign in again.',
  'error.auth.unauthenticated': 'You are signed out. Sign in again.',
  'error.auth.reauthentication_required': 'For this, confirm your password first.',
  'error.totp.invalid_code': 'That code is not right, or it was used already. Enter the current 6-digit code from your authenticator app.',
  'error.totp.already_active': 'Your account already has an authenticator app. To use another one, turn the current one off first, with a code from it.',
  'error.totp.nothing_pending': 'No set-up is waiting for a code (it was confirmed, or never started). Start the set-up again.',
  'error.totp.not_enrolled': 'Your account has no authenticator app turned on, so there is nothing to turn off and no recovery codes to replace.',
  'error.auth.proof_required':
    "The server did not accept this browser's proof of the account's identity key, so no session was ended. Try again; if it keeps failing, do it from the device you set the account up on.",
  'error.account.suspended':
    'Your account is suspended, so nothing can be added, changed or deleted; your photos can still be seen and downloaded. Your moderation record says why; to ask about it, contact the operator of this server.',
  'error.moderation.taken_down': 'This photo was taken down by the operator and cannot be shown.',
  'error.moderation.state_conflict': 'That would change nothing: it is already so. The record shows where it stands.',
  'error.rate_limited': 'Too many attempts in a short time. Wait a moment and try again.',
  'error.quota.exceeded': 'Your storage is full. Delete some photos or ask the operator for more space.',
  'error.unavailable': 'The server is busy or starting up. Try again in a moment.',
  'error.storage.failing': 'The server cannot store anything right now. Try again later.',
  'error.storage.full': 'The server is out of space. Try again later, or tell the operator.',
  'error.enroll.code_refused': 'That code is wrong or has expired. Ask the other device for a new one.',
  'error.enroll.channel_not_found': 'The pairing has ended on the other device. Start again.',
  'error.member.exists': 'They are in this album already, or invited to it.',
  'error.member.too_many_invitations': 'You have many invitations nobody answered yet. Take some back, or wait for answers, before inviting more people.',
  'error.member.read_only': 'You can look at this album but not change it: its owner shared it with you to view.',
  'error.member.not_creator': 'Only the person who added this photo, or the album’s owner, can change or delete it.',
  'error.link.expired': 'This link has expired. Ask the person who shared it for a new one.',
  'error.link.revoked': 'This link was turned off by the person who shared it.',
  'error.link.disabled': 'This link was turned off by the operator of this server.',
  'error.link.used_up': 'This link has been opened as many times as the person who shared it allowed. Ask them for a new one.',
  'error.link.too_many': 'You have many links that still work. Revoke some before making more.',
  'error.directory.required':
    'That person has not set Coffer up on a device yet, so there is nowhere to send the album’s keys. Ask them to sign in once first.',
}

/** The server's problem behind an error: the error itself, or its cause (the library wraps a refused upload in a FileTransferError). */
export function problemOf(error: unknown): CofferProblem | null {
  for (let at = error, depth = 0; at instanceof Error && depth < 4; at = at.cause, depth++) if (at instanceof CofferProblem) return at
  return null
}

/** A sentence for any error, for the screen. */
export function sentenceFor(caught: unknown): string {
  const error = problemOf(caught) ?? caught
  if (error instanceof CofferProblem) {
    if (error.status === 429 && error.retryAfterS !== null) return `Too many attempts. Try again in ${error.retryAfterS} seconds.`
    return (
      BY_CODE[error.code] ??
      `${error.problem.detail || error.problem.title}. Try again; if it keeps failing, tell the operator (request ${error.headers.get('x-request-id') ?? 'unknown'}).`
    )
  }
  if (error instanceof IdentityKeyChangedError)
    return 'This person’s identity key is not the one this browser saw before: the server may be lying, or they set their account up again. Compare safety numbers with them before going on.'
  if (error instanceof TypeError && /fetch|network/i.test(error.message)) return 'The server cannot be reached. Check your connection and try again.'
  return error instanceof Error ? error.message : String(error)
}
