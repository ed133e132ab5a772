// The storage port: every read and write the services make, named for what it guarantees.
// Instants are Unix milliseconds. Methods that decide a race say which side wins; all of
// them hold on both engines and across several instances sharing one database.
//
// The methods live by area in port/, each file named after the one of kysely/ that implements
// it (port/sessions.ts, kysely/sessions.ts), with the types they use (docs/decisions/0042).
// This file composes the areas: Store is what a transaction sees, Storage adds what never runs
// in one and the connection's own methods.
import type { AccountDeletionStore } from './port/account-deletion.ts'
import type { AccountStore } from './port/accounts.ts'
import type { AlbumStore } from './port/albums.ts'
import type { BatchDownloadSlotStore } from './port/batch-downloads.ts'
import type { AttemptBudgetStore, PasswordFailureStore } from './port/budgets.ts'
import type { CustodyStore, ReceiptNotices, ReceiptWatch } from './port/custody.ts'
import type { DirectoryStore } from './port/directory.ts'
import type { EnrollmentStore } from './port/enrollment.ts'
import type { EscrowStore } from './port/escrow.ts'
import type { GarbageStore } from './port/garbage.ts'
import type { IntegrityStore } from './port/integrity.ts'
import type { LifecycleStore } from './port/lifecycle.ts'
import type { LinkStore } from './port/links.ts'
import type { MaintenanceStore } from './port/maintenance.ts'
import type { MemberStore } from './port/members.ts'
import type { ModerationStore } from './port/moderation.ts'
import type { RelayMailboxes } from './port/relay-mailbox.ts'
import type { RevokeStore } from './port/revoke.ts'
import type { SecondFactorStore } from './port/second-factor.ts'
import type { SecurityEventStore } from './port/security-events.ts'
import type { BearerSession, SessionStore } from './port/sessions.ts'
import type { StorageUsageStore } from './port/storage-usage.ts'
import type { TrashStore } from './port/trash.ts'
import type { UploadStore } from './port/uploads.ts'

export type Engine = 'sqlite' | 'postgres'

/** The areas whose methods may run in a transaction: what `transaction` hands its work. */
export interface Store
  extends AccountStore,
    PasswordFailureStore,
    AttemptBudgetStore,
    BatchDownloadSlotStore,
    SecurityEventStore,
    SessionStore,
    SecondFactorStore,
    RevokeStore,
    DirectoryStore,
    EnrollmentStore,
    EscrowStore,
    AlbumStore,
    UploadStore,
    StorageUsageStore,
    LifecycleStore,
    TrashStore,
    MemberStore,
    LinkStore,
    GarbageStore,
    CustodyStore,
    ModerationStore,
    AccountDeletionStore,
    IntegrityStore,
    MaintenanceStore {}

/**
 * The whole port: Store, the relay's mailbox writes (never part of a transaction), the bearer
 * check's lookup and the connection's own methods.
 */
export interface Storage extends Store, RelayMailboxes {
  readonly engine: Engine
  /** Runs `work` in one transaction (BEGIN IMMEDIATE on SQLite); a throw rolls everything back. */
  transaction<T>(work: (tx: Store) => Promise<T>): Promise<T>
  /**
   * The bearer check's one lookup: the session the access token's hash names, with its account,
   * as committed (never another transaction's uncommitted writes). Outside any transaction.
   */
  findBearerSession(accessHash: string): Promise<BearerSession | undefined>
  migrate(): Promise<void>
  /**
   * PostgreSQL: the schema this connection works in (null when its search_path names none that
   * exists yet) and how many tables it holds; SQLite: null and 0. For backup and restore.
   */
  currentSchema(): Promise<{ readonly name: string | null; readonly tables: number }>
  /** PostgreSQL: creates the schema unless it exists (restore into an empty database). */
  createSchema(name: string): Promise<void>
  /**
   * Starts hearing the receipt requests of every instance (decision 0073): PostgreSQL's notices
   * on a connection of its own, until the watch is closed; null on SQLite, which serves one
   * instance (nothing to hear: the caller polls).
   */
  watchReceiptRequests(notices: ReceiptNotices): ReceiptWatch | null
  ping(): Promise<void>
  close(): Promise<void>
}

/**
 * What every method throws when the database cannot be reached or the connection was lost in
 * the middle (a restart, a failover, a cut network, a write lock held past the wait): nothing
 * is wrong with the request, and it may succeed when tried again. A transaction it interrupts
 * either committed whole or not at all (only a connection lost while the commit itself was
 * under way leaves the caller unsure which).
 */
export class StorageUnavailableError extends Error {
  constructor(cause: Error) {
    super(cause.message, { cause })
    this.name = 'StorageUnavailableError'
  }
}
