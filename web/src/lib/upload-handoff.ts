// Files chosen on the Photos screen for an album (the upload chooser; decision 0058): the page
// goes to the album, whose uploads take them from here once it is open. In memory only, for the
// moment between the two screens; what is queued from then on is kept as every upload is.
import type { Picked } from './picked.ts'

type Source = Iterable<Picked> | AsyncIterable<Picked>

const handed = new Map<string, Source[]>()

/** Leaves files for the album's page to queue when it opens. */
export function handOver(albumId: string, files: Source): void {
  handed.set(albumId, [...(handed.get(albumId) ?? []), files])
}

/** The files left for an album (each once), oldest first. */
export function takeHandedOver(albumId: string): Source[] {
  const files = handed.get(albumId) ?? []
  handed.delete(albumId)
  return files
}
