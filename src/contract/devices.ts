// Wire shapes of the identity key, device directory, revoke-all and the enrollment relay
// (SPEC.md "Directory publication", "Device enrollment", "Tokens and challenges").
import Type from 'typebox'
import { OPAQUE_STRING, Timestamp, Uuid } from './common.ts'

/** 32 random bytes, base64url without padding: a channel id. */
export const CapabilityId = Type.String({
  pattern: '^[A-Za-z0-9_-]{43}$',
  description: 'Channel id: 32 random bytes in base64url; possession is the capability',
})

export const IDENTITY_KEY_HEADER = 'x-service-identity-key'

/** Largest device directory body (413 beyond). */
export const DIRECTORY_MAX_BYTES = 256 * 1024

export const PublishDirectoryResponse = Type.Object({ directory_version: Type.Integer({ description: 'The version now stored' }) })

export const UserIdParams = Type.Object({ user_id: Uuid })

export const RevokeChallengeResponse = Type.Object({
  challenge: Type.String({ description: 'Single use, burned by its first attempt whatever the outcome' }),
  expires_at: Timestamp,
})

export const RevokeAllRequest = Type.Object(
  {
    challenge: Type.String(),
    proof: Type.String({
      description:
        'Standard base64 of the identity key’s hybrid signature over the canonical CBOR of {"context": "coffer/revoke-all/v1", "user_id", "challenge"}',
    }),
  },
  { additionalProperties: false },
)

export const RevokeAllResponse = Type.Object({ revoked: Type.Integer({ description: 'Sessions actually removed, the caller’s own included' }) })

export const EnrollmentCodeResponse = Type.Object({
  code: Type.String({ description: 'Full entropy: 32 random bytes in base64url, for the QR payload' }),
  text_fallback: Type.String({ description: '10 decimal digits to transcribe (weaker); spaces and hyphens are ignored on redeem' }),
  expires_at: Timestamp,
})

export const RedeemRequest = Type.Object({ code: Type.String({ description: 'Either spelling' }) })

export const ChannelResponse = Type.Object({ channel_id: CapabilityId, expires_at: Timestamp })

export const RelayDirection = Type.Union([Type.Literal('to_initiator'), Type.Literal('to_enrollee')])

export const RelayRequest = Type.Object(
  {
    direction: RelayDirection,
    payload: Type.String({ description: 'Opaque, at most 64 KiB of UTF-8 (U+0000 included); never inspected', [OPAQUE_STRING]: true }),
  },
  { additionalProperties: false },
)

export const DrainQuery = Type.Object({ direction: RelayDirection })

export const DrainResponse = Type.Object({ payloads: Type.Array(Type.String(), { description: 'Arrival order; removed by this call' }) })

export const ChannelParams = Type.Object({ channel_id: CapabilityId })

export const StoreEscrowResponse = Type.Object({
  stored_at: Timestamp,
  replaced: Type.Boolean({ description: 'True when an earlier escrow was displaced' }),
})
