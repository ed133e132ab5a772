import Type from 'typebox'
import { Timestamp, Uuid } from './common.ts'

const nullableString = Type.Union([Type.String(), Type.Null()])

export const SessionView = Type.Object({
  session_id: Type.String(),
  created_at: Type.String({ format: 'date-time', description: 'Time this record was minted; after a refresh, the rotation time' }),
  authenticated_at: Type.String({ format: 'date-time', description: 'When a credential was last proved on this lineage; read by the freshness gate' }),
  last_active_at: Type.String({ format: 'date-time', description: 'Equals created_at; clients must not present it as last used' }),
  user_agent: nullableString,
  ip_address: nullableString,
  cohort_hash: nullableString,
  device_id: nullableString,
  current: Type.Boolean({ description: 'True for the session making the request' }),
})

export const CohortView = Type.Object({ cohort_hash: Type.String(), first_seen: Timestamp, last_seen: Timestamp })

export const DevicesResponse = Type.Object({
  sessions: Type.Array(SessionView, { description: 'Every live session, oldest first' }),
  cohorts: Type.Array(CohortView, { description: 'Every cohort ever seen for the account, oldest first sighting first' }),
})

export const SessionIdParams = Type.Object({ session_id: Uuid })

export const SecurityEventView = Type.Object({
  kind: Type.Union([Type.Literal('password_lockout'), Type.Literal('second_factor_lockout'), Type.Literal('recovery_code_used')], {
    description:
      '`password_lockout`: LOCKOUT_THRESHOLD wrong passwords locked sign-in; `second_factor_lockout`: TOTP_MAX_FAILURES wrong codes in a window made every code operation answer 429; `recovery_code_used`: a recovery code was used in place of a TOTP code (sign-in, disable, new recovery codes)',
  }),
  at: Timestamp,
  until: Type.Optional(Type.String({ format: 'date-time', description: 'When the lock or refusal ends (ended, once past); absent for a recovery code’s use' })),
  ip_address: Type.Optional(Type.String({ description: 'Address of the request that set it off' })),
  user_agent: Type.Optional(Type.String()),
})

export const SecurityEventsResponse = Type.Object({
  events: Type.Array(SecurityEventView, { description: 'The account’s newest 100 security events, oldest first' }),
})
