// Bearer and challenge tokens: 256 random bits, base64url, with a prefix that names the kind
// (so a leaked token is recognisable). Only the SHA-256 of a token is ever stored.
import { createHash, createHmac, randomBytes } from 'node:crypto'

export type TokenKind = 'access' | 'refresh' | 'mfa' | 'link'

const PREFIX: Record<TokenKind, string> = { access: 'coffer_at_', refresh: 'coffer_rt_', mfa: 'coffer_mfa_', link: 'coffer_ls_' }

export function newToken(kind: TokenKind): string {
  return PREFIX[kind] + randomBytes(32).toString('base64url')
}

/** Hex SHA-256; the only form in which a token reaches the database. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex')
}

export interface TokenPair {
  readonly accessToken: string
  readonly refreshToken: string
}

/**
 * The successor pair of a refresh token, derived rather than stored: a repeat of the same
 * refresh token inside the grace window can be answered with the same pair again while the
 * database keeps hashes only. HMAC with a server key keeps the pair unguessable.
 */
export function successorTokens(refreshKey: Buffer, refreshToken: string): TokenPair {
  const material = (label: string) => createHmac('sha256', refreshKey).update(label).update(refreshToken, 'utf8').digest('base64url')
  return {
    accessToken: PREFIX.access + material('access\0'),
    refreshToken: PREFIX.refresh + material('refresh\0'),
  }
}
