// Wire shapes of albums, upload sessions, lifecycle writes, the feed and the upgrade ceremony
// (SPEC.md "Albums and manifests", API.md section 6).
import Type from 'typebox'
import { BLOB_BATCH_MAX_HASHES } from './constants.ts'
import { Timestamp, Uuid, WholeNumber } from './common.ts'

export const Hash = Type.String({ pattern: '^[0-9a-f]{64}$', description: 'SHA-256, 64 lowercase hex characters' })
const NullableHash = Type.Union([Hash, Type.Null()])
const ProtocolDate = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'YYYY-MM-DD' })
const Rfc3339 = Type.String({ format: 'date-time', description: 'RFC 3339' })

export const AlbumIdParams = Type.Object({ album_id: Uuid })

export const ProvisionAlbumRequest = Type.Object({ album_id: Uuid }, { additionalProperties: false })

export const ProvisionAlbumResponse = Type.Object({
  album_id: Type.String(),
  protocol_version: Type.String({ description: 'The album’s pinned protocol version' }),
  created: Type.Boolean({ description: 'Advisory' }),
})

export const AlbumView = Type.Object({ album_id: Type.String(), protocol_version: Type.String(), created_at: Timestamp })

export const AlbumListResponse = Type.Object({
  albums: Type.Array(AlbumView, { description: 'Oldest first' }),
})

