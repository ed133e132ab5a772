// The storage port: every read and write the services make, named for what it guarantees.
// Instants are Unix milliseconds. Methods that decide a race say which side wins; all of
// them hold on both engines and across several instances sharing one database.

export type Engine = 'sqlite' | 'postgres'

export interface Account {
  readonly userId: string
  readonly email: string
  /** Trimmed, lowercased email: what sign-in compares. */
  readonly emailKey: string
  readonly passwordHash: string
  readonly displayName: string | null
  readonly createdAt: number
  /** Sessions of another epoch are dead (see storage/kysely/tables.ts). */
  readonly sessionEpoch: number
  /** Set while the account is suspended. */
  readonly suspendedAt: number | null
  /** Set once the account is deleted: the row is a tombstone (no email, no credentials). */
  readonly deletedAt: number | null
}

export interface NewAccount {
  readonly userId: string
  readonly email: string
  readonly emailKey: string
  readonly passwordHash: string
  readonly createdAt: number
}

export interface NewSession {
  readonly sessionId: string
  readonly userId: string
  readonly lineageId: string
  /** The account's session epoch this session belongs to. */
  readonly epoch: number
  readonly accessHash: string
  readonly refreshHash: string
  readonly accessExpiresAt: number
  readonly refreshExpiresAt: number
  readonly createdAt: number
  readonly authenticatedAt: number
  readonly userAgent: string | null
  readonly ipAddress: string | null
  readonly cohortHash: string | null
  readonly deviceId: string | null
}

export interface Session extends NewSession {
  readonly rotatedAt: number | null
  readonly successorId: string | null
  /** The account's current session epoch, read with the session. */
  readonly accountEpoch: number
}

/**
 * What the bearer check reads, in one indexed lookup on the access-token hash: the session
 * and its account (a primary-key join), so that the operation behind it reads no more.
 */
export interface BearerSession {
  readonly sessionId: string
  readonly authenticatedAt: number
  readonly accessExpiresAt: number
  readonly rotatedAt: number | null
  readonly epoch: number
  readonly accountEpoch: number
  readonly account: Account
}

export interface Cohort {
  readonly cohortHash: string
  readonly firstSeen: number
  readonly lastSeen: number
}

export interface SecondFactor {
  readonly status: 'pending' | 'active'
  readonly secretBox: Buffer
}

export interface MfaChallenge {
  readonly tokenHash: string
  readonly userId: string
  readonly expiresAt: number
  readonly failedAttempts: number
  readonly epoch: number
}

export interface AccountStore {
  /** Inserts unless the email key is taken; false when taken. Of two racing inserts of one key, one wins. */
  insertAccount(account: NewAccount): Promise<boolean>
  findAccountByEmailKey(emailKey: string): Promise<Account | undefined>
  findAccount(userId: string): Promise<Account | undefined>
  /** Writes the new hash and moves the session epoch in one statement (every session dies); returns the new epoch. */
  changePasswordHash(userId: string, passwordHash: string): Promise<number>
  setDisplayName(userId: string, displayName: string | null): Promise<void>
}

/** The lockout rule (API.md section 3), with the lock's duration in milliseconds. */
export interface LockoutRule {
  readonly threshold: number
  readonly durationMs: number
}

/**
 * Wrong passwords per sign-in subject: the SHA-256 of an email key, whether or not an account
 * has it, so that an unknown email is counted and locked exactly as an account is.
 */
export interface PasswordFailureStore {
  /**
   * Counts a password check before its hash runs, unless the subject is locked: one conditional
   * upsert, so racing checks (on any instance) never get more than `threshold` hashes per lock.
   * The check that reaches the threshold sets the lock at once and restarts the count; a right
   * password clears it again. A count whose last check is `durationMs` old restarts at 1.
   * Undefined when the subject is locked; otherwise the lock this check set, if it set one.
   */
  reservePasswordCheck(subject: string, now: number, rule: LockoutRule): Promise<{ readonly lockedUntil: number | null } | undefined>
  /** The lock in force or ended, if any. */
  findPasswordLock(subject: string): Promise<number | null>
  /** A right password: the count and any lock go. */
  clearPasswordFailures(subject: string): Promise<void>
}

/** redeem: refused redemptions per client address; second_factor: wrong codes per account; export: account exports per account. */
export type BudgetScope = 'redeem' | 'second_factor' | 'export'

export interface AttemptBudget {
  readonly windowEndsAt: number
  /** Attempts counted in the window, reserved ones included. */
  readonly failures: number
}

/** Windowed budgets of refused attempts per (scope, subject). */
export interface AttemptBudgetStore {
  /**
   * Counts an attempt before it is looked at, while the subject has fewer than `maxFailures`
   * counted in its window (a window that has ended restarts at `now` for `windowMs`): one
   * conditional upsert, so racing attempts (on any instance) never get more than `maxFailures`
   * looked at. The budget after counting, or undefined when it is spent.
   */
  reserveAttempt(scope: BudgetScope, subject: string, now: number, limit: { readonly maxFailures: number; readonly windowMs: number }): Promise<AttemptBudget | undefined>
  /** Uncounts a reserved attempt that succeeded: only refused ones count. */
  releaseAttempt(scope: BudgetScope, subject: string): Promise<void>
  findAttemptBudget(scope: BudgetScope, subject: string): Promise<AttemptBudget | undefined>
}

