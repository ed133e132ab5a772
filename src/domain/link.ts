// What a public link lets its holder do now (decision 0068): the rules, apart from storage.

export type LinkState = 'active' | 'expired' | 'used_up' | 'revoked' | 'disabled'

export interface LinkFacts {
  readonly expiresAt: number | null
  readonly maxOpens: number | null
  readonly opens: number
  readonly revokedAt: number | null
  readonly disabledAt: number | null
}

/**
 * The link's state at `now`. The operator's disabling comes first (it is the owner's to know
 * why), then the owner's revocation, then the expiry; `used_up` only when nothing else stops it:
 * it refuses new opens, while the sessions already open read on.
 */
export function linkState(link: LinkFacts, now: number): LinkState {
  if (link.disabledAt !== null) return 'disabled'
  if (link.revokedAt !== null) return 'revoked'
  if (link.expiresAt !== null && link.expiresAt <= now) return 'expired'
  if (link.maxOpens !== null && link.opens >= link.maxOpens) return 'used_up'
  return 'active'
}

/** Whether a session of the link may still read: every state but used_up stops it. */
export const linkReads = (state: LinkState): boolean => state === 'active' || state === 'used_up'
