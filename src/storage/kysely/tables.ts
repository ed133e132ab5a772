// Row types of every table, in camelCase (CamelCasePlugin maps them to snake_case columns).
// Instants are Unix milliseconds in BIGINT columns; flags are nullable instants, not booleans,
// so both engines read them back the same way.
import type { Generated } from 'kysely'

export interface AccountsTable {
  userId: string
  email: string
  /** Trimmed, lowercased email: the case-insensitive unique key. */
  emailKey: string
  passwordHash: string
  displayName: string | null
  createdAt: number
  /** Hybrid identity public key (1984 bytes), bound by the first directory publish. */
  identityKey: Uint8Array | null
  /**
   * Sessions stamped with another epoch are dead. Ending every session of the account (change
   * password, revoke-all) moves it, so a session opened concurrently from a stale read dies too.
   */
  sessionEpoch: number
  /** Set while the account is suspended (moderation). */
  suspendedAt: number | null
  /** Last moderation event number of the account (events are ordered by it). */
  moderationSeq: number
  /** Set when the account was deleted: the row is a tombstone, its email and credentials scrubbed. */
  deletedAt: number | null
}

/** A deleted account whose rows are not all gone yet (a legal hold or a retention floor may keep some). */
export interface AccountPurgesTable {
  userId: string
  deletedAt: number
}

export interface SessionsTable {
  sessionId: string
  userId: string
  /** Shared by every session descending from one sign-in through refreshes. */
  lineageId: string
  /** The account's session epoch when the lineage was opened (see AccountsTable.sessionEpoch). */
  epoch: number
  accessHash: string
  refreshHash: string
  accessExpiresAt: number
  refreshExpiresAt: number
  createdAt: number
  authenticatedAt: number
  userAgent: string | null
  ipAddress: string | null
  cohortHash: string | null
  deviceId: string | null
  /** Set when the refresh token was used; the row stays for reuse detection until it expires. */
  rotatedAt: number | null
  successorId: string | null
}

export interface CohortsTable {
  userId: string
  cohortHash: string
  firstSeen: number
  lastSeen: number
}

export interface SecondFactorsTable {
  userId: string
  status: 'pending' | 'active'
  /** TOTP secret sealed with the secret box (AES-256-GCM), bound to the user id. */
  secretBox: Uint8Array
  updatedAt: number
}

export interface TotpUsedStepsTable {
  userId: string
  step: number
  usedAt: number
}

/** An unused recovery code of the account's second factor (its row goes with the factor's). */
export interface RecoveryCodesTable {
  userId: string
  /** Hex HMAC-SHA-256 of the normalized code under the recovery-code key (crypto/recovery-codes.ts). */
  codeHash: string
  createdAt: number
}

export interface MfaChallengesTable {
  tokenHash: string
  userId: string
  expiresAt: number
  failedAttempts: number
  /** The account's session epoch at login: a password change in between kills the challenge. */
  epoch: number
}

export interface DirectoriesTable {
  userId: string
  directoryVersion: number
  /** The signed directory exactly as received. */
  body: Uint8Array
  etag: string
  publishedAt: number
}

export interface RevokeChallengesTable {
  challengeHash: string
  userId: string
  expiresAt: number
}

export interface EnrollmentCodesTable {
  codeHash: string
  /** Hash of the 10-digit spelling; redeeming either spelling deletes the row. */
  textHash: string
  userId: string
  expiresAt: number
}

export interface RelayChannelsTable {
  /** Hash of the channel id: the id itself is a capability and is never stored. */
  channelHash: string
  initiatorId: string
  createdAt: number
  expiresAt: number
  /** Arrival counter of the channel's payloads (both mailboxes). */
  nextSeq: number
  /** Payloads each mailbox holds: the bound an append checks on the row it locks (decision 0036). */
  heldToInitiator: number
  heldToEnrollee: number
}

export interface RelayMessagesTable {
  channelHash: string
  seq: number
  direction: 'to_initiator' | 'to_enrollee'
  payload: string
}

/** A windowed budget of attempts (for example refused redemptions per client address). */
export interface BatchDownloadSlotsTable {
  userId: string
  /** 0 to the per-account cap less one. */
  slot: number
  /** The batch holding it, so that only its own release frees it. */
  holder: string
  /** When a holder that never released it (a killed process) stops holding it. */
  expiresAt: number
}

export interface AttemptBudgetsTable {
  scope: string
  subject: string
  /** The end of the current window; a reservation after it starts a new one. */
  windowEndsAt: number
  /** Attempts counted in the window, reserved ones included. */
  failures: number
}

export interface EscrowsTable {
  userId: string
  blob: Uint8Array
  storedAt: number
}

export interface AlbumsTable {
  albumId: string
  ownerId: string
  /** The protocol date the album is pinned to. */
  protocolVersion: string
  createdAt: number
  /** Last sync_seq handed out; taking the next one locks the album row (writes queue per album). */
  nextSyncSeq: number
  /** The live (or lapsed) upgrade ceremony; lapsed once upgradeExpiresAt has passed. */
  upgradeIntentId: string | null
  upgradeToVersion: string | null
  upgradeIntent: Uint8Array | null
  upgradeExpiresAt: number | null
}

