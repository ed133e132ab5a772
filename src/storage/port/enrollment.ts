// Device enrollment: enrollment codes and relay channels.
// Part of the storage port (../port.ts); storage/kysely/enrollment.ts implements it.

export interface EnrollmentStore {
  /** False (nothing written) when the text spelling collides with a live code's. */
  insertEnrollmentCode(code: { readonly codeHash: string; readonly textHash: string; readonly userId: string; readonly expiresAt: number }): Promise<boolean>
  /** Deletes the live code having either spelling hash and returns its issuer; of racing redeems exactly one gets it. */
  redeemEnrollmentCode(spellingHash: string, now: number): Promise<string | undefined>
  openChannel(channel: { readonly channelHash: string; readonly initiatorId: string; readonly createdAt: number; readonly expiresAt: number }): Promise<void>
  /** Closes a live channel of this initiator (both mailboxes go with it); false otherwise. */
  closeChannel(channelHash: string, initiatorId: string, now: number): Promise<boolean>
}
