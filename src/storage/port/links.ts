// Public links (decision 0068; docs/sharing.md "Public links"): a link to an album or to some of
// its photos, its sessions (each open of it), and what it lets its holder read.
// Part of the storage port (../port.ts); storage/kysely/links.ts implements it.

/** The argon2id parameters a link's password is stretched with in the browser (the server never sees the password). */
export interface LinkPassword {
  readonly salt: Buffer
  readonly memoryKib: number
  readonly iterations: number
}

export interface AlbumLink {
  readonly linkId: string
  readonly albumId: string
  readonly ownerId: string
  /** Hex SHA-256 of the access token. */
  readonly tokenHash: string
  /** What the owner's client sealed under the link's key: opaque here. */
  readonly envelope: Buffer
  /** The owner's client's copy of the link's secret and key (to copy the link again, to seal a new envelope): opaque here. */
  readonly ownerCopy: Buffer
  /** Only the photos of its selection (`linkAssets`), not the whole album. */
  readonly selection: boolean
  readonly downloads: boolean
  readonly password: LinkPassword | null
  readonly expiresAt: number | null
  readonly maxOpens: number | null
  readonly opens: number
  readonly lastOpenedAt: number | null
  readonly createdAt: number
  readonly revokedAt: number | null
  readonly disabledAt: number | null
  readonly disabledReason: string | null
}

export type NewLink = Omit<AlbumLink, 'selection' | 'opens' | 'lastOpenedAt' | 'revokedAt' | 'disabledAt' | 'disabledReason'> & {
  /** The photos a selection link shows; null: the whole album. */
  readonly assetIds: readonly string[] | null
}

/** What a link session may read: the link's album (its selection only, when it is one), its originals or not. */
export type LinkScope = Pick<AlbumLink, 'linkId' | 'albumId' | 'selection' | 'downloads'>

export interface LinkStore {
  /**
   * Stores a new link, unless its id is taken ('exists') or its owner has `max` links that still
   * work ('limit': counted under the owner's account row lock, so a burst on any instance gets
   * no more).
   */
  createLink(link: NewLink, now: number, max: number): Promise<'created' | 'exists' | 'limit'>
  findLink(linkId: string): Promise<AlbumLink | undefined>
  /** Of these asset ids, those of live assets of the album. */
  liveAssetsOf(albumId: string, assetIds: readonly string[]): Promise<Set<string>>
  /** Links of an owner (of one album, when given), newest first. */
  listLinks(options: { readonly ownerId?: string; readonly albumId?: string; readonly limit: number }): Promise<AlbumLink[]>
  /** The selections of these links, by link id (a link that is no selection is absent). */
  linkAssets(linkIds: readonly string[]): Promise<Map<string, string[]>>
  /** Marks the link revoked (false when it was already) and ends its sessions. */
  revokeLink(linkId: string, at: number): Promise<boolean>
  /** The operator's disabling: marks it (false when it was already) and ends its sessions. */
  disableLink(linkId: string, at: number, reason: string | null): Promise<boolean>
  replaceLinkEnvelope(linkId: string, envelope: Buffer): Promise<void>
  /**
   * Counts an open and stores its session, in one statement's decision: 'opened', or 'used_up'
   * when the link has had `max_opens` opens (two opens at once never both take the last one).
   */
  openLink(linkId: string, session: { readonly sessionHash: string; readonly expiresAt: number }, now: number): Promise<'opened' | 'used_up'>
  /** A session that has not expired, with its link. */
  findLinkSession(sessionHash: string, now: number): Promise<AlbumLink | undefined>
}
