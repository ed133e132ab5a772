// The public surface of @coffer/sdk (packages/sdk): the one entry an app imports. A deliberate
// exception to "no barrel files" (decision 0014): a published package needs one entry; every
// module below is free of side effects, so bundlers drop what an app does not use.
export { CofferClient, CofferProblem, problemOf } from './client.ts'
export type {
  AccountExportDocument,
  AccountExportDownload,
  Advisory,
  Album,
  AlbumList,
  AssetDeletion,
  AssetReceipts,
  AssetUpload,
  AttestationKeys,
  BlobRefusal,
  BundleHashes,
  Channel,
  CofferClientOptions,
  Devices,
  DownloadedBlobs,
  EnrollmentChannelEnd,
  EnrollmentCode,
  Feed,
  FetchedDirectory,
  LifecycleWrite,
  LoginResult,
  ManifestEnvelopeFields,
  ModerationRecord,
  OpenUpload,
  OpResult,
  Problem,
  Profile,
  RelayDirection,
  RevokeChallenge,
  SecondFactorStatus,
  SecurityEvents,
  StorageUsage,
  StorageVerdicts,
  StorageVerification,
  StoredEscrow,
  Tokens,
  Trash,
  Trashed,
  UploadSessionView,
  UpgradePhase,
} from './client.ts'
export { CofferAdmin, type AdminAccount, type CofferAdminOptions } from './admin.ts'
export { typedSecondFactorCode } from './second-factor-code.ts'
export { IdentityKey, verifyHybrid } from './identity.ts'
export { generateHybridKeyPair, hybridKeyPairFromSeeds, hybridSign, hybridVerify, keyFingerprint, type HybridKeyPair, type HybridVerifier } from './hybrid.ts'
export { verifyReceipts, type KeysDocument, type ReceiptCheck, type ReceiptView } from './receipts.ts'
export { DIRECTORY_CONTEXT, DIRECTORY_MAX_DEVICES, readDirectory, signDirectory, type DeviceDirectory, type DirectoryDevice, type Signer } from './directory.ts'
export {
  MANIFEST_CONTEXT,
  buildAssetDeletion,
  buildEnvelope,
  buildLifecycleWrite,
  manifestSigner,
  readManifest,
  readManifestWith,
  signManifest,
  statedPlaintextSize,
  type AssetDeletionInput,
  type AssetDeletionRequest,
  type DeleteEnvelope,
  type Envelope,
  type EnvelopeInput,
  type LastWrite,
  type LifecycleWriteInput,
  type LifecycleWriteRequest,
  type ReadManifest,
  type SignedManifest,
} from './manifest.ts'
export { CofferInputError } from './input-error.ts'
export { concatBytes, equalBytes, fromBase64, fromHex, sha256, sha256Hex, toBase64, toHex, utf8 } from './bytes.ts'
export { decodeCanonical, encodeCanonical } from '../codec/cbor.ts'
export {
  CUSTODY_RECEIPT_CONTEXT,
  ED25519_PUBLIC_KEY_BYTES,
  ED25519_SIGNATURE_BYTES,
  HYBRID_ALGORITHM,
  HYBRID_PUBLIC_KEY_BYTES,
  HYBRID_SEED_BYTES,
  HYBRID_SIGNATURE_BYTES,
  ML_DSA_65_PUBLIC_KEY_BYTES,
  ML_DSA_65_SIGNATURE_BYTES,
  REVOKE_ALL_CONTEXT,
  contextSigningBytes,
  encodeReceiptBody,
  encodeSignedReceipt,
  receiptSigningBytes,
  revokeAllSigningBytes,
  type ReceiptBody,
} from '../contract/signing.ts'
export { DIRECTORY_MAX_BYTES, IDENTITY_KEY_HEADER } from '../contract/devices.ts'
export { errorCatalog, type ErrorCode } from '../contract/errors.ts'
