// The viewer's previews, by album: the photo shown and its neighbours, fetched and decrypted
// through the AlbumModel (opened, derivative) when a photo opens, so that the next and the
// previous one show at once (docs/decisions/0056-viewer.md). A few are kept per album; a
// replaced photo is another version (its feed position), so another key.
import type { OpenedAsset } from '#photos/files.ts'
import type { AlbumModel } from './album.ts'
import { Lru } from './lru.ts'

/** The photo shown, the two beside it, and the two it came from. */
const HELD = 5

/** What a photo shows first: its preview, else its thumbnail (an original no larger than a preview has none), else nothing. */
export interface Preview {
  readonly asset: OpenedAsset
  readonly image: Blob | null
  /** Why the preview could not be fetched or decrypted (the photo itself opened); such a preview is not kept. */
  readonly error?: unknown
}

const byAlbum = new WeakMap<AlbumModel, Lru<string, Promise<Preview>>>()

/** The photo opened and its preview decrypted; the same promise for the same version while it is held. Rejects as model.opened does. */
export function previewOf(model: AlbumModel, assetId: string): Promise<Preview> {
  let held = byAlbum.get(model)
  if (held === undefined) {
    held = new Lru(HELD)
    byAlbum.set(model, held)
  }
  const key = `${assetId}@${model.positionOf(assetId)}`
  let preview = held.get(key)
  if (preview === undefined) {
    const kept = held
    preview = (async () => {
      const asset = await model.opened(assetId)
      try {
        return { asset, image: (await model.derivative(asset, 'preview')) ?? (await model.derivative(asset, 'thumbnail')) }
      } catch (error) {
        kept.delete(key) // tried again the next time it is shown
        return { asset, image: null, error }
      }
    })()
    preview.catch(() => kept.delete(key))
    held.set(key, preview)
  }
  return preview
}

/** Starts fetching the previews of the photos before and after this one (failures are left for when they are shown). */
export function preloadNeighbours(model: AlbumModel, assetId: string): void {
  for (const step of [1, -1] as const) {
    const neighbour = model.neighbour(assetId, step)
    if (neighbour !== null) previewOf(model, neighbour).catch(() => {})
  }
}
