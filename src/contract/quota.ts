// Wire shape of the storage quota (docs/decisions/0008-storage-quota.md): what an account uses
// of it, for its owner.
import Type from 'typebox'

export const StorageUsageResponse = Type.Object({
  stored_bytes: Type.Integer({
    description:
      'Size of the distinct blobs the account stores, every role (metadata and provenance included); blobs nothing keeps any more go at the next maintenance pass',
  }),
  pending_bytes: Type.Integer({ description: 'Bytes its open upload sessions declare that it does not store yet (each hash once)' }),
  quota_bytes: Type.Optional(
    Type.Integer({
      description:
        'ACCOUNT_QUOTA_BYTES: stored_bytes + pending_bytes may not be taken above it by opening an upload session; absent when the server sets no byte quota',
    }),
  ),
  open_uploads: Type.Integer({ description: 'Its upload sessions neither closed nor expired' }),
  max_open_uploads: Type.Integer({ description: 'MAX_OPEN_UPLOADS: open upload sessions allowed at once' }),
})
