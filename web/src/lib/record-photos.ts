// The photos the moderation record names. The server knows them only by asset id: this page
// finds each in the account's albums (reading their feeds, as the album page does, until every
// one is found) and opens its metadata and thumbnail here. A photo taken down cannot be opened:
// the server withholds every file of it (its metadata and thumbnail too, decision 0006), from
// this device as from any other. Its name and thumbnail are then those this browser kept when it
// last opened the photo (lib/photo-index.ts, decision 0053), when it did; else only its album is
// known.
import { namedAlbums, type Library } from '#photos/albums.ts'
import { AlbumModel, takenDown } from './album.ts'
import { keptPhotos } from './photo-index.ts'

export type RecordPhoto =
  /** Opened here: its name, and its thumbnail (null when it has none). */
  | { readonly kind: 'opened'; readonly albumName: string | null; readonly name: string; readonly thumbnail: Blob | null }
  /** In an album, its files withheld (taken down), but this browser kept its name and thumbnail (null when it has none) from before. */
  | { readonly kind: 'remembered'; readonly albumName: string | null; readonly name: string; readonly thumbnail: Blob | null }
  /** In an album, but its files are withheld (taken down), and this browser kept nothing of it. */
  | { readonly kind: 'withheld'; readonly albumName: string | null }
  /** In an album, but it did not open (its files missing or damaged). */
  | { readonly kind: 'failed'; readonly albumName: string | null }
  /** In none of the account's albums (deleted since). */
  | { readonly kind: 'missing' }

async function opened(model: AlbumModel, assetId: string, albumName: string | null): Promise<RecordPhoto> {
  try {
    const asset = await model.opened(assetId)
    return { kind: 'opened', albumName, name: asset.metadata.name, thumbnail: await model.derivative(asset, 'thumbnail').catch(() => null) }
  } catch (error) {
    return { kind: takenDown(error) ? 'withheld' : 'failed', albumName }
  }
}

/** Each of `assetIds` as found in the account's albums, opened where the server hands out its files, else from what this browser kept. */
export async function recordPhotos(library: Library, assetIds: readonly string[]): Promise<Map<string, RecordPhoto>> {
  const found = new Map<string, RecordPhoto>()
  for (const album of await namedAlbums(library)) {
    if (found.size === assetIds.length) break
    const model = new AlbumModel(library, album.albumId)
    try {
      await model.refresh()
      if (model.scanError !== null) throw model.scanError
      for (const assetId of assetIds) if (!found.has(assetId) && model.holds(assetId)) found.set(assetId, await opened(model, assetId, album.name))
    } finally {
      model.close()
    }
  }
  const withheld = [...found].flatMap(([assetId, photo]) => (photo.kind === 'withheld' ? [assetId] : []))
  if (withheld.length > 0) {
    const kept = await keptPhotos(withheld).catch(() => new Map<string, never>())
    for (const [assetId, photo] of kept) {
      const { albumName } = found.get(assetId) as Extract<RecordPhoto, { kind: 'withheld' }>
      found.set(assetId, { kind: 'remembered', albumName, name: photo.name, thumbnail: photo.thumbnail })
    }
  }
  for (const assetId of assetIds) if (!found.has(assetId)) found.set(assetId, { kind: 'missing' })
  return found
}
