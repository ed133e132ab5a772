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
}

export interface SessionsTable {
  sessionId: string
  userId: string
  /** Shared by every session descending from one sign-in through refreshes. */
  lineageId: string
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
}

export interface Tables {
  accounts: AccountsTable
  sessions: SessionsTable
  cohorts: CohortsTable
  secondFactors: SecondFactorsTable
  totpUsedSteps: TotpUsedStepsTable
  mfaChallenges: MfaChallengesTable
}
