// The web app's organising of photos (decision 0061): adding to an album, moving to one, and the
// favourite mark, for any number of photos at once (the viewer's one photo, a selection's many),
// through the client library (src/client/organise.ts): nothing of a photo is uploaded again.
// Photos go one after another (the server takes one upload session of an original per album at
// a time), each told to onProgress as it is done; a photo that fails is reported and the others go on.
import type { Library } from '#photos/albums.ts'
import { copyToAlbum, moveToAlbum as moveOne, setFavourite } from '#photos/organise.ts'

/** A photo: its album and asset. */
export interface PhotoRef {
  readonly albumId: string
  readonly assetId: string
}

export interface OrganiseProgress {
  /** Photos done so far (failures included), of `total`. */
  readonly done: number
  readonly total: number
  readonly failed: number
}

export interface OrganiseOutcome {
  /** Each photo done, with the asset it is now in the album it went to (the same one for a favourite). */
  readonly done: readonly { readonly photo: PhotoRef; readonly now: PhotoRef }[]
  readonly failures: readonly { readonly photo: PhotoRef; readonly error: unknown }[]
}

async function eachPhoto(
  photos: readonly PhotoRef[],
  work: (photo: PhotoRef) => Promise<PhotoRef>,
  onProgress?: (progress: OrganiseProgress) => void,
): Promise<OrganiseOutcome> {
  const done: { photo: PhotoRef; now: PhotoRef }[] = []
  const failures: { photo: PhotoRef; error: unknown }[] = []
  for (const photo of photos) {
    try {
      done.push({ photo, now: await work(photo) })
    } catch (error) {
      failures.push({ photo, error })
    }
    onProgress?.({ done: done.length + failures.length, total: photos.length, failed: failures.length })
  }
  return { done, failures }
}

/** Adds the photos to an album (copies them there); a photo the album holds already is left as it is. Those in that album already are skipped. */
export function addToAlbum(library: Library, photos: readonly PhotoRef[], toAlbumId: string, onProgress?: (progress: OrganiseProgress) => void) {
  return eachPhoto(
    photos.filter((photo) => photo.albumId !== toAlbumId),
    async (photo) => ({ albumId: toAlbumId, assetId: (await copyToAlbum(library, photo.albumId, photo.assetId, toAlbumId)).assetId }),
    onProgress,
  )
}

/** Moves the photos to an album: each copied there, then deleted from its own (never to a trash); a failure between the two leaves it in both. */
export function moveToAlbum(library: Library, photos: readonly PhotoRef[], toAlbumId: string, onProgress?: (progress: OrganiseProgress) => void) {
  return eachPhoto(
    photos.filter((photo) => photo.albumId !== toAlbumId),
    async (photo) => ({ albumId: toAlbumId, assetId: (await moveOne(library, photo.albumId, photo.assetId, toAlbumId)).assetId }),
    onProgress,
  )
}

/** Marks the photos favourites (`on`) or not. */
export function setFavourites(library: Library, photos: readonly PhotoRef[], on: boolean, onProgress?: (progress: OrganiseProgress) => void) {
  return eachPhoto(
    photos,
    async (photo) => {
      await setFavourite(library, photo.albumId, photo.assetId, on)
      return photo
    },
    onProgress,
  )
}