export type SecurityEventKind = 'password_lockout' | 'second_factor_lockout' | 'recovery_code_used'

export interface SecurityEvent {
  readonly kind: SecurityEventKind
  readonly at: number
  /** When what it started ends. */
  readonly until: number | null
  readonly ipAddress: string | null
  readonly userAgent: string | null
}

export interface SecurityEventStore {
  recordSecurityEvent(userId: string, event: SecurityEvent): Promise<void>
  /** The account's newest `limit` events, oldest first. */
  listSecurityEvents(userId: string, limit: number): Promise<SecurityEvent[]>
}

export interface SessionStore {
  openSession(session: NewSession): Promise<void>
  findSessionByRefreshHash(refreshHash: string): Promise<Session | undefined>
  findSession(sessionId: string): Promise<Session | undefined>
  /** Marks a live session rotated into `successorId`. Of racing claims exactly one gets true. */
  claimRotation(sessionId: string, successorId: string, now: number): Promise<boolean>
  /** Closes the live (unrotated) sessions of a lineage; returns how many. */
  closeLiveSessionsOfLineage(lineageId: string): Promise<number>
  /** Closes the unrotated session an access token was issued to, live or expired. */
  closeSessionByAccessHash(accessHash: string): Promise<void>
  /** Closes one live session of the account; false when there is no such live session. */
  closeLiveSessionOf(userId: string, sessionId: string, now: number): Promise<boolean>
  /** Deletes every session record of the account but one (dead ones included): clean-up after an epoch move. */
  closeOtherSessions(userId: string, keepSessionId: string): Promise<void>
  setAuthenticatedAt(sessionId: string, authenticatedAt: number): Promise<void>
  /** Carries one session into a new epoch (the caller of a password change). */
  restampSession(sessionId: string, epoch: number, authenticatedAt: number): Promise<void>
  /** Unrotated sessions of the current epoch whose refresh token has not expired, oldest first. */
  listLiveSessions(userId: string, now: number): Promise<Session[]>
  /** Records a sighting: `first_seen` once, `last_seen` moved forward. */
  recordCohort(userId: string, cohortHash: string, now: number): Promise<void>
  /** Every cohort ever seen for the account, oldest first sighting first. */
  listCohorts(userId: string): Promise<Cohort[]>
}

export interface SecondFactorStore {
  findSecondFactor(userId: string): Promise<SecondFactor | undefined>
  /** One stored TOTP secret, any account's (start-up checks that SECRET_KEY still opens them). */
  anySecondFactor(): Promise<{ userId: string; secretBox: Buffer } | undefined>
  /** Stores a pending secret, replacing an earlier pending one; false (nothing written) when active. */
  putPendingSecondFactor(userId: string, secretBox: Buffer, now: number): Promise<boolean>
  /** pending -> active, only while the pending secret is still `secretBox` (the one the code was checked against). */
  activateSecondFactor(userId: string, secretBox: Buffer, now: number): Promise<boolean>
  /** active -> none, its recovery codes with it (in the same statement); false when not active. */
  removeActiveSecondFactor(userId: string): Promise<boolean>
  /**
   * Replaces every recovery code of the account's active factor with these (hashes, at least
   * one); false, writing nothing, when no factor is active. Like useRecoveryCode, it takes the
   * factor's row lock first, for the rest of the transaction it runs in: the writers of one
   * account's codes (and a removal of its factor) queue there.
   */
  replaceRecoveryCodes(userId: string, codeHashes: readonly string[], now: number): Promise<boolean>
  /**
   * Deletes an unused recovery code of the account's active factor (taking the factor's row lock
   * first): of racing uses of one code exactly one gets true.
   */
  useRecoveryCode(userId: string, codeHash: string): Promise<boolean>
  /** How many unused recovery codes the account has (none without an active factor). */
  countRecoveryCodes(userId: string): Promise<number>
  /** Enters a TOTP step in the replay ledger. One atomic insert: of racing claims of one step exactly one gets true. */
  claimTotpStep(userId: string, step: number, now: number): Promise<boolean>
  insertMfaChallenge(challenge: MfaChallenge): Promise<void>
  /**
   * Counts one code check against a live challenge before the code is looked at, while fewer
   * than `maxAttempts` are counted: one conditional update, so racing checks never get more
   * than `maxAttempts` codes looked at. The challenge after counting, or undefined when it is
   * unknown, expired or spent.
   */
  reserveMfaAttempt(tokenHash: string, now: number, maxAttempts: number): Promise<MfaChallenge | undefined>
  /** Deletes the challenge if still live and returns it; of racing consumers exactly one gets it. */
  consumeMfaChallenge(tokenHash: string, now: number): Promise<MfaChallenge | undefined>
  deleteMfaChallenge(tokenHash: string): Promise<void>
}

