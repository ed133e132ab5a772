// Photos saved as one zip, streamed (docs/decisions/0062-selection-and-zip-downloads.md): the
// originals are opened a window at a time, fetched in batches of about BATCH_BYTES (POST
// /v1/blobs/batch, decision 0029) or, past that, each alone as a stream, decrypted chunk by chunk
// (each chunk authenticated, the whole checked against the manifest at its end) and written into
// the archive (#photos/zip.ts) as they come, to where lib/save.ts puts it. Memory holds a window
// of opened assets and one batch of ciphertext, whatever the number of photos.
import { originalPlaintext, type OpenedAsset } from '#photos/files.ts'
import { uniqueName } from '#photos/restore.ts'
import { zipPath, zipStream, type ZipEntry } from '#photos/zip.ts'
import type { AlbumModel } from './album.ts'
import { saveStream, streamOf, type SavedWhere } from './save.ts'

/** Photos opened ahead of the archive: one batch request for their metadata blobs. */
const WINDOW = 100
/** Ciphertext fetched in one batch, under the server's default budget (8 MiB); a larger original is streamed alone. */
const BATCH_BYTES = 4 * 1024 * 1024

/** A photo to save, with the album it is in. */
export interface ZipItem {
  readonly model: AlbumModel
  readonly assetId: string
}

export interface ZipSaved {
  readonly where: SavedWhere
  readonly bytes: number
  readonly files: number
  /** Photos left out: withheld by the operator, gone since, or that could not be opened. */
  readonly skipped: number
}

/** The zip's entries: every photo that opens, in the order given, under unique names (as a restore names them). */
async function* entriesOf(items: readonly ZipItem[], tally: { files: number; skipped: number }): AsyncGenerator<ZipEntry> {
  const names = new Set<string>()
  const entry = (asset: OpenedAsset, ciphertext: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): ZipEntry => {
    tally.files++
    return {
      name: uniqueName(zipPath(asset.metadata.name), asset.assetId, names),
      modified: asset.metadata.modified ?? Date.parse(asset.envelope.timestamp),
      size: asset.metadata.size,
      bytes: originalPlaintext(asset, ciphertext),
    }
  }
  for (let start = 0; start < items.length; start += WINDOW) {
    const window = items.slice(start, start + WINDOW)
    const byModel = new Map<AlbumModel, string[]>()
    for (const { model, assetId } of window) byModel.set(model, [...(byModel.get(model) ?? []), assetId])
    const opening = new Map([...byModel].flatMap(([model, ids]) => [...model.openAll(ids)]))
    let batch: OpenedAsset[] = []
    let batchBytes = 0
    const client = window[0]!.model.library.client
    async function* flush(): AsyncGenerator<ZipEntry> {
      if (batch.length === 0) return
      const got = await client.downloadBlobs(batch.map((asset) => asset.envelope.ciphertext_hash))
      for (const asset of batch) {
        const ciphertext = got.blobs.get(asset.envelope.ciphertext_hash)
        if (ciphertext === undefined) tally.skipped++
        else yield entry(asset, [ciphertext])
      }
      batch = []
      batchBytes = 0
    }
    for (const { assetId } of window) {
      let asset: OpenedAsset
      try {
        asset = await opening.get(assetId)!
      } catch {
        tally.skipped++
        continue
      }
      if (asset.metadata.size > BATCH_BYTES) {
        yield* flush()
        let ciphertext: AsyncIterable<Uint8Array>
        try {
          ciphertext = await client.downloadBlobStream(asset.envelope.ciphertext_hash)
        } catch {
          tally.skipped++
          continue
        }
        yield entry(asset, ciphertext)
        continue
      }
      if (batchBytes + asset.metadata.size > BATCH_BYTES) yield* flush()
      batch.push(asset)
      batchBytes += asset.metadata.size
    }
    yield* flush()
  }
}

/** A zip's file name from a title (an album's name): what no file system takes replaced. */
export const zipNameOf = (title: string): string => `${title.replace(/[/\\:*?"<>|]/g, '_').trim() || 'Photos'}.zip`

/**
 * Saves these photos' originals as `name` (a .zip); null when the person cancelled the save
 * picker. Call it in the click's task (lib/save.ts chooseTarget).
 */
export async function saveZip(name: string, items: readonly ZipItem[]): Promise<ZipSaved | null> {
  const tally = { files: 0, skipped: 0 }
  const saved = await saveStream(name, 'application/zip', async () => streamOf(zipStream(entriesOf(items, tally))))
  return saved === null ? null : { ...saved, ...tally }
}
