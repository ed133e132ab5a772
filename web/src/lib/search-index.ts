// The Search screen's index (decision 0070): every photo of the timeline (lib/timeline.ts) as
// src/client/search.ts searches it, built from the date index's records, which hold what search
// reads of each photo (name, date taken, camera, place, favourite, video, caption) sealed in this browser
// (lib/date-index-records.ts). Kept in step with the timeline one photo at a time: a photo is put
// again only when its version changed, so a refresh that found one new photo costs one put.
import { SearchIndex } from '#photos/search.ts'
import { loadPlaces, type PlaceLookup } from '#photos/places.ts'
import type { DatedPhoto } from './date-index-records.ts'
import type { Timeline } from './timeline.ts'

export class TimelineSearch {
  readonly index: SearchIndex
  /** Each photo indexed: its album and version, to know what changed. */
  readonly #held = new Map<string, string>()

  constructor(places: PlaceLookup | null) {
    this.index = new SearchIndex({ places })
  }

  /** The timeline's dated photos put in (a new version replacing the old), those gone removed; true when anything changed. */
  update(timeline: Timeline): boolean {
    let changed = false
    const seen = new Set<string>()
    for (const [albumId, photo] of timeline.dated()) {
      seen.add(photo.assetId)
      const version = `${albumId}/${photo.version}/${photo.favourite}`
      if (this.#held.get(photo.assetId) === version) continue
      this.#held.set(photo.assetId, version)
      this.index.put(entryOf(albumId, photo))
      changed = true
    }
    for (const assetId of this.#held.keys()) {
      if (seen.has(assetId)) continue
      this.#held.delete(assetId)
      this.index.remove(assetId)
      changed = true
    }
    return changed
  }
}

const entryOf = (albumId: string, photo: DatedPhoto) => ({
  assetId: photo.assetId,
  albumId,
  name: photo.name,
  taken: photo.local ?? photo.at,
  camera: photo.camera,
  place: photo.place,
  favourite: photo.favourite,
  kind: photo.video ? ('video' as const) : ('photo' as const),
  description: photo.description,
})

/** The place names, loaded the first time search is used (a chunk of its own); null when they cannot be (offline): positions are then not searched by name. */
export const searchPlaces = (): Promise<PlaceLookup | null> => loadPlaces().catch(() => null)
