// Frozen: the operator's log (issue 17). Each moderation event records who acted (the
// operator API's token or the `coffer` command); `coffer admin log` lists the latest events of
// every account, newest by time, which the index on `at` keeps from reading the whole table.
import type { MigrationStep } from './column-types.ts'

export const up: MigrationStep = async (db) => {
  await db.schema.alterTable('moderation_events').addColumn('actor', 'text').execute()
  await db.schema.createIndex('moderation_events_at').on('moderation_events').columns(['at']).execute()
}