export interface Directory {
  readonly version: number
  readonly body: Buffer
  readonly etag: string
}

export type RelayDirection = 'to_initiator' | 'to_enrollee'

export interface Escrow {
  readonly blob: Buffer
  readonly storedAt: number
}

export interface DirectoryStore {
  /**
   * Binds `identityKey` to the account unless one is bound already: 'bound' when this call
   * bound it, 'same' when it was already this key, 'mismatch' (nothing written) otherwise.
   * Of racing first binds of different keys exactly one is 'bound'.
   */
  bindIdentityKey(userId: string, identityKey: Buffer): Promise<'bound' | 'same' | 'mismatch'>
  findIdentityKey(userId: string): Promise<Buffer | undefined>
  /**
   * Stores the directory when `version` exceeds the stored one: the compare and the store are
   * one statement, so of racing publishes of one version exactly one is stored. Otherwise
   * returns the version that stays stored.
   */
  publishDirectoryIfNewer(userId: string, directory: Directory, now: number): Promise<{ readonly stored: true } | { readonly stored: false; readonly storedVersion: number }>
  findDirectory(userId: string): Promise<Directory | undefined>
}

export interface RevokeStore {
  insertRevokeChallenge(challenge: { readonly challengeHash: string; readonly userId: string; readonly expiresAt: number }): Promise<void>
  /** The challenge, live or expired, with the bound identity key of its account (null when none is bound); nothing is written. */
  findRevokeChallenge(challengeHash: string): Promise<{ readonly userId: string; readonly expiresAt: number; readonly identityKey: Buffer | null } | undefined>
  /** Deletes the challenge and returns it, live or expired: of racing burns of one challenge exactly one gets it. */
  burnRevokeChallenge(challengeHash: string): Promise<{ readonly userId: string; readonly expiresAt: number } | undefined>
  /** Moves the session epoch and deletes every session record of the account; returns how many were live. In a transaction. */
  closeAllSessions(userId: string, now: number): Promise<number>
  /**
   * Burns the challenge and, when this burn is the one that deleted it, closes every session of
   * its account as closeAllSessions does; undefined when the challenge was gone. In a transaction.
   */
  revokeAllByChallenge(challengeHash: string, now: number): Promise<number | undefined>
}

export interface EnrollmentStore {
  /** False (nothing written) when the text spelling collides with a live code's. */
  insertEnrollmentCode(code: { readonly codeHash: string; readonly textHash: string; readonly userId: string; readonly expiresAt: number }): Promise<boolean>
  /** Deletes the live code having either spelling hash and returns its issuer; of racing redeems exactly one gets it. */
  redeemEnrollmentCode(spellingHash: string, now: number): Promise<string | undefined>
  openChannel(channel: { readonly channelHash: string; readonly initiatorId: string; readonly createdAt: number; readonly expiresAt: number }): Promise<void>
  /** Closes a live channel of this initiator (both mailboxes go with it); false otherwise. */
  closeChannel(channelHash: string, initiatorId: string, now: number): Promise<boolean>
}

/**
 * The relay's mailbox writes (decisions 0025 and 0036): each is one atomic write of its own,
 * never part of a transaction, and does not wait for the disk. A crash of the machine may lose
 * the last moments' posts or drains, which the devices then post or drain again.
 */
export interface RelayMailboxes {
  /**
   * Appends a payload to one mailbox of a live channel, in arrival order. Racing appends to one
   * channel are serialized on the channel row, so the mailbox bound is exact.
   */
  appendToMailbox(channelHash: string, direction: RelayDirection, payload: string, now: number, maxPayloads: number): Promise<'appended' | 'no_channel' | 'full'>
  /** Removes and returns one mailbox's payloads in arrival order; each payload goes to exactly one drain. Undefined when the channel is not live. */
  drainMailbox(channelHash: string, direction: RelayDirection, now: number): Promise<string[] | undefined>
}

export interface EscrowStore {
  /** Stores the account's escrow, displacing the earlier one in the same statement. */
  storeEscrow(userId: string, blob: Buffer, now: number): Promise<{ readonly replaced: boolean }>
  findEscrow(userId: string): Promise<Escrow | undefined>
}

export interface SweepLimits {
  readonly now: number
  /** Replay-ledger steps below this one can no longer be presented. */
  readonly oldestUsableTotpStep: number
  /** Wrong-password counts untouched for this long have restarted (unless a lock is still in force). */
  readonly passwordFailureTtlMs: number
  /** Security events older than this are dropped. */
  readonly securityEventTtlMs: number
}

export interface MaintenanceStore {
  /** Deletes every expired row; idempotent, so every instance may run it at once. Counts by table. */
  sweepExpired(limits: SweepLimits): Promise<Record<string, number>>
}

export interface UpgradeIntent {
  readonly intentId: string
  readonly toVersion: string
  /** Server clock; the ceremony lapses (the album is back to normal) once it passes. */
  readonly expiresAt: number
}

