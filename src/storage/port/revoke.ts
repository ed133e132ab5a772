// Revoke-all: its challenge, and closing every session of an account.
// Part of the storage port (../port.ts); storage/kysely/revoke.ts implements it.

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
