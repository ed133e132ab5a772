// Uploads: upload sessions, their parts and declarations, and the blobs an owner stores.
// Part of the storage port (../port.ts); storage/kysely/uploads.ts implements it.

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