export interface Album {
  readonly albumId: string
  readonly ownerId: string
  readonly protocolVersion: string
  readonly createdAt: number
  /** The recorded ceremony, live or lapsed: ask domain/upgrade.ts which. */
  readonly upgrade: UpgradeIntent | null
}

export interface UploadBlob {
  readonly hash: string
  readonly role: 'original' | 'derivative'
  readonly size: number
}

export interface UploadSession {
  readonly uploadId: string
  readonly ownerId: string
  readonly albumId: string
  readonly cryptoSuiteId: number
  readonly ciphertextHash: string
  readonly createdAt: number
  readonly expiresAt: number
  readonly closedAt: number | null
  readonly blobs: readonly UploadBlob[]
}

/** A recorded part of a blob uploaded in pieces (decision 0034): bytes [offset, offset + size), stored as `name`. */
export interface UploadPart {
  readonly uploadId: string
  readonly hash: string
  readonly offset: number
  readonly size: number
  readonly name: string
  readonly createdAt: number
}

export type BlobRole = 'original' | 'derivative' | 'metadata' | 'provenance'

export interface Asset {
  readonly assetId: string
  readonly albumId: string
  readonly ownerId: string
  readonly chainHead: string
  readonly originalHash: string
  readonly retentionUntil: number | null
  /** Set once a `delete` manifest ended the asset: it is no longer live, its chain ends at that manifest. */
  readonly deletedAt: number | null
}

/** What a create or a replace indexes (LifecycleStore.indexWrite). */
export interface IndexedWrite {
  /** The asset's new head: a new asset (`created`), or an existing one's (`advanced`). */
  readonly asset: { readonly created: Omit<Asset, 'deletedAt'> } | { readonly advanced: Pick<Asset, 'assetId' | 'chainHead' | 'originalHash' | 'retentionUntil'> }
  readonly bundle: { readonly ownerId: string; readonly syncSeq: number; readonly uploadId: string; readonly refs: readonly AssetBlobRef[] }
  readonly op: AppliedOp
}

export interface AssetBlobRef {
  readonly hash: string
  readonly role: BlobRole
  readonly size: number
}

export interface AppliedOp {
  readonly albumId: string
  readonly syncSeq: number
  readonly manifestHash: string
  readonly assetId: string
  readonly action: 'create' | 'replace' | 'delete'
  readonly manifestCbor: Buffer
  readonly metadataBlobHash: string | null
  /** The upload session whose bundle the write applied; null for a delete (it uses none). */
  readonly uploadId: string | null
  readonly appliedAt: number
}

/**
 * An owner's albums at one instant (one statement, so one snapshot on either engine): what an
 * account export reads up to, however many writes commit while it runs.
 */
export interface AlbumsCut {
  /** Oldest first, each with the last feed position handed out (0: none yet). */
  readonly albums: ReadonlyArray<{ readonly album: Album; readonly lastSyncSeq: number }>
  /**
   * The receipt chain's last receipt_seq. A lifecycle write appends its receipts and moves the
   * chain in the transaction that adds its feed entry: the receipts at or below it are exactly
   * those of the feed entries at or below the albums' positions.
   */
  readonly lastReceiptSeq: number
}

export interface AlbumStore {
  /** Inserts unless the id exists: 'exists' when it is this owner's, 'taken' when another account's. */
  provisionAlbum(album: { readonly albumId: string; readonly ownerId: string; readonly protocolVersion: string; readonly createdAt: number }): Promise<'created' | 'exists' | 'taken'>
  findAlbum(albumId: string): Promise<Album | undefined>
  /** The owner's albums, oldest first. */
  listAlbums(ownerId: string): Promise<Album[]>
  /** listAlbums with each album's feed position and the receipt chain's, read together (AlbumsCut). */
  cutAlbums(ownerId: string): Promise<AlbumsCut>
  /**
   * Takes the album row's write lock for the rest of the transaction and reads it. Upload
   * opens, lifecycle writes and the upgrade steps all start here, so they queue per album.
   */
  lockAlbum(albumId: string): Promise<Album | undefined>
  /** Open upload sessions of the album: not closed and not expired. */
  countInFlight(albumId: string, now: number): Promise<number>
  setUpgrade(albumId: string, upgrade: (UpgradeIntent & { readonly intent: Buffer }) | null): Promise<void>
  /** Pins the album to the ceremony's version, records the ceremony with its tombstone and ends it. */
  commitUpgrade(albumId: string, record: { readonly intentId: string; readonly fromVersion: string; readonly toVersion: string; readonly tombstone: Buffer; readonly committedAt: number }): Promise<void>
  /** Whether a ceremony with this intent was committed on the album (an intent is spent once committed). */
  isCommittedIntent(albumId: string, intentId: string): Promise<boolean>
  /** The next feed position of the album (call under lockAlbum). */
  takeSyncSeq(albumId: string): Promise<number>
  hasDirectory(userId: string): Promise<boolean>
}

