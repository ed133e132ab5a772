// Accounts: the account row, found by id or by email key.
// Part of the storage port (../port.ts); storage/kysely/accounts.ts implements it.

export interface AccountStore {
  /** Inserts unless the email key is taken; false when taken. Of two racing inserts of one key, one wins. */
  insertAccount(account: NewAccount): Promise<boolean>
  findAccountByEmailKey(emailKey: string): Promise<Account | undefined>
  findAccount(userId: string): Promise<Account | undefined>
  /** Writes the new hash and moves the session epoch in one statement (every session dies); returns the new epoch. */
  changePasswordHash(userId: string, passwordHash: string): Promise<number>
  setDisplayName(userId: string, displayName: string | null): Promise<void>
}

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
