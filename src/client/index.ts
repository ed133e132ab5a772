// The photo library's public surface, `@coffer/sdk/photos` (packages/sdk): client format v1 and
// the backup, restore, sync and verify functions on the SDK, for Node 20+ and browsers (no node:
// module; WebCrypto and the noble libraries). Like src/sdk/index.ts, a deliberate barrel for the
// package's entry (decision 0014); the Node adapters (./node/) are not part of it.
export {
  restoreFile,
  openAsset,
  openDerivative,
  openOriginal,
  derivativeBlob,
  FileTransferError,
  CRYPTO_SUITE_V1,
  CLIENT_VERSION,
  IN_MEMORY_FILE_MAX,
  memorySource,
  uploadFraction,
  type TransferTotals,
  type UploadProgress,
  type UploadStage,
  type UploadWay,
  type AssetEntry,
  type AssetKeys,
  type OpenedAsset,
  type BackupOptions,
  type BackupResult,
  type BackupTarget,
  type DerivativeSource,
  type FileSource,
  type MediaFacts,
  type RestoredFile,
  type RestoreSource,
  type ResumeStore,
} from './files.ts'
export { backupFile, partEnd, UPLOAD_PART_BYTES } from './upload.ts'
export {
  albumView,
  backupAll,
  type AlbumView,
  type BackupEvent,
  type BackupRun,
  type BackupSummary,
  type Candidate,
  type FileOutcome,
  type IndexedFile,
  type PendingUpload,
  type SyncState,
} from './sync.ts'
export { contentKeys, contentMacOf, type ContentKeys } from './format/content.ts'
export {
  albumFiles,
  albumNameOf,
  ALBUM_RECORD_TYPE,
  albumRecordId,
  feedEntries,
  findAlbum,
  findAssetEntry,
  liveEntries,
  livePositions,
  namedAlbums,
  OPEN_AHEAD,
  openAlbum,
  openPlanned,
  planAlbum,
  streamLiveEntries,
  type AlbumPlan,
  type Library,
  type NamedAlbum,
  type PlannedAsset,
  type PlannedFile,
} from './albums.ts'
export {
  datedName,
  restoreAll,
  uniqueName,
  type RestoreEvent,
  type RestoreOutcome,
  type RestoreRun,
  type RestoreSummary,
  type RestoreWriter,
} from './restore.ts'
export { verifyAlbum, verifyAssets, type AssetIssue, type AssetReport, type IssueKind, type VerifyOptions } from './verify.ts'
export {
  compareWithLocal,
  firstDifference,
  LocalReadError,
  type ComparedFile,
  type CompareOptions,
  type ComparisonOutcome,
  type ComparisonSummary,
  type LocalFile,
  type StoredFile,
} from './compare.ts'
export { retryingFetch, transientFailure, type RetryOptions } from './retry.ts'
export { albumIdFor, albumName, assetIdFor } from './format/ids.ts'
export { deriveAlbumKey, generateFileKey, generateMasterKey, unwrapFileKey, wrapFileKey, type FileKeyIds } from './format/keys.ts'
export { ciphertextSize, decryptBytes, decryptStream, DEFAULT_CHUNK_SIZE, encryptBytes, encryptStream, type StreamRole } from './format/stream.ts'
export {
  CAPTURED_SOURCES,
  decodeMetadata,
  encodeMetadata,
  openMetadata,
  sealMetadata,
  type AssetMetadata,
  type BlobEntry,
  type CapturedSource,
  type GeoLocation,
} from './format/metadata.ts'
export { capturedFromTags, dateTaken, fileNameDate, metadataTaken, TAKEN_TAGS, type Taken, type TakenFacts, type TakenSource } from './taken.ts'
export { generateXWingKeyPair, xwingDecapsulate, xwingEncapsulate, type XWingKeyPair } from './format/xwing.ts'
export {
  ESCROW_KDF_DEFAULTS,
  ESCROW_KDF_LIMITS,
  generateRecoveryKey,
  openEscrow,
  portableArgon2id,
  recoveryKeyFromPhrase,
  recoveryPhrase,
  sealEscrow,
  type Argon2id,
  type EscrowedKeys,
  type EscrowKdfParams,
} from './format/recovery.ts'
export { ClientFormatError, type FormatErrorCode } from './format/errors.ts'
export { AssetNotFoundError, AssetRetainedError, deleteFile, replaceFile, type DeleteResult, type ReplaceTarget } from './edits.ts'
export {
  CLIENT_PROTOCOL_MAX,
  CLIENT_PROTOCOL_MIN,
  pickProtocol,
  protocolRangeOf,
  ProtocolUnsupportedError,
  upgradeAlbum,
  waitForUpgrade,
  writeWithProtocol,
  type ProtocolRange,
  type UpgradeOutcome,
  type UpgradeTiming,
} from './protocol.ts'
export {
  addToDirectory,
  AccountSetUpElsewhereError,
  deviceEntry,
  DEVICE_NAME_MAX,
  fetchedDirectory,
  fetchRecoveryEscrow,
  newXWingSeed,
  NoEscrowError,
  openRecoveryEscrow,
  planFirstDevice,
  publishFirstDevice,
  recoverWithPhrase,
  RecoveryPhraseError,
  setUpFirstDevice,
  withFreshSignIn,
  type AccountIdentity,
  type AccountKeys,
  type FirstDevicePlan,
  type FirstDeviceSetUp,
  type PasswordPrompt,
  type PhrasePrompt,
  type PublishFirstDeviceOptions,
  type RecoverOptions,
  type Recovered,
  type SetUpFirstDeviceOptions,
} from './account.ts'
export {
  addDeviceByPairing,
  isPairingCode,
  joinByPairing,
  openPairing,
  PAIRING_LIFETIME_MS,
  PAIRING_POLL_INTERVAL_MS,
  pairingCodeLive,
  type AddDeviceOptions,
  type DeviceAdded,
  type Joined,
  type JoinOptions,
  type Pairing,
} from './pairing.ts'
export { EnrollmentError, type ConfirmSas, type EnrollmentStop } from './enrollment.ts'