/** The fields of a manifest envelope, as the ops operation takes them; a delete's narrows some. */
const envelopeFields = {
  crypto_suite_id: WholeNumber({ description: 'Must equal the upload session’s' }),
  protocol_version: ProtocolDate,
  album_id: Type.Optional(Type.Union([Uuid, Type.Null()], { description: 'Must equal the album of the operation (absent reads as null, which never does)' })),
  file_id: Type.String({ ...Uuid, description: 'The asset id: a canonical UUID, the same across the bundle' }),
  amk_version: WholeNumber({ description: 'Album-key epoch' }),
  ciphertext_hash: Hash,
  plaintext_size: WholeNumber(),
  chunk_size: WholeNumber(),
  key_mode: Type.Union([Type.Literal('derived'), Type.Literal('wrapped')]),
  metadata_blob_hash: Type.Optional(NullableHash),
  original_blob_hash: Type.Optional(NullableHash),
  created_by_user: Type.String({ description: 'Must be the caller’s user_id' }),
  created_by_device: Type.String({ pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$', description: 'UUID' }),
  client_version: Type.String(),
  timestamp: Rfc3339,
  action: Type.Union([Type.Literal('create'), Type.Literal('replace')]),
  prior_provenance_hash: Type.Optional(NullableHash),
  retention_until: Type.Optional(Type.Union([Rfc3339, Type.Null()], { description: 'Retention floor' })),
}

export const ManifestEnvelope = Type.Object(envelopeFields, {
  additionalProperties: false,
  description: 'Strict: unknown keys are refused. A nullable field may be null or absent (SPEC.md notation); absent reads as null.',
})

/** The envelope of a `delete` manifest (asset deletion): it names the asset's current original and chain head, and commits no metadata. */
export const DeleteManifestEnvelope = Type.Object(
  {
    ...envelopeFields,
    crypto_suite_id: WholeNumber({ description: 'Any suite the client writes (no upload session to compare with)' }),
    file_id: Type.String({ ...Uuid, description: 'The asset id: must equal the path’s file_id' }),
    ciphertext_hash: Type.String({ ...Hash, description: 'The asset’s current original (SHA-256, 64 lowercase hex characters)' }),
    metadata_blob_hash: Type.Optional(Type.Null({ description: 'A delete commits no metadata blob: null or absent' })),
    original_blob_hash: Type.Optional(Type.Union([Hash, Type.Null()], { description: 'Required: the asset’s current original (null or absent: 422)' })),
    prior_provenance_hash: Type.Optional(
      Type.Union([Hash, Type.Null()], { description: 'The asset’s chain head (the feed’s envelope_hash of its last write)' }),
    ),
    retention_until: Type.Optional(
      Type.Union([Rfc3339, Type.Null()], { description: 'Accepted as on the ops operation, and not applied: the asset ends here' }),
    ),
    action: Type.Literal('delete'),
  },
  { additionalProperties: false, description: 'Strict: unknown keys are refused. A nullable field may be null or absent; absent reads as null.' },
)

export const OpRequest = Type.Object(
  {
    manifest_envelope: ManifestEnvelope,
    manifest_cbor: Type.String({ description: 'Standard base64 of the signed canonical CBOR manifest (1 byte or more); stored verbatim, never parsed' }),
    metadata_blob: Type.Optional(
      Type.Union([Type.String(), Type.Null()], {
        description: 'Standard base64 of the encrypted metadata blob, present exactly when metadata_blob_hash is non-null',
      }),
    ),
  },
  { additionalProperties: false },
)

export const AssetDeleteRequest = Type.Object(
  {
    manifest_envelope: DeleteManifestEnvelope,
    manifest_cbor: Type.String({
      description: 'Standard base64 of the signed canonical CBOR `delete` manifest (1 byte or more); stored verbatim, never parsed',
    }),
  },
  { additionalProperties: false },
)

export const AssetPathParams = Type.Object({ album_id: Uuid, file_id: Uuid })

export const OpResponse = Type.Object({
  asset_id: Type.String(),
  sync_seq: Type.Integer({ description: 'Feed position (of the first application, on a replay)' }),
  action: Type.String(),
  replayed: Type.Boolean({ description: 'Advisory' }),
})

export const UploadBlobDeclaration = Type.Object(
  {
    role: Type.Union([Type.Literal('original'), Type.Literal('derivative')]),
    hash: Hash,
    size: WholeNumber(),
  },
  { additionalProperties: false },
)

export const OpenUploadRequest = Type.Object(
  {
    album_id: Uuid,
    crypto_suite_id: WholeNumber(),
    ciphertext_hash: Hash,
    blobs: Type.Array(UploadBlobDeclaration, { minItems: 1, maxItems: 64 }),
    manifest_envelope: Type.Optional(ManifestEnvelope),
  },
  { additionalProperties: false },
)

export const UploadSessionBlob = Type.Object({
  hash: Type.String(),
  role: Type.String(),
  size: Type.Integer(),
  present: Type.Boolean({ description: 'The caller already stores these bytes: no need to send them' }),
  received: Type.Integer({
    description:
      'The bytes of this blob the server holds: its size when present, else where its recorded parts (sent with Content-Range) end, counted from 0 without a gap, else 0. The next part starts here',
  }),
})

export const UploadSessionResponse = Type.Object({
  upload_id: Type.String(),
  album_id: Type.String(),
  expires_at: Timestamp,
  blobs: Type.Array(UploadSessionBlob),
})

export const UploadIdParams = Type.Object({ upload_id: Uuid })

export const UploadBlobParams = Type.Object({ upload_id: Uuid, hash: Hash })

export const BlobParams = Type.Object({ hash: Hash })

export const BlobBatchRequest = Type.Object(
  {
    hashes: Type.Array(Hash, {
      minItems: 1,
      maxItems: BLOB_BATCH_MAX_HASHES,
      uniqueItems: true,
      description: `1 to ${BLOB_BATCH_MAX_HASHES} distinct blob hashes; the answer keeps their order`,
    }),
  },
  { additionalProperties: false },
)

export const FeedQuery = Type.Object({
  after: WholeNumber({ default: 0 }),
  limit: WholeNumber({ minimum: 1, maximum: 1000, default: 100 }),
})

export const FeedEntry = Type.Object({
  sync_seq: Type.Integer(),
  asset_id: Type.String(),
  action: Type.String(),
  manifest_cbor: Type.String({ description: 'Standard base64, exactly as applied' }),
  envelope_hash: Hash,
  metadata_blob_hash: Type.Optional(Hash),
  applied_at: Timestamp,
})

export const FeedResponse = Type.Object({
  entries: Type.Array(FeedEntry),
  next_after: Type.Integer({ description: 'The last entry’s sync_seq, or `after` itself on an empty page' }),
})

export const UpgradePhaseResponse = Type.Object({
  album_id: Type.String(),
  intent_id: Type.Optional(Type.String({ description: 'Absent in normal operation or once the window expired' })),
  to_protocol_version: Type.Optional(Type.String()),
  expires_at: Type.Optional(Timestamp),
  in_flight: Type.Integer({ description: 'Upload sessions still in flight against the album' }),
})

export const IntentQuery = Type.Object({ intent_id: Type.String({ minLength: 1 }) })

/** An asset in the trash (decision 0059): its signed delete waits there until `purge_at`. */
const trashedFields = {
  trash_seq: Type.Integer({ description: 'The entry’s place in the caller’s trash list: the cursor of `GET /v1/trash`' }),
  album_id: Type.String(),
  file_id: Type.String(),
  trashed_at: Timestamp,
  purge_at: Timestamp,
}

export const TrashedAsset = Type.Object(trashedFields)

export const TrashEntry = Type.Object({
  ...trashedFields,
  manifest_cbor: Type.String({
    description: 'Standard base64 of the signed `delete` manifest the trash holds: clients check its signature and that it names this asset',
  }),
})

/** Paged as receipts are (decision 0046): `after` a trash_seq, `limit` 1-1000. */
export const TrashQuery = Type.Object({
  after: WholeNumber({ default: 0, description: 'Entries numbered after this trash_seq: 0, then the previous page’s next_after' }),
  limit: WholeNumber({ minimum: 1, maximum: 1000, default: 200, description: 'At most this many entries; a shorter page is the last' }),
})

export const TrashPage = Type.Object({
  entries: Type.Array(TrashEntry, { description: 'trash_seq order (the order they went in)' }),
  next_after: Type.Integer({ description: 'The last entry’s trash_seq, or `after` itself on an empty page: the next page’s `after`' }),
})