export interface UploadStore {
  insertUploadSession(session: Omit<UploadSession, 'closedAt'>): Promise<void>
  findUploadSession(uploadId: string): Promise<UploadSession | undefined>
  /** Closes a session that is still open; false when it was not. */
  closeUploadSession(uploadId: string, now: number): Promise<boolean>
  /** Closes a session its client gave up (abort), queueing what it declared that no row owns for reclaiming. */
  abandonUploadSession(uploadId: string, now: number): Promise<void>
  /** Which of these hashes the owner already stores. */
  ownedBlobHashes(ownerId: string, hashes: readonly string[]): Promise<Set<string>>
  /**
   * Records that the owner stores these bytes and adds the ones not recorded before to its
   * stored bytes (idempotent: a blob is counted once). Call it in a transaction, so that the
   * rows and the count change together; it takes the account's storage row (see lockStorageUsage).
   */
  recordOwnedBlobs(ownerId: string, blobs: readonly { readonly hash: string; readonly size: number }[], now: number): Promise<void>
  /**
   * Declares on an open session the blobs a lifecycle write on it stores besides the uploaded
   * ones (its metadata and manifest), before their bytes are stored: while the session is open,
   * garbage collection keeps them as it keeps the session's uploaded blobs. Idempotent.
   */
  declareExtras(uploadId: string, hashes: readonly string[]): Promise<void>
  /** Withdraws those declarations (the write failed). */
  withdrawExtras(uploadId: string): Promise<void>
  /** The recorded parts of the session's blobs (of blob `hash` only, when given), by hash then offset. */
  uploadParts(uploadId: string, hash?: string): Promise<UploadPart[]>
  /**
   * Records a part unless the session's blob already has one at that offset (the primary key
   * decides two writers racing) or the session is gone: true when this call recorded it.
   */
  insertUploadPart(part: UploadPart): Promise<boolean>
  /** Forgets the parts of the session's blob `hash`, or of the whole session. */
  deleteUploadParts(uploadId: string, hash?: string): Promise<void>
  /**
   * Renames the session's declared blob `from` to `to` (decision 0034, a blob named at its last
   * part), and the session's ciphertext_hash with it when that was `from`; false when the session
   * declares no `from` (another request renamed it first, or the session is gone). One
   * conditional update: of two renames racing, one finds the declaration. Call it in the
   * transaction that records the owned blob `to`, so that garbage collection never sees the
   * row without the declaration.
   */
  renameDeclaredBlob(uploadId: string, from: string, to: string): Promise<boolean>
  /** The owner's open sessions for this album whose original is `ciphertextHash`, newest first. */
  findOpenSessionsForOriginal(ownerId: string, albumId: string, ciphertextHash: string, now: number): Promise<UploadSession[]>
}

export interface LifecycleStore {
  findAppliedOp(albumId: string, manifestHash: string): Promise<AppliedOp | undefined>
  findAsset(assetId: string): Promise<Asset | undefined>
  /**
   * Indexes a create or a replace: the new asset (a create), or the asset moved to its new head
   * with its live bundle marked replaced (a replace); then the new bundle's references and the
   * feed entry. False when a create finds an asset with its id (in any album): the unique insert
   * decides two creates of one id racing in different albums, which hold different locks; the
   * caller must then roll the transaction back (what else the call wrote is not meant to stay).
   * On PostgreSQL one statement.
   */
  indexWrite(write: IndexedWrite, now: number): Promise<boolean>
  /**
   * Ends the asset at a `delete` manifest: its chain head moves to it and it is no longer live
   * (with supersedeBundle in the same transaction, its references become garbage unless a legal
   * hold keeps them).
   */
  endAsset(assetId: string, chainHead: string, now: number): Promise<void>
  /** Marks the asset's live bundle as replaced. */
  supersedeBundle(assetId: string, now: number): Promise<void>
  insertAppliedOp(op: AppliedOp): Promise<void>
  /** Feed entries after `afterSeq`, in order. */
  feed(albumId: string, afterSeq: number, limit: number): Promise<AppliedOp[]>
  /**
   * Of these hashes, the blobs of the owner that a live asset of theirs references, by hash (the
   * others are absent); `withheld` when every such asset is taken down. One query however many.
   */
  findLiveBlobs(ownerId: string, hashes: readonly string[]): Promise<Map<string, LiveBlob>>
  /**
   * The bytes the database holds for these blob hashes: a signed manifest (`album_ops`) whose
   * hash a blob row of the same owner names (of `ownerId` only, when given). A provenance blob's
   * bytes are stored there alone, never as a file (decision 0038); absent hashes are not held.
   */
  heldManifests(hashes: readonly string[], ownerId?: string): Promise<Map<string, Buffer>>
  /**
   * Hashes whose bytes are still needed: a blob row of any owner names them, or an open upload
   * session of any account declares them (its PUT may be publishing the file right now, or a
   * lifecycle write on it storing its metadata). A file may go only when neither holds.
   */
  blobHashesStillNeeded(hashes: readonly string[], now: number): Promise<Set<string>>
}

