// Escrow: the account's wrapped master key.
// Part of the storage port (../port.ts); storage/kysely/escrow.ts implements it.

export interface EscrowStore {
  /** Stores the account's escrow, displacing the earlier one in the same statement. */
  storeEscrow(userId: string, blob: Buffer, now: number): Promise<{ readonly replaced: boolean }>
  findEscrow(userId: string): Promise<Escrow | undefined>
}

export interface Escrow {
  readonly blob: Buffer
  readonly storedAt: number
}
