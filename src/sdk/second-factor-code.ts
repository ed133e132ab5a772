// What a person types at a second-factor prompt: the authenticator app's six digits (apps show
// them as "123 456"), or one of the account's recovery codes (xxxxx-xxxxx, any case, a space or
// nothing in place of the hyphen). The server tells the two apart by shape: six digits are a TOTP code.

const TOTP_CODE = /^\d{3} ?\d{3}$/
const RECOVERY_CODE = /^[0-9a-z]{5}[- ]?[0-9a-z]{5}$/i

/** The code to send for what was typed, or null when it has the shape of neither (say so before asking the server). */
export function typedSecondFactorCode(typed: string): string | null {
  const text = typed.trim()
  if (TOTP_CODE.test(text)) return text.replace(' ', '')
  return RECOVERY_CODE.test(text) ? text : null
}