/** A blob a live asset of its owner references (what a download may serve). */
export interface LiveBlob {
  readonly size: number
  /** Every live asset of the owner that references it is taken down. */
  readonly withheld: boolean
  /** A live asset references it as its provenance: its bytes may be held in the database (heldManifests). */
  readonly provenance: boolean
}

/** A queued hash, as read: the generation lets a pass drop only the entry it looked at. */
export interface QueuedReclaim {
  readonly hash: string
  readonly generation: number
}

export interface GarbageStore {
  /**
   * Drops replaced-bundle references that nothing protects any more (retention passed), then
   * the owner rows of blobs that no reference and no open upload session of the owner declares
   * (uploaded or extra), taking their sizes off their owners' stored bytes, and queues their
   * hashes for reclaiming in the same transaction. Returns how many owner rows went.
   */
  collectGarbage(now: number): Promise<number>
  /** Up to `limit` queued hashes after `after`, in hash order. */
  queuedReclaims(after: string, limit: number): Promise<QueuedReclaim[]>
  /** Drops these entries unless a hash was queued again since it was read. */
  dropReclaims(entries: readonly QueuedReclaim[]): Promise<void>
  /** Records a hold on the removal of blob files, in force until `expiresAt` unless released. */
  takeGcHold(hold: GcHold): Promise<void>
  /**
   * Moves a hold's end to `expiresAt` while it is still in force at `now`; false when it was
   * released or had lapsed (files may have been removed since: its holder cannot rely on it).
   */
  renewGcHold(holdId: string, now: number, expiresAt: number): Promise<boolean>
  releaseGcHold(holdId: string): Promise<void>
  /** Queues hashes for reclaiming (files found that no row names: coffer fsck --reclaim-unowned). */
  queueReclaims(hashes: readonly string[]): Promise<void>
  /** Whether any hold is in force at `now`: then no queued file may be removed. */
  gcHeld(now: number): Promise<boolean>
}

/** A hold on the removal of blob files (a backup copying them). */
export interface GcHold {
  readonly holdId: string
  readonly reason: string
  readonly createdAt: number
  readonly expiresAt: number
}

/** What an account takes of the storage quota. */
export interface StorageUsage {
  /** Size of the distinct blobs the account stores, whatever their role. */
  readonly storedBytes: number
  /**
   * Bytes its open upload sessions declare that it does not store yet: each hash once, at the
   * largest size declared for it.
   */
  readonly pendingBytes: number
  /** Its upload sessions that are neither closed nor expired. */
  readonly openUploads: number
}

export interface AccountHoldings {
  /** As StorageUsage.storedBytes. */
  readonly storedBytes: number
  readonly liveAssets: number
}

export interface StorageUsageStore {
  /**
   * Writes the account's storage row first (creating it), so that its lock is held for the rest
   * of the transaction: upload opens of one account queue on it, on every instance. Take it after
   * the album lock (lifecycle writes hold the album, then this row).
   */
  lockStorageUsage(ownerId: string): Promise<void>
  /** The account's usage, read in one statement. */
  storageUsage(ownerId: string, now: number): Promise<StorageUsage>
  /** What the operator sees of it: its stored bytes and its live (not deleted) assets, read in one statement. */
  accountHoldings(ownerId: string): Promise<AccountHoldings>
  /**
   * The account's usage with the open session `uploadId` in it, and the bytes that session adds
   * to it (what it declares that is neither stored nor declared at least as large by another
   * open session of the account), read in one statement.
   */
  storageUsageWithUpload(ownerId: string, uploadId: string, now: number): Promise<{ readonly usage: StorageUsage; readonly addedBytes: number }>
}

export interface AttestationKey {
  /** Hex SHA-256 of the public key. */
  readonly keyId: string
  readonly publicKey: Buffer
  /** The private seeds, sealed. */
  readonly privateBox: Buffer
  readonly status: 'active' | 'retired'
  readonly notBefore: number
  readonly notAfter: number | null
}

export interface ChainHead {
  readonly lastSeq: number
  readonly lastReceiptHash: string | null
  readonly activeKeyId: string | null
}

/** The chain head with the time of its last receipt (null before the first). */
export interface ChainTip extends ChainHead {
  readonly lastReceivedAt: number | null
}

export interface Receipt {
  readonly receiptSeq: number
  readonly serverId: string
  readonly assetId: string
  readonly uploadId: string
  readonly blobRole: BlobRole
  readonly ciphertextHash: string
  readonly size: number
  readonly envelopeHash: string | null
  readonly receivedAt: number
  readonly serverKeyId: string
  readonly priorReceiptHash: string | null
  readonly receiptCbor: Buffer
}

/** Where a page of albumReceipts ended: its last receipt's asset and number. */
export interface ReceiptCursor {
  readonly assetId: string
  readonly receiptSeq: number
}

/** What storage verification knows about one asset of the caller. */
export interface AssetCustody {
  readonly takenDown: boolean
  /** Role of each hash in the asset's live bundle. */
  readonly roles: ReadonlyMap<string, BlobRole>
}

