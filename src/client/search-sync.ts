// Keeping a device's search index of an album up to date from the album's feed (decision 0070),
// reading only what the feed gained since the last time: where the index stopped (`through`),
// each new entry is a delete (the photo leaves the index), an entry whose metadata blob is the
// version the index holds (nothing to open), or a new photo or a new version of one (its
// metadata opened: the manifest's signature checked, the blob downloaded in batches). The
// album's record entries are kept to name the album (albums.ts recordOf). A photo whose metadata
// does not open (taken down, refused) is left out and tried again next time. What is kept of a
// photo is its metadata's searchable part, never a key. Browser-safe: the CLI keeps the result
// sealed in its state store (node/search-store.ts).
import type { Feed } from '../sdk/client.ts'
import { ALBUM_RECORD_TYPE, albumRecordId, feedEntries, recordOf, STREAM_PAGE, type Library } from './albums.ts'
import { FileTransferError, openStoredAsset } from './files.ts'
import type { SearchMetadata } from './search.ts'

export type FeedEntry = Feed['entries'][number]

/** What the index keeps of one photo. */
export interface IndexedAsset {
  readonly assetId: string
  /** Hex SHA-256 of the metadata blob it was read from: an entry naming the same one needs no opening. */
  readonly version: string
  /** When this version was uploaded (its manifest's timestamp), ms since the epoch: the last source of a date taken. */
  readonly uploaded: number
  readonly metadata: SearchMetadata
}

/** Where an album's index stands in its feed. */
export interface AlbumIndexState {
  /** The last feed position read. */
  readonly through: number
  /** The album's name, from its record; null when it has no readable one. */
  readonly name: string | null
  /** The record's feed entries, in feed order (a rename adds one). */
  readonly record: readonly FeedEntry[]
  /** Photos whose metadata did not open, and the feed position of the entry to open next time. */
  readonly retry: ReadonlyArray<{ readonly assetId: string; readonly seq: number }>
}

/** What a refresh found: the album's new state, and the photos to put into and remove from the index. */
export interface AlbumRefresh {
  readonly state: AlbumIndexState
  readonly put: readonly IndexedAsset[]
  readonly removed: readonly string[]
  /** Metadata blobs opened (new photos, new versions, retries). */
  readonly opened: number
  /** Photos left out: their metadata did not open. */
  readonly failed: readonly FileTransferError[]
}

/** Metadata blobs asked for in one batch request, as albums.ts openPlanned asks for them. */
const OPEN_BATCH = 32

/** Only what search reads of the metadata: no blob hashes, no content mac, no dimensions. */
function searchable(metadata: SearchMetadata): SearchMetadata {
  const { make, model } = metadata.camera ?? {}
  return {
    name: metadata.name,
    type: metadata.type,
    modified: metadata.modified,
    captured: metadata.captured,
    ...(metadata.capturedSource === undefined ? {} : { capturedSource: metadata.capturedSource }),
    ...(metadata.capturedOffset === undefined ? {} : { capturedOffset: metadata.capturedOffset }),
    ...(make === undefined && model === undefined ? {} : { camera: { ...(make === undefined ? {} : { make }), ...(model === undefined ? {} : { model }) } }),
    ...(metadata.location === undefined ? {} : { location: { latitude: metadata.location.latitude, longitude: metadata.location.longitude } }),
    ...(metadata.favourite === true ? { favourite: true } : {}),
    ...(metadata.description === undefined ? {} : { description: metadata.description }),
  }
}

/**
 * Reads the album's feed after `state.through` (from its start when `state` is null) and answers
 * what changed for an index that holds, of this album, the photos and versions `held` names
 * (asset id to version). Stops after the page in flight when `signal` is aborted: the state
 * answered is then where it stopped, and the next refresh goes on from there.
 */
