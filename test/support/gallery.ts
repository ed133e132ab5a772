// The gallery's test helpers: albums filled fast from Node (small generated images, native
// signing; the account comes from web-account.ts) and what the tests read of the album page.
import type { Page } from 'playwright-core'
import sharp from 'sharp'
import { albumRecordId, liveEntries, openAlbum, type Library, type NamedAlbum } from '../../src/client/albums.ts'
import { backupFile } from '../../src/client/upload.ts'

/** A tiny distinct image (a flat colour from `n`) as WebP: the original and the thumbnail of a seeded asset. */
export async function swatch(n: number): Promise<Uint8Array> {
  const pixel = Buffer.from([n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff])
  const bytes = await sharp(Buffer.concat(Array.from({ length: 16 * 16 }, () => pixel)), { raw: { width: 16, height: 16, channels: 3 } })
    .webp({ lossless: true })
    .toBuffer()
  return new Uint8Array(bytes)
}

/**
 * Fills an album with `count` small assets fast (backupFile from Node, `parallel` at a time):
 * each a 16×16 WebP named swatch-00000.webp..., its thumbnail the same image unless
 * `thumbnail` gives one for the n-th. Answers the album and the asset ids in the order they
 * were stored (the grid's feed order is not this when `parallel` > 1).
 */
export async function seedAlbum(
  library: Library,
  name: string,
  count: number,
  parallel = 8,
  thumbnail?: (n: number) => Promise<Uint8Array>,
  /** The n-th photo's date taken (as EXIF DateTimeOriginal would give it), ms since the epoch; none unless given. */
  captured?: (n: number) => number,
  /** Each photo also gets a preview (the same image), as a photo larger than a preview does. */
  preview = false,
): Promise<{ album: NamedAlbum; assetIds: string[] }> {
  const album = await openAlbum(library, name)
  const assetIds: string[] = []
  let next = 0
  const worker = async (): Promise<void> => {
    for (let n = next++; n < count; n = next++) {
      const bytes = await swatch(n)
      const result = await backupFile(
        { ...library, albumId: album.albumId, protocolVersion: album.protocolVersion },
        { name: `swatch-${String(n).padStart(5, '0')}.webp`, size: bytes.length, type: 'image/webp', modified: null, open: () => [bytes] },
        {
          describe: async () => ({
            captured: captured?.(n) ?? null,
            capturedSource: captured === undefined ? null : 'exif-original',
            width: 16,
            height: 16,
            derivatives: [
              { kind: 'thumbnail', type: 'image/webp', bytes: (await thumbnail?.(n)) ?? bytes },
              ...(preview ? [{ kind: 'preview', type: 'image/webp', bytes }] : []),
            ],
          }),
        },
      )
      assetIds.push(result.assetId)
    }
  }
  await Promise.all(Array.from({ length: parallel }, worker))
  return { album, assetIds }
}

/** The live assets of an album from Node (its record left out): what every device sees. */
export async function liveAssetIds(library: Library, albumId: string): Promise<string[]> {
  const record = await albumRecordId(library.masterKey, albumId)
  return (await liveEntries(library.client, albumId)).map((entry) => entry.asset_id).filter((id) => id !== record)
}

/** The album page's file picker. */
export const picker = (page: Page) => page.locator('input[type=file][aria-label="Photos to add"]')

/** Thumbnails on screen that are decrypted images: a blob: URL that decoded to some pixels. */
export function decryptedThumbnails(page: Page): Promise<string[]> {
  return page
    .locator('.grid img')
    .evaluateAll((imgs) =>
      (imgs as unknown as Img[]).filter((img) => img.src.startsWith('blob:') && img.complete && img.naturalWidth > 0).map((img) => img.alt),
    )
}

/** What these tests read of an img element in the page (this file has no DOM types). */
export interface Img {
  readonly src: string
  readonly alt: string
  readonly complete: boolean
  readonly naturalWidth: number
}
