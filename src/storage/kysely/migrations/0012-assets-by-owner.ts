// Frozen: assets by owner. The operator's account lookup counts an account's live assets
// (issue 17); without this index that count reads every asset of the server.
import type { MigrationStep } from './column-types.ts'

export const up: MigrationStep = async (db) => {
  await db.schema.createIndex('assets_owner').on('assets').columns(['owner_id', 'deleted_at']).execute()
}
