// Security events: the owner's security log.
// Part of the storage port (../port.ts); storage/kysely/security-events.ts implements it.

export interface SecurityEventStore {
  recordSecurityEvent(userId: string, event: SecurityEvent): Promise<void>
  /** The account's newest `limit` events, oldest first. */
  listSecurityEvents(userId: string, limit: number): Promise<SecurityEvent[]>
}

export type SecurityEventKind = 'password_lockout' | 'second_factor_lockout' | 'recovery_code_used'

export interface SecurityEvent {
  readonly kind: SecurityEventKind
  readonly at: number
  /** When what it started ends. */
  readonly until: number | null
  readonly ipAddress: string | null
  readonly userAgent: string | null
}
