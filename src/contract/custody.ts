// Wire shapes of storage verification, custody receipts, attestation keys and moderation
// (SPEC.md "Storage verification and receipts", "Moderation"; API.md sections 7 and 8), and the
// operator's view of an account (issue 17, docs/decisions/0006-custody-moderation.md).
import Type from 'typebox'
import { Hash } from './albums.ts'
import { Timestamp, Uuid, WholeNumber } from './common.ts'

export const AssetVerifyRequest = Type.Object(
  {
    asset_id: Type.String({ description: 'Any text: one that is not a live asset of the caller gets every blob unknown and false' }),
    blob_hashes: Type.Array(Hash, { description: 'Every content address the client relies on' }),
  },
  { additionalProperties: false },
)

export const StorageVerifyRequest = Type.Object(
  {
    assets: Type.Array(AssetVerifyRequest),
    deep: Type.Optional(Type.Boolean({ description: 'Re-read and re-hash the bytes, within the per-account budget' })),
  },
  { additionalProperties: false },
)

export const BlobVerdictResponse = Type.Object({
  hash: Type.String(),
  role: Type.String({ description: 'original, derivative, metadata, provenance, or unknown for a hash the asset does not hold' }),
  stored: Type.Boolean(),
  indexed: Type.Boolean({ description: 'A live asset of the account that added the asset references it' }),
  retrievable: Type.Boolean({ description: 'Nothing withholds it' }),
  deep: Type.Optional(
    Type.Union([Type.Literal('intact'), Type.Literal('corrupt'), Type.Literal('rate_limited')], { description: 'Absent when no deep scan ran' }),
  ),
})

export const StorageVerdictResponse = Type.Object({
  asset_id: Type.String(),
  durable: Type.Boolean({ description: 'True only when every declared blob is stored, indexed and retrievable and none was found corrupt' }),
  blobs: Type.Array(BlobVerdictResponse, { description: 'One per declared hash, in declaration order' }),
  checked_at: Timestamp,
})

export const StorageVerifyResponse = Type.Object({ verdicts: Type.Array(StorageVerdictResponse, { description: 'Request order' }) })

export const AssetIdParams = Type.Object({ asset_id: Uuid })

export const AssetReceipt = Type.Object({
  receipt_seq: Type.Integer(),
  server_id: Type.String(),
  server_key_id: Type.String(),
  prior_receipt_hash: Type.Optional(Type.String({ description: 'Absent for the first receipt of the server' })),
  upload_id: Type.String(),
  blob_role: Type.String(),
  ciphertext_hash: Type.String(),
  size: Type.Integer(),
  envelope_hash: Type.Optional(Type.String({ description: 'On the provenance receipt only' })),
  received_at: Timestamp,
  receipt_cbor: Type.String({ description: 'Standard base64 of the canonical CBOR map {"body", "sig"}: this is the receipt, the other fields read it' }),
})

/** Paged as the feed is (API.md section 6): `after` a receipt_seq, `limit` 1-1000. */
export const AssetReceiptsQuery = Type.Object({
  after: WholeNumber({ default: 0, description: 'Receipts numbered after this receipt_seq: 0, then the previous page’s next_after' }),
  limit: WholeNumber({ minimum: 1, maximum: 1000, default: 200, description: 'At most this many receipts; a shorter page is the last' }),
})

export const AssetReceiptsResponse = Type.Object({
  asset_id: Type.String(),
  receipts: Type.Array(AssetReceipt, { description: 'receipt_seq order' }),
  next_after: Type.Integer({ description: 'The last receipt’s receipt_seq, or `after` itself on an empty page: the next page’s `after`' }),
})

export const AttestationKey = Type.Object({
  key_id: Type.String(),
  algorithm: Type.Literal('ed25519+ml-dsa-65'),
  public_key: Type.String({ description: 'Standard base64 of the 1984-byte hybrid public key' }),
  status: Type.Union([Type.Literal('active'), Type.Literal('retired')]),
  not_before: Timestamp,
  not_after: Type.Optional(Timestamp),
})

export const AttestationKeysDocument = Type.Object({
  server_id: Type.String(),
  keys: Type.Array(AttestationKey),
  receipt_chains: Type.Optional(
    Type.Integer({
      minimum: 2,
      description: 'How many receipt chains the server keeps (decision 0072); absent: one. Chain c numbers its n-th receipt (n - 1) * receipt_chains + c.',
    }),
  ),
})

export const ModerationEventResponse = Type.Object({
  action: Type.Union([
    Type.Literal('suspended'),
    Type.Literal('reinstated'),
    Type.Literal('second_factor_reset'),
    Type.Literal('account_deleted'),
    Type.Literal('taken_down'),
    Type.Literal('restored'),
    Type.Literal('legal_hold'),
    Type.Literal('hold_lifted'),
  ]),
  asset_id: Type.Optional(Type.String()),
  at: Timestamp,
  reason: Type.Optional(Type.String({ description: 'Absent when the reason cannot be stated' })),
})

export const ModerationRecordResponse = Type.Object({
  standing: Type.Union([Type.Literal('active'), Type.Literal('suspended')]),
  suspended_since: Type.Optional(Timestamp),
  events: Type.Array(ModerationEventResponse, { description: 'Oldest first' }),
})

export const ModerationReason = Type.Object({ reason: Type.Optional(Type.String({ maxLength: 2000 })) })

export const AdminUserParams = Type.Object({ user_id: Uuid })

export const AccountUsage = Type.Object({
  bytes: Type.Integer({ description: 'Size of the distinct blobs the account stores (stored_bytes of GET /v1/storage/usage)' }),
  assets: Type.Integer({
    description:
      'Its live assets: created and not deleted (taken-down ones included). An asset is what a client stores as one, which the server cannot look into: each photo or video, and with the photo library each album’s record too (59 photos in 2 albums are 61 assets)',
  }),
})

export const SecondFactorStatus = Type.Object({
  enabled: Type.Boolean({ description: 'A confirmed TOTP second factor; an enrollment not yet confirmed is not enabled' }),
  recovery_codes_remaining: Type.Integer({
    minimum: 0,
    description: 'Its unused recovery codes (0 when not enabled): with none left, a lost phone means a reset',
  }),
})

export const AdminAccountResponse = Type.Object({
  user_id: Type.String(),
  email: Type.String({ description: 'As registered (trimmed)' }),
  created_at: Timestamp,
  state: Type.Union([Type.Literal('active'), Type.Literal('suspended'), Type.Literal('deleted')], {
    description: 'deleted: a tombstone (email empty); its usage is what a legal hold or a retention floor still keeps',
  }),
  deleted_at: Type.Optional(Timestamp),
  usage: AccountUsage,
  second_factor: SecondFactorStatus,
  moderation: ModerationRecordResponse,
})

export const AdminAccountsQuery = Type.Object({ email: Type.String({ description: 'Compared as sign-in compares it: trimmed, case-insensitive, exact' }) })

export const AdminAccountsResponse = Type.Object({ accounts: Type.Array(AdminAccountResponse, { description: 'The account with this email, or none' }) })
