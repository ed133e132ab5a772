// `backup --dry-run`: what a backup would do with each file, from the local index and the
// album's feed alone: no file is read, nothing is sent, and nothing is recorded. It takes the
// same first steps as backupAll (sync.ts) in the same order; what it cannot know without reading
// a new file is whether the album already holds its content (then a backup sends nothing).
import type { AlbumView, Candidate, IndexedFile, SyncState } from './sync.ts'

/**
 * `new`: read, and sent unless the album holds its content; `changed`: its content changed since
 * this device backed it up: stored as a new version; `unchanged`: backed up before, not read;
 * `deleted`: deleted from the album (`rm`), not stored again; `kept`: unchanged here, and the
 * album holds a newer version written elsewhere: not read; `conflict`: changed here and in the
 * album (a newer version written elsewhere): read and compared, nothing sent (decision 0047).
 */
export type PlannedOutcome = 'new' | 'changed' | 'unchanged' | 'deleted' | 'kept' | 'conflict'

/** What of the local index the plan reads (null: none yet, every file is new to it). */
export type IndexReader = Pick<SyncState, 'knownAsset' | 'lastBackedUp'> | null

export async function plannedOutcome(
  index: IndexReader,
  view: Pick<AlbumView, 'albumId' | 'live' | 'deleted' | 'versions'>,
  file: Pick<Candidate, 'path' | 'size' | 'modified' | 'identity'>,
): Promise<PlannedOutcome> {
  if (index === null) return 'new'
  const identity = file.identity ?? null
  // The album's current version of the asset is not the one this device last wrote or saw at the path.
  const movedOn = (seen: IndexedFile): boolean => {
    const current = view.versions.get(seen.assetId)
    return seen.version !== null && current !== undefined && current !== seen.version
  }
  const known = await index.knownAsset(view.albumId, file.path, file.size, file.modified, identity)
  if (known !== null && view.live.has(known)) {
    const seen = await index.lastBackedUp(view.albumId, file.path)
    return seen !== null && seen.assetId === known && movedOn(seen) ? 'kept' : 'unchanged'
  }
  if (known !== null && view.deleted.has(known)) return 'deleted'
  const before = await index.lastBackedUp(view.albumId, file.path)
  // Another path of the album is that asset too: the new content is stored as an asset of its own.
  if (before === null || !view.live.has(before.assetId) || before.sharedPaths > 0) return 'new'
  return movedOn(before) ? 'conflict' : 'changed'
}
