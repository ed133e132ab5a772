// Frozen: album_ops by manifest hash alone (decision 0067). A provenance blob's bytes are the
// manifest a feed row holds (decision 0038); in a shared album the manifest's blob belongs to the
// contributor who wrote it, not to the album's owner, so the row is found by its hash.
import type { MigrationStep } from './column-types.ts'

export const up: MigrationStep = async (db) => {
  await db.schema.createIndex('album_ops_by_manifest_hash').on('album_ops').column('manifest_hash').execute()
}