export interface AlbumUpgradesTable {
  albumId: string
  intentId: string
  fromVersion: string
  toVersion: string
  intent: Uint8Array
  tombstone: Uint8Array
  committedAt: number
}

export interface UploadSessionsTable {
  uploadId: string
  ownerId: string
  albumId: string
  cryptoSuiteId: number
  ciphertextHash: string
  createdAt: number
  expiresAt: number
  /** Set when a lifecycle write used the session or the client aborted it. */
  closedAt: number | null
}

export interface UploadBlobsTable {
  uploadId: string
  hash: string
  role: 'original' | 'derivative'
  size: number
}

/** A blob a lifecycle write on this session is storing besides the uploaded ones (metadata, manifest). */
/** Wrong sign-ins for an email with no account (by SHA-256 of the email key). */
/** Wrong passwords per sign-in subject (the SHA-256 of an email key, with or without an account). */
export interface PasswordFailuresTable {
  subject: string
  /** Consecutive wrong passwords (reserved checks included), restarted by a lock. */
  failures: number
  lastFailedAt: number
  lockedUntil: number | null
}

/** Hashes whose files are to be looked at again (garbage collection removes each unneeded one). */
export interface BlobReclaimsTable {
  hash: string
  /** Moves on every new entry of a hash already queued. */
  generation: number
}

/** A hold on the removal of blob files (a backup copying them); lapsed once expiresAt passed. */
export interface GcHoldsTable {
  holdId: string
  /** Who holds it and why, for an operator reading the table ("backup to /mnt/b"). */
  reason: string
  createdAt: number
  expiresAt: number
}

export interface SecurityEventsTable {
  eventId: string
  userId: string
  kind: string
  at: number
  /** When what the event started ends (a lock, a refusal of codes). */
  until: number | null
  ipAddress: string | null
  userAgent: string | null
}

export interface UploadExtrasTable {
  uploadId: string
  hash: string
}

/** A part of a blob uploaded in pieces: bytes [offset, offset + size) of the session's blob, stored as `name`. */
export interface UploadPartsTable {
  uploadId: string
  hash: string
  offset: number
  size: number
  name: string
  createdAt: number
}

export interface BlobsTable {
  /** The account that uploaded these bytes (content addressing is per owner). */
  ownerId: string
  hash: string
  size: number
  storedAt: number
}

/** What an account stores (storage quota); its row is the lock upload opens of the account queue on. */
export interface AccountStorageTable {
  userId: string
  /** Size of the distinct blobs the account owns (its `blobs` rows), kept with every insert and delete of them. */
  storedBytes: number
}

export interface AssetsTable {
  assetId: string
  albumId: string
  ownerId: string
  /** SHA-256 of the last applied manifest_cbor. */
  chainHead: string
  originalHash: string
  retentionUntil: number | null
  createdAt: number
  updatedAt: number
  /** Set when an operator took the asset down: its blobs are withheld (451). */
  takenDownAt: number | null
  /** Set while a legal hold keeps every blob of the asset from garbage collection. */
  legalHoldAt: number | null
  /** Set when a `delete` manifest ended the asset: it is no longer live (its bundle is superseded). */
  deletedAt: number | null
}

export type BlobRole = 'original' | 'derivative' | 'metadata' | 'provenance'

export interface AssetBlobsTable {
  assetId: string
  /** The feed position of the bundle this reference belongs to. */
  syncSeq: number
  hash: string
  ownerId: string
  role: BlobRole
  size: number
  uploadId: string
  /** Set when a later bundle replaced this one; null references are the live ones. */
  supersededAt: number | null
}

export interface AlbumOpsTable {
  albumId: string
  syncSeq: number
  manifestHash: string
  assetId: string
  action: 'create' | 'replace' | 'delete'
  manifestCbor: Uint8Array
  metadataBlobHash: string | null
  /** The upload session the write applied; null for a delete (it uses none). */
  uploadId: string | null
  appliedAt: number
}

export interface AttestationKeysTable {
  /** Hex SHA-256 of the hybrid public key. */
  keyId: string
  publicKey: Uint8Array
  /** The 64 seed bytes, sealed with the secret box. */
  privateBox: Uint8Array
  status: 'active' | 'retired'
  notBefore: number
  notAfter: number | null
}

export interface ReceiptChainTable {
  id: number
  lastSeq: number
  lastReceiptHash: string | null
  activeKeyId: string | null
  holder: string | null
  leaseUntil: Generated<number>
}

/** A bundle's receipts handed to its chain's holder (decision 0073). */
export interface ReceiptRequestsTable {
  requestId: string
  chain: number
  assetId: string
  uploadId: string
  /** JSON: the bundle's blobs and envelope hash. */
  bundle: string
  requestedAt: number
}

