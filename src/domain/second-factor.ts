// SPEC's "Second factor" state table and the verify-login attempt cap (API.md section 3).

export type SecondFactorState = 'none' | 'pending' | 'active'

export type SecondFactorRefusal = 'error.totp.already_active' | 'error.totp.nothing_pending' | 'error.totp.not_enrolled'

export type Transition = 'allowed' | SecondFactorRefusal

export function startEnrollment(state: SecondFactorState): Transition {
  return state === 'active' ? 'error.totp.already_active' : 'allowed'
}

export function confirmEnrollment(state: SecondFactorState): Transition {
  return state === 'pending' ? 'allowed' : 'error.totp.nothing_pending'
}

export function disableSecondFactor(state: SecondFactorState): Transition {
  return state === 'active' ? 'allowed' : 'error.totp.not_enrolled'
}

/** Recovery codes stand in for an active factor's codes: there are none to make for another. */
export function renewRecoveryCodes(state: SecondFactorState): Transition {
  return state === 'active' ? 'allowed' : 'error.totp.not_enrolled'
}

/** After a wrong code, the `maxAttempts`-th failure burns the challenge. */
export function afterWrongCode(failedAttempts: number, maxAttempts: number): 'retry' | 'burn' {
  return failedAttempts >= maxAttempts ? 'burn' : 'retry'
}
