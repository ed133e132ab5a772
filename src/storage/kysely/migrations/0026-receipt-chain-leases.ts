// Frozen: receipt chains that shard (decision 0072). receipt_chain keeps a row per chain (1..K,
// the rows beyond the first made at start-up from RECEIPT_CHAINS); each row gains a lease: the
// instance that appends to the chain for now, so that instances do not contend for one head.
// The lease only spreads the work: appends stay conditional on the head, so a stale holder
// costs a retry, never a fork.
import type { MigrationStep } from './column-types.ts'

export const up: MigrationStep = async (db) => {
  await db.schema.alterTable('receipt_chain').addColumn('holder', 'text').execute()
  await db.schema
    .alterTable('receipt_chain')
    .addColumn('lease_until', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute()
}
