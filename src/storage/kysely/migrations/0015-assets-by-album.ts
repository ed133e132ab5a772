// Frozen: assets by album. The account export reads an album's receipts asset by asset, a page
// at a time from where the last one ended (issue 17); without this index each page would read
// every asset of the server.
import type { MigrationStep } from './column-types.ts'

export const up: MigrationStep = async (db) => {
  await db.schema.createIndex('assets_album').on('assets').columns(['album_id', 'asset_id']).execute()
}