export interface CustodyStore {
  /** Every attestation key, active and retired, oldest first. */
  listAttestationKeys(): Promise<AttestationKey[]>
  findAttestationKey(keyId: string): Promise<AttestationKey | undefined>
  /** Writes the chain head row first, so its lock is held for the rest of the transaction, and reads it. */
  lockReceiptChain(): Promise<ChainHead>
  /** Makes a new key the active one, retiring the active one at `now` (call under lockReceiptChain). */
  activateAttestationKey(key: { readonly keyId: string; readonly publicKey: Buffer; readonly privateBox: Buffer }, now: number): Promise<void>
  /** Reads the chain head, without locking it. */
  receiptChainHead(): Promise<ChainTip>
  /** Appends receipts (in order, continuing the head) and moves the head to the last, whose hash is given (under lockReceiptChain). */
  appendReceipts(receipts: readonly Receipt[], lastReceiptHash: string): Promise<void>
  /**
   * appendReceipts without lockReceiptChain: moves the head only if it is still `after` (and
   * `after`'s key still the active one), which locks it for the rest of the transaction, then
   * appends. False, writing nothing, when the head or the active key has changed.
   */
  appendReceiptsAfter(after: ChainHead, receipts: readonly Receipt[], lastReceiptHash: string): Promise<boolean>
  /** Every receipt ever issued for the asset, replaced bundles included, in receipt_seq order. */
  listReceipts(assetId: string): Promise<Receipt[]>
  /**
   * A page of the receipts of an album's assets numbered at most `throughSeq`, in (asset_id,
   * receipt_seq) order, after `after` (null: from the start), at most `limit` of them: each
   * query a bounded index range, however many assets the album holds.
   */
  albumReceipts(albumId: string, throughSeq: number, after: ReceiptCursor | null, limit: number): Promise<Receipt[]>
  /**
   * Takes `bytes` from the account's deep-scan budget when they fit in what is left of the
   * current window (a window that has ended starts again at `now`); false, writing nothing, otherwise.
   */
  reserveDeepScan(userId: string, bytes: number, now: number, budget: number, windowMs: number): Promise<boolean>
  /** The live (not deleted) assets of the owner among `assetIds`, with their live bundles. */
  assetCustody(ownerId: string, assetIds: readonly string[]): Promise<Map<string, AssetCustody>>
  /** Which of these hashes a live asset of the owner references. */
  liveReferencedHashes(ownerId: string, hashes: readonly string[]): Promise<Set<string>>
}

/** Rows that disagree with one another (coffer fsck), one per kind of rule. */
export type ConsistencyFinding =
  /** The asset's chain head is not the hash of the last manifest applied for it (null: none). */
  | { readonly kind: 'asset_head'; readonly assetId: string; readonly chainHead: string; readonly lastManifestHash: string | null }
  /** A live asset's original is not the original of its live bundle (null: no live original). */
  | { readonly kind: 'asset_original'; readonly assetId: string; readonly originalHash: string; readonly liveOriginal: string | null }
  /** A feed entry whose upload session is still open. */
  | { readonly kind: 'op_session_open'; readonly albumId: string; readonly syncSeq: number; readonly uploadId: string }
  /** A bundle references an uploaded blob its session did not declare. */
  | { readonly kind: 'reference_undeclared'; readonly assetId: string; readonly uploadId: string; readonly hash: string }
  /** A bundle references a blob whose owner row is missing (null) or of another size. */
  | { readonly kind: 'reference_size'; readonly assetId: string; readonly hash: string; readonly referenceSize: number; readonly blobSize: number | null }
  /** A blob of a bundle has no receipt naming it. */
  | { readonly kind: 'reference_unreceipted'; readonly assetId: string; readonly uploadId: string; readonly hash: string; readonly role: string }
  /** The account's recorded stored bytes (null: no row) differ from the sizes of its blob rows. */
  | { readonly kind: 'stored_bytes'; readonly userId: string; readonly recorded: number | null; readonly actual: number }

/** Read-only checks of the operator's tools (coffer fsck, coffer backup). */
export interface IntegrityStore {
  /** Hashes that owner rows name, after `after` in hash order, with the smallest and largest size the rows give. */
  namedBlobsAfter(after: string, limit: number): Promise<Array<{ readonly hash: string; readonly minSize: number; readonly maxSize: number }>>
  /** Which of these hashes an owner row (of any account) names. */
  blobRowsNaming(hashes: readonly string[]): Promise<Set<string>>
  /** Which of these hashes are queued for reclaiming. */
  queuedAmong(hashes: readonly string[]): Promise<Set<string>>
  /** Up to `limit` receipts after `afterSeq`, in receipt_seq order. */
  receiptsAfter(afterSeq: number, limit: number): Promise<Receipt[]>
  /** The chain head, read without taking its lock. */
  readReceiptChain(): Promise<ChainHead>
  consistencyFindings(): Promise<ConsistencyFinding[]>
}

