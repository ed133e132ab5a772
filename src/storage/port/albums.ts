// Albums: the album row, its lock, its feed positions and its upgrade ceremony.
// Part of the storage port (../port.ts); storage/kysely/albums.ts implements it.

export interface AlbumStore {
  /** Inserts unless the id exists: 'exists' when it is this owner's, 'taken' when another account's. */
  provisionAlbum(album: {
    readonly albumId: string
    readonly ownerId: string
    readonly protocolVersion: string
    readonly createdAt: number
  }): Promise<'created' | 'exists' | 'taken'>
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
  commitUpgrade(
    albumId: string,
    record: { readonly intentId: string; readonly fromVersion: string; readonly toVersion: string; readonly tombstone: Buffer; readonly committedAt: number },
  ): Promise<void>
  /** Whether a ceremony with this intent was committed on the album (an intent is spent once committed). */
  isCommittedIntent(albumId: string, intentId: string): Promise<boolean>
  /** The next feed position of the album (call under lockAlbum). */
  takeSyncSeq(albumId: string): Promise<number>
  hasDirectory(userId: string): Promise<boolean>
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

/**
 * An owner's albums at one instant (one statement, so one snapshot on either engine): what an
 * account export reads up to, however many writes commit while it runs.
 */
export interface AlbumsCut {
  /** Oldest first, each with the last feed position handed out (0: none yet). */
  readonly albums: ReadonlyArray<{ readonly album: Album; readonly lastSyncSeq: number }>
  /**
   * Each receipt chain's last receipt_seq (chain 1 first). A lifecycle write appends its
   * receipts and moves its chain in the transaction that adds its feed entry: the receipts at or
   * below their chain's head are exactly those of the feed entries at or below the albums' positions.
   */
  readonly receiptHeads: readonly number[]
}
