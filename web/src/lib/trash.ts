// Recently deleted, as the web app's lists see it (decision 0059): the account's trash, each
// entry's signed delete checked (src/client/trash.ts listTrash). The Photos screen's albums and
// an album's page leave out what it holds; one list is read for every list that asks at about
// the same time (the timeline's albums refresh together), and read again after a change here.
import type { Library } from '#photos/albums.ts'
import { listTrash, type TrashList } from '#photos/trash.ts'

/** A list read this recently is the one every asker gets. */
const FRESH_MS = 2000

const held = new WeakMap<Library, { readonly at: number; readonly list: Promise<TrashList> }>()

/** The account's trash, checked; the same promise for askers within FRESH_MS. */
export function currentTrash(library: Library): Promise<TrashList> {
  const now = performance.now()
  const kept = held.get(library)
  if (kept !== undefined && now - kept.at < FRESH_MS) return kept.list
  const list = listTrash(library)
  held.set(library, { at: now, list })
  list.catch(() => held.delete(library))
  return list
}

/** The ids of the photos in the trash: what the lists leave out. */
export async function trashedNow(library: Library): Promise<ReadonlySet<string>> {
  return new Set((await currentTrash(library)).files.map((file) => file.assetId))
}

/** After a change made here (a photo moved to the trash, restored, deleted for good): the next ask reads the list again. */
export function trashChanged(library: Library): void {
  held.delete(library)
}
