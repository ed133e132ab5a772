// Wire shapes of sign-in, tokens and the second factor (SPEC.md "Account and profile",
// "Tokens and challenges", "Second factor").
import Type from 'typebox'
import { Timestamp } from './common.ts'

const advisory = {
  cohort_hash: Type.Optional(
    Type.Unknown({
      description: 'Advisory string of 1-128 characters, or null. Recorded for the devices listing only; an unusable value is dropped, never refused.',
    }),
  ),
  device_id: Type.Optional(
    Type.Unknown({ description: 'Advisory directory device UUID, or null. Normalized to lowercase; an unusable value is dropped, never refused.' }),
  ),
}

export const RegisterRequest = Type.Object(
  {
    email: Type.String({ description: 'At most 254 characters, one @ with text on both sides; compared case-insensitively' }),
    password: Type.String({ minLength: 1 }),
  },
  { additionalProperties: false },
)

export const LoginRequest = Type.Object({ email: Type.String(), password: Type.String(), ...advisory })

export const VerifyLoginRequest = Type.Object({
  mfa_token: Type.String(),
  totp_code: Type.String({
    description:
      'The six-digit code shown by the authenticator app, or one of the account’s recovery codes (`xxxxx-xxxxx`, any case, the hyphen optional), each usable once',
  }),
  ...advisory,
})

export const RefreshRequest = Type.Object({ refresh_token: Type.String() })

export const ReauthenticateRequest = Type.Object({ password: Type.String() })

export const ReauthenticateResponse = Type.Object({ authenticated_at: Timestamp })

export const ChangePasswordRequest = Type.Object({ current_password: Type.String(), new_password: Type.String({ minLength: 1 }) })

export const CodeRequest = Type.Object({
  totp_code: Type.String({
    description:
      'The six-digit code shown by the authenticator app. Disable and new recovery codes also take one of the account’s recovery codes (`xxxxx-xxxxx`, any case, the hyphen optional), each usable once; confirm does not',
  }),
})

export const TokenResponse = Type.Object({
  access_token: Type.String({ description: 'Short-lived bearer credential' }),
  refresh_token: Type.String({ description: 'Long-lived; exchanged once at the refresh operation' }),
  token_type: Type.Literal('Bearer'),
  expires_by: Type.Integer({ description: 'Unix seconds at which access_token stops being honoured (an instant, not a duration)' }),
})

export const SecondFactorChallenge = Type.Object({
  mfa_token: Type.String(),
  expires_by: Type.Integer({ description: 'Unix seconds' }),
})

export const EnrollmentResponse = Type.Object({
  provisioning_uri: Type.String({ description: 'otpauth URI carrying the shared secret; served once' }),
})

export const RecoveryCodesResponse = Type.Object({
  recovery_codes: Type.Array(Type.String({ description: '`xxxxx-xxxxx`: 10 characters of lowercase base32 without i, l, o and u' }), {
    minItems: 10,
    maxItems: 10,
    description:
      'The factor’s recovery codes, shown this once (the server keeps only keyed hashes): each signs in once in place of an authenticator code. Every earlier code stops working',
  }),
})

export const TotpStatusResponse = Type.Object({
  status: Type.Union([Type.Literal('none'), Type.Literal('pending'), Type.Literal('active')], {
    description: '`none`: no second factor; `pending`: an enrollment waits for its confirming code (sign-in is unchanged); `active`: sign-in needs a code',
  }),
  recovery_codes_remaining: Type.Integer({ minimum: 0, description: 'Unused recovery codes of the active factor (0 otherwise)' }),
})
