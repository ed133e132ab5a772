// Device directory: the account's identity key and its signed device directory.
// Part of the storage port (../port.ts); storage/kysely/directory.ts implements it.

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
  publishDirectoryIfNewer(
    userId: string,
    directory: Directory,
    now: number,
  ): Promise<{ readonly stored: true } | { readonly stored: false; readonly storedVersion: number }>
  findDirectory(userId: string): Promise<Directory | undefined>
}

export interface Directory {
  readonly version: number
  readonly body: Buffer
  readonly etag: string
}