export interface ReceiptsTable {
  receiptSeq: number
  /** PUBLIC_ORIGIN when the receipt was issued. */
  serverId: string
  assetId: string
  uploadId: string
  blobRole: BlobRole
  ciphertextHash: string
  size: number
  envelopeHash: string | null
  receivedAt: number
  serverKeyId: string
  priorReceiptHash: string | null
  /** The signed receipt exactly as issued: this is the receipt, the other columns read it. */
  receiptCbor: Uint8Array
}

export interface DeepScanBudgetsTable {
  userId: string
  windowStartedAt: number
  bytesUsed: number
}

export interface ModerationEventsTable {
  userId: string
  seq: number
  action: 'suspended' | 'reinstated' | 'second_factor_reset' | 'account_deleted' | 'taken_down' | 'restored' | 'legal_hold' | 'hold_lifted'
  assetId: string | null
  reason: string | null
  at: number
  actor: 'admin_token' | 'cli' | 'owner' | null
}

/** An asset in the trash: its signed delete, applied by the maintenance pass at `purgeAt` (decision 0059). */
export interface TrashTable {
  trashSeq: Generated<number>
  userId: string
  albumId: string
  fileId: string
  manifestHash: string
  manifestCbor: Uint8Array
  /** The delete's manifest envelope, as the request sent it (JSON). */
  manifestEnvelope: string
  trashedAt: number
  purgeAt: number
}

/** A member of a shared album, or an invitation to be one (decision 0067). */
export interface AlbumMembersTable {
  albumId: string
  userId: string
  role: 'viewer' | 'contributor'
  state: 'invited' | 'active'
  invitedBy: string
  /** The owner's client's sealed keys and what else it sends the invitee: opaque here. */
  invitation: Uint8Array
  createdAt: number
  acceptedAt: number | null
  /** The member's own client's sealing of the album keys it received: opaque here (migration 0023). */
  keyring: Uint8Array | null
}

/** An account's partner: its clients share every album with it (migration 0024). */
export interface PartnersTable {
  ownerId: string
  partnerId: string
  role: 'viewer' | 'contributor'
  createdAt: number
}

/** A public link to an album or a selection of its photos (migration 0025, decision 0068). */
export interface AlbumLinksTable {
  linkId: string
  albumId: string
  ownerId: string
  /** Hex SHA-256 of the link's access token (derived on the client from the secret in the URL's fragment, and the password). */
  tokenHash: string
  /** What the owner's client sealed under the link's key: opaque here. */
  envelope: Uint8Array
  /** The owner's client's copy of the link's secret and key, sealed under its master key: opaque here. */
  ownerCopy: Uint8Array
  /** 1: only the photos in album_link_assets; 0: the whole album. */
  selection: number
  /** 1: originals may be read too. */
  downloads: number
  passwordSalt: Uint8Array | null
  passwordMemoryKib: number | null
  passwordIterations: number | null
  expiresAt: number | null
  maxOpens: number | null
  opens: number
  lastOpenedAt: number | null
  createdAt: number
  revokedAt: number | null
  disabledAt: number | null
  disabledReason: string | null
}

export interface AlbumLinkAssetsTable {
  linkId: string
  assetId: string
}

/** One open of a link: its token's hash, until it expires or the link stops. */
export interface LinkSessionsTable {
  sessionHash: string
  linkId: string
  createdAt: number
  expiresAt: number
}

export interface Tables {
  accounts: AccountsTable
  accountPurges: AccountPurgesTable
  sessions: SessionsTable
  cohorts: CohortsTable
  secondFactors: SecondFactorsTable
  totpUsedSteps: TotpUsedStepsTable
  recoveryCodes: RecoveryCodesTable
  mfaChallenges: MfaChallengesTable
  directories: DirectoriesTable
  revokeChallenges: RevokeChallengesTable
  enrollmentCodes: EnrollmentCodesTable
  relayChannels: RelayChannelsTable
  relayMessages: RelayMessagesTable
  attemptBudgets: AttemptBudgetsTable
  batchDownloadSlots: BatchDownloadSlotsTable
  escrows: EscrowsTable
  albums: AlbumsTable
  albumUpgrades: AlbumUpgradesTable
  uploadSessions: UploadSessionsTable
  uploadBlobs: UploadBlobsTable
  uploadExtras: UploadExtrasTable
  uploadParts: UploadPartsTable
  passwordFailures: PasswordFailuresTable
  securityEvents: SecurityEventsTable
  blobReclaims: BlobReclaimsTable
  gcHolds: GcHoldsTable
  blobs: BlobsTable
  accountStorage: AccountStorageTable
  assets: AssetsTable
  assetBlobs: AssetBlobsTable
  albumOps: AlbumOpsTable
  attestationKeys: AttestationKeysTable
  receiptChain: ReceiptChainTable
  receiptRequests: ReceiptRequestsTable
  receipts: ReceiptsTable
  deepScanBudgets: DeepScanBudgetsTable
  moderationEvents: ModerationEventsTable
  trash: TrashTable
  albumMembers: AlbumMembersTable
  partners: PartnersTable
  albumLinks: AlbumLinksTable
  albumLinkAssets: AlbumLinkAssetsTable
  linkSessions: LinkSessionsTable
}