/** Who took an operator action: the operator API (ADMIN_TOKEN) or the `coffer` command on the server's machine. */
export type OperatorActor = 'admin_token' | 'cli'

/** Who recorded an event: an operator, or the owner deleting their own account. */
export type EventActor = OperatorActor | 'owner'

export type ModerationEventAction = 'suspended' | 'reinstated' | 'second_factor_reset' | 'account_deleted' | 'taken_down' | 'restored' | 'legal_hold' | 'hold_lifted'

export interface ModerationEvent {
  readonly action: ModerationEventAction
  readonly assetId: string | null
  readonly reason: string | null
  readonly at: number
  /** Who acted; null for events recorded before actors were (migration 0013). */
  readonly actor: EventActor | null
}

/** An event as the operator's log lists it: whose record it is in, and where. */
export interface LoggedModerationEvent extends ModerationEvent {
  readonly userId: string
  readonly seq: number
}

export interface ModeratedAsset {
  readonly assetId: string
  readonly ownerId: string
  readonly takenDownAt: number | null
  readonly legalHoldAt: number | null
}

export interface ModerationStore {
  findModeratedAsset(assetId: string): Promise<ModeratedAsset | undefined>
  setSuspended(userId: string, suspendedAt: number | null): Promise<void>
  setTakenDown(assetId: string, takenDownAt: number | null): Promise<void>
  setLegalHold(assetId: string, legalHoldAt: number | null): Promise<void>
  /** Appends to the account's record, after every earlier event. */
  appendModerationEvent(userId: string, event: ModerationEvent): Promise<void>
  /** The account's record, oldest first. */
  listModerationEvents(userId: string): Promise<ModerationEvent[]>
  /** The latest `limit` events of every account (or of one), oldest of them first. */
  operatorLog(options: { readonly userId?: string; readonly limit: number }): Promise<LoggedModerationEvent[]>
}

export interface AccountDeletionStore {
  /**
   * Deletes the account as a person sees it, in the caller's transaction: the row becomes a
   * tombstone (email, password, name and identity key scrubbed, so the email is free again),
   * every session, challenge, code, second factor, cohort, directory, escrow, relay channel and
   * security event of the account goes, its open upload sessions close, and the account joins
   * the purge queue. False (nothing changed) when it was deleted already; the account row is
   * written first, so two deletions at once change it once.
   */
  markAccountDeleted(userId: string, now: number): Promise<boolean>
  /** Deleted accounts whose rows are not all gone yet, by user id after `after`. */
  pendingAccountPurges(after: string, limit: number): Promise<string[]>
  /**
   * Removes up to `limit` assets of a deleted account that nothing keeps (no legal hold, no
   * retention floor ahead of `now`), their blob references with them; returns how many went.
   */
  purgeAssets(ownerId: string, now: number, limit: number): Promise<number>
  /**
   * After the assets: removes the account's upload sessions and the albums left without an
   * asset. Once nothing of the account remains but its tombstone and record (no asset, no blob
   * row), also its usage row and its queue entry; true then.
   */
  finishAccountPurge(ownerId: string, now: number): Promise<boolean>
}

export interface Store
  extends AccountDeletionStore, AccountStore, PasswordFailureStore, AttemptBudgetStore, SecurityEventStore, SessionStore, SecondFactorStore, DirectoryStore, RevokeStore, EnrollmentStore,
    EscrowStore, MaintenanceStore, AlbumStore, UploadStore, StorageUsageStore, LifecycleStore, GarbageStore, CustodyStore, ModerationStore, IntegrityStore {}

export interface Storage extends Store, RelayMailboxes {
  readonly engine: Engine
  /** Runs `work` in one transaction (BEGIN IMMEDIATE on SQLite); a throw rolls everything back. */
  transaction<T>(work: (tx: Store) => Promise<T>): Promise<T>
  /**
   * The bearer check's one lookup: the session the access token's hash names, with its account,
   * as committed (never another transaction's uncommitted writes). Outside any transaction.
   */
  findBearerSession(accessHash: string): Promise<BearerSession | undefined>
  migrate(): Promise<void>
  /**
   * PostgreSQL: the schema this connection works in (null when its search_path names none that
   * exists yet) and how many tables it holds; SQLite: null and 0. For backup and restore.
   */
  currentSchema(): Promise<{ readonly name: string | null; readonly tables: number }>
  /** PostgreSQL: creates the schema unless it exists (restore into an empty database). */
  createSchema(name: string): Promise<void>
  ping(): Promise<void>
  close(): Promise<void>
}

/**
 * What every method throws when the database cannot be reached or the connection was lost in
 * the middle (a restart, a failover, a cut network, a write lock held past the wait): nothing
 * is wrong with the request, and it may succeed when tried again. A transaction it interrupts
 * either committed whole or not at all (only a connection lost while the commit itself was
 * under way leaves the caller unsure which).
 */
export class StorageUnavailableError extends Error {
  constructor(cause: Error) {
    super(cause.message, { cause })
    this.name = 'StorageUnavailableError'
  }
}
