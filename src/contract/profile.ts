import Type from 'typebox'
import { Timestamp } from './common.ts'

export const ProfileResponse = Type.Object({
  user_id: Type.String(),
  email: Type.String({ description: 'Read-only here' }),
  display_name: Type.Optional(Type.String({ description: 'Absent (not null) when unset' })),
  created_at: Timestamp,
})

export const UpdateProfileRequest = Type.Object({
  display_name: Type.Optional(
    Type.Union([Type.String(), Type.Null()], {
      description: 'Absent leaves the name unchanged, null clears it, a string of 1-100 characters after trimming sets it',
    }),
  ),
})

export const DeleteAccountRequest = Type.Object({
  totp_code: Type.Optional(Type.String({ description: 'Required when the account has a confirmed second factor: a live code from it' })),
})
