// Wire shapes of public links (decision 0068; docs/sharing.md "Public links"): the owner's
// links, and what a link's holder (no account) is answered.
import Type from 'typebox'
import { Hash } from './albums.ts'
import { Timestamp, Uuid, WholeNumber } from './common.ts'

/** The most a link's envelope may be, decoded: the album's keys and its writers' identity keys, sealed. */
export const LINK_ENVELOPE_MAX_BYTES = 262_144
/** The most the owner's copy of a link's secret may be, decoded. */
export const LINK_OWNER_COPY_MAX_BYTES = 1024
/** The most photos a selection link names. */
export const LINK_SELECTION_MAX = 1000
/** The longest a link may last when it expires at all: ten years. */
export const LINK_EXPIRY_MAX_S = 315_360_000
/** The most opens a link may be limited to. */
export const LINK_OPENS_MAX = 1_000_000
/** argon2id memory (KiB) a password may ask browsers for: enough for a strong stretch, little enough for a phone. */
export const LINK_PASSWORD_MEMORY_MAX_KIB = 262_144
export const LINK_PASSWORD_ITERATIONS_MAX = 8

/** 16 random bytes in base64url, chosen by the owner's client (it binds the envelope to it). */
export const LinkId = Type.String({ pattern: '^[A-Za-z0-9_-]{22}$', description: '16 random bytes, base64url without padding' })

export const LinkParams = Type.Object({ link_id: LinkId })
export const LinkBlobParams = Type.Object({ link_id: LinkId, hash: Hash })

const Base64 = (description: string) => Type.String({ description })

export const LinkPassword = Type.Object(
  {
    salt: Type.String({ pattern: '^[A-Za-z0-9+/]{22}==$', description: 'Standard base64 of the 16-byte argon2id salt' }),
    memory_kib: Type.Integer({ minimum: 8, maximum: LINK_PASSWORD_MEMORY_MAX_KIB }),
    iterations: Type.Integer({ minimum: 1, maximum: LINK_PASSWORD_ITERATIONS_MAX }),
  },
  {
    additionalProperties: false,
    description: 'How the browser stretches the password (argon2id, parallelism 1, 32 bytes); the server never sees the password',
  },
)

export const CreateLinkRequest = Type.Object(
  {
    link_id: LinkId,
    token_hash: { ...Hash, description: 'SHA-256 (hex) of the 32-byte access token the link’s secret (and password) derive' },
    envelope: Base64(`Standard base64 of what the owner's client seals under the link's key: 1 to ${LINK_ENVELOPE_MAX_BYTES} bytes, kept byte for byte`),
    owner_copy: Base64(
      `Standard base64 of the owner's client's copy of the link's secret and key, sealed under its master key: 1 to ${LINK_OWNER_COPY_MAX_BYTES} bytes, answered to the owner only`,
    ),
    asset_ids: Type.Union([Type.Array(Uuid, { minItems: 1, maxItems: LINK_SELECTION_MAX, uniqueItems: true }), Type.Null()], {
      description: 'A selection link: the album’s photos it shows. null: the whole album, as it grows',
    }),
    downloads: Type.Boolean({ description: 'Whether the link’s holder may read the originals (see docs/sharing.md, "View only")' }),
    password: Type.Union([LinkPassword, Type.Null()]),
    expires_in_s: Type.Union([WholeNumber({ minimum: 60, maximum: LINK_EXPIRY_MAX_S }), Type.Null()], {
      description: 'Seconds from now until the link stops; null: until revoked',
    }),
    max_opens: Type.Union([WholeNumber({ minimum: 1, maximum: LINK_OPENS_MAX }), Type.Null()], {
      description: 'How many times the link may be opened (each open is a session); null: no limit',
    }),
  },
  { additionalProperties: false },
)

export const LinkState = Type.Union(
  [Type.Literal('active'), Type.Literal('expired'), Type.Literal('used_up'), Type.Literal('revoked'), Type.Literal('disabled')],
  { description: 'active: opens; used_up: opened max_opens times (sessions already open read on); the others give nothing more' },
)

export const LinkView = Type.Object({
  link_id: Type.String(),
  album_id: Type.String(),
  owner_id: Type.String(),
  owner_copy: Type.String({ description: 'Standard base64 of the owner’s copy, byte for byte (the operator’s list leaves it empty)' }),
  asset_ids: Type.Union([Type.Array(Type.String()), Type.Null()]),
  downloads: Type.Boolean(),
  password: Type.Boolean({ description: 'Whether opening it takes a password' }),
  expires_at: Type.Union([Timestamp, Type.Null()]),
  max_opens: Type.Union([Type.Integer(), Type.Null()]),
  opens: Type.Integer({ description: 'How many times it was opened' }),
  last_opened_at: Type.Union([Timestamp, Type.Null()]),
  created_at: Timestamp,
  revoked_at: Type.Union([Timestamp, Type.Null()]),
  disabled_at: Type.Union([Timestamp, Type.Null()], { description: 'When the operator disabled it' }),
  disabled_reason: Type.Union([Type.String(), Type.Null()]),
  state: LinkState,
})

export const LinksQuery = Type.Object({ album_id: Type.Optional(Uuid) }, { additionalProperties: false })
export const LinksResponse = Type.Object({ links: Type.Array(LinkView, { description: 'Newest first' }) })

export const LinkEnvelopeRequest = Type.Object(
  { envelope: Base64(`Standard base64 of the new envelope: 1 to ${LINK_ENVELOPE_MAX_BYTES} bytes`) },
  { additionalProperties: false },
)

export const LinkProbeResponse = Type.Object({
  link_id: Type.String(),
  password: Type.Union([LinkPassword, Type.Null()], { description: 'null: the secret in the URL opens it alone' }),
})

export const OpenLinkRequest = Type.Object(
  { token: Type.String({ pattern: '^[A-Za-z0-9_-]{43}$', description: 'The 32-byte access token, base64url without padding' }) },
  { additionalProperties: false },
)

export const OpenLinkResponse = Type.Object({
  session: Type.String({ description: 'Present it as `Authorization: Bearer <session>` to the link’s feed and blobs' }),
  session_expires_at: Timestamp,
  album_id: Type.String(),
  envelope: Type.String({ description: 'Standard base64 of the envelope, byte for byte' }),
  downloads: Type.Boolean(),
  selection: Type.Boolean(),
  expires_at: Type.Union([Timestamp, Type.Null()], { description: 'When the link stops' }),
})

export const AdminLinksQuery = Type.Object(
  { user_id: Type.Optional(Uuid), album_id: Type.Optional(Uuid), limit: Type.Optional(WholeNumber({ minimum: 1, maximum: 1000, default: 100 })) },
  { additionalProperties: false },
)
