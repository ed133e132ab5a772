// Second factor: the TOTP secret, its recovery codes, the replay ledger and login challenges.
// Part of the storage port (../port.ts); storage/kysely/second-factor.ts implements it.

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
