// The trash (decision 0059): assets whose signed delete waits until its purge instant.
// Part of the storage port (../port.ts); storage/kysely/trash.ts implements it.

export interface TrashStore {
  /** The asset's trash row, if it is in the trash. */
  findTrashed(fileId: string): Promise<TrashRow | undefined>
  /** Puts the asset in the trash (in the transaction that holds its album's lock and found none). */
  putInTrash(row: Omit<TrashRow, 'trashSeq'>): Promise<TrashRow>
  /** Takes the asset out of the trash (a restore, or its delete applied); false when it was not there. */
  removeFromTrash(albumId: string, fileId: string): Promise<boolean>
  /** The owner's trash rows after `afterSeq`, in trash_seq order. */
  trashPage(userId: string, afterSeq: number, limit: number): Promise<TrashRow[]>
  /** Rows of any owner whose purge instant has come, after `afterSeq` in trash_seq order. */
  dueTrash(now: number, afterSeq: number, limit: number): Promise<TrashRow[]>
}

export interface TrashRow {
  readonly trashSeq: number
  readonly userId: string
  readonly albumId: string
  readonly fileId: string
  readonly manifestHash: string
  readonly manifestCbor: Buffer
  /** The delete's envelope as the request sent it (JSON text). */
  readonly manifestEnvelope: string
  readonly trashedAt: number
  readonly purgeAt: number
}
