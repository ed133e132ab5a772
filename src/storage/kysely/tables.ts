// Row types of every table, in camelCase (CamelCasePlugin maps them to snake_case columns).
// Instants are Unix milliseconds in BIGINT columns; flags are nullable instants, not booleans,
// so both engines read them back the same way.

export interface AccountsTable {
  userId: string
  email: string
  /** Trimmed, lowercased email: the case-insensitive unique key. */
  emailKey: string
  passwordHash: string
  displayName: string | null
  createdAt: number
  failedPasswordCount: number
  lockedUntil: number | null
  /** Hybrid identity public key (1984 bytes), bound by the first directory publish. */
  identityKey: Uint8Array | null
  /**
   * Sessions stamped with another epoch are dead. Ending every session of the account (change
   * password, revoke-all) moves it, so a session opened concurrently from a stale read dies too.
   */
  sessionEpoch: number
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
}

export interface RelayMessagesTable {
  channelHash: string
  seq: number
  direction: 'to_initiator' | 'to_enrollee'
  payload: string
}

export interface RedeemThrottleTable {
  clientAddress: string
  windowStartedAt: number
  failures: number
}

export interface EscrowsTable {
  userId: string
  blob: Uint8Array
  storedAt: number
}

export interface Tables {
  accounts: AccountsTable
  sessions: SessionsTable
  cohorts: CohortsTable
  secondFactors: SecondFactorsTable
  totpUsedSteps: TotpUsedStepsTable
  mfaChallenges: MfaChallengesTable
  directories: DirectoriesTable
  revokeChallenges: RevokeChallengesTable
  enrollmentCodes: EnrollmentCodesTable
  relayChannels: RelayChannelsTable
  relayMessages: RelayMessagesTable
  redeemThrottle: RedeemThrottleTable
  escrows: EscrowsTable
}