export async function refreshAlbumIndex(
  library: Library,
  albumId: string,
  state: AlbumIndexState | null,
  held: ReadonlyMap<string, string>,
  options: { readonly signal?: AbortSignal } = {},
): Promise<AlbumRefresh> {
  const recordId = await (library.albumRecordId?.(albumId) ?? albumRecordId(library.masterKey, albumId))
  const source = { ...library, albumId }
  const versions = new Map(held)
  const changes = new Map<string, IndexedAsset | null>() // null: removed
  const failed = new Map<string, { error: FileTransferError; seq: number }>()
  const record = [...(state?.record ?? [])]
  let recordChanged = state === null
  let through = state?.through ?? 0
  let opened = 0

  /** Opens the entries (the latest of each asset), a batch of metadata blobs at a time. */
  const open = async (entries: readonly FeedEntry[]): Promise<void> => {
    for (let start = 0; start < entries.length; start += OPEN_BATCH) {
      const batch = entries.slice(start, start + OPEN_BATCH)
      const hashes = batch.map((entry) => entry.metadata_blob_hash).filter((hash): hash is string => typeof hash === 'string')
      // A batch that fails leaves each file to download its own, and to meet the failure as its own.
      const fetched = library.client.downloadBlobs(hashes).then(
        (answer) => answer.blobs,
        () => new Map<string, Uint8Array>(),
      )
      await Promise.all(
        batch.map(async (entry) => {
          const blob = fetched.then((blobs) => (entry.metadata_blob_hash === undefined ? null : (blobs.get(entry.metadata_blob_hash) ?? null)))
          opened++
          try {
            const asset = await openStoredAsset(source, entry, blob)
            failed.delete(entry.asset_id)
            if (asset.metadata.type === ALBUM_RECORD_TYPE) return // not a photo (an album record is found by its id)
            const version = asset.envelope.metadata_blob_hash!
            const uploaded = Date.parse(asset.envelope.timestamp)
            changes.set(entry.asset_id, {
              assetId: entry.asset_id,
              version,
              uploaded: Number.isFinite(uploaded) ? uploaded : 0,
              metadata: searchable(asset.metadata),
            })
            versions.set(entry.asset_id, version)
          } catch (error) {
            const reason = error instanceof FileTransferError ? error : new FileTransferError('restore', null, entry.asset_id, String(error), error)
            failed.set(entry.asset_id, { error: reason, seq: entry.sync_seq })
          }
        }),
      )
    }
  }

  // The photos that did not open last time, unless the feed moved them on since (read below).
  const retried: FeedEntry[] = []
  for (const { assetId, seq } of state?.retry ?? []) {
    const entry = (await library.client.feed(albumId, seq - 1, 1)).entries[0]
    if (entry?.asset_id === assetId && entry.sync_seq === seq) retried.push(entry)
  }
  await open(retried)

  let page: FeedEntry[] = []
  const settle = async (): Promise<void> => {
    // Within a page, each asset's latest entry decides.
    const latest = new Map<string, FeedEntry>()
    for (const entry of page) {
      latest.delete(entry.asset_id)
      latest.set(entry.asset_id, entry)
    }
    const toOpen: FeedEntry[] = []
    for (const entry of latest.values()) {
      failed.delete(entry.asset_id) // a later entry supersedes one that did not open
      if (entry.action === 'delete') {
        versions.delete(entry.asset_id)
        if (held.has(entry.asset_id)) changes.set(entry.asset_id, null)
        else changes.delete(entry.asset_id) // put and deleted within this refresh: the index never had it
      } else if (entry.metadata_blob_hash === undefined || versions.get(entry.asset_id) !== entry.metadata_blob_hash) toOpen.push(entry)
    }
    await open(toOpen)
    through = page.at(-1)?.sync_seq ?? through
    page = []
  }
  for await (const entry of feedEntries(library.client, albumId, { after: through, pageSize: STREAM_PAGE })) {
    if (entry.asset_id === recordId) {
      record.push(entry)
      recordChanged = true
    } else page.push(entry)
    if (page.length >= STREAM_PAGE) {
      await settle()
      if (options.signal?.aborted === true) break
    }
    through = Math.max(through, entry.sync_seq)
  }
  if (page.length > 0) await settle()

  const name = recordChanged ? ((await recordOf(library, albumId, record))?.name ?? null) : (state?.name ?? null)
  const put: IndexedAsset[] = []
  const removed: string[] = []
  for (const [assetId, change] of changes) {
    if (change === null) removed.push(assetId)
    else put.push(change)
  }
  return {
    state: { through, name, record, retry: [...failed].map(([assetId, { seq }]) => ({ assetId, seq })) },
    put,
    removed,
    opened,
    failed: [...failed.values()].map(({ error }) => error),
  }
}
