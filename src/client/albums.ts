// Named albums (docs/client-format.md, "Albums"; decision 0060). The server knows an album by a
// UUID only; its name lives in the album itself, encrypted like everything else: the album's
// record is an asset with empty content, media type ALBUM_RECORD_TYPE and the album's name as its
// metadata name (and its cover as the metadata's `cover`). A rename or a new cover is a
// `replace` of the record; the name is its latest verified version's. The album id follows from
// the name it was made under (format/ids.ts albumIdFor, tried again with a counter when a renamed
// album holds it) and the record's asset id from the (empty) content, so creating an album
// twice, or on two devices at once, makes one; a name is found through the records, never by
// its id alone.
import { sha256 } from '@noble/hashes/sha2.js'
import type { CofferClient, Feed } from '../sdk/client.ts'
import { decodeCanonical } from '../codec/cbor.ts'
import { fromBase64 } from '../sdk/bytes.ts'
import { replaceFile } from './edits.ts'
import type { Membership } from './format/membership.ts'
import { FileTransferError, readSignedManifest, restoreFile, type BackupTarget, type RestoredFile, type RestoreSource } from './files.ts'
import { backupFile } from './upload.ts'
import { ALBUM_ID_ATTEMPTS, albumIdFor, albumName, assetIdFor } from './format/ids.ts'

export const ALBUM_RECORD_TYPE = 'application/vnd.coffer.album'

/** An account's keys and client, as the album functions need them. */
export type Library = Omit<BackupTarget, 'albumId' | 'protocolVersion'> &
  Pick<RestoreSource, 'identityPublicKey' | 'verify' | 'writerKeys'> & {
    /**
     * The asset id of an album's record, in an album shared with this account (sharing.ts
     * memberLibrary: the owner's master key names it); albumRecordId of this account's unless given.
     */
    readonly albumRecordId?: (albumId: string) => Promise<string>
  }

/** What an album's record says. */
export interface AlbumRecord {
  readonly name: string
  /** The cover the person chose (an asset id of the album), or null: the newest photo is shown (albumCover). */
  readonly cover: string | null
}

export interface NamedAlbum {
  readonly albumId: string
  /** null when the album has no readable record (made by another client, or its record is damaged). */
  readonly name: string | null
  /** The cover its record names (it may have been deleted since: albumCover), or null. */
  readonly cover: string | null
  readonly protocolVersion: string
}

/** Another album of the account has the name a rename asked for: nothing was written. */
export class AlbumNameTakenError extends Error {
  override readonly name = 'AlbumNameTakenError'
  readonly albumName: string
  constructor(albumName: string) {
    super(`there is already an album named "${albumName}": choose another name`)
    this.albumName = albumName
  }
}

/** The asset id of an album's record (its content is empty), to tell it from the album's photos. */
export const albumRecordId = (masterKey: Uint8Array, albumId: string): Promise<string> => assetIdFor(masterKey, albumId, sha256(new Uint8Array(0)))

/** The asset id of the album's record: this account's (albumRecordId), or in an album shared with it, the owner's (Library.albumRecordId). */
const recordIdOf = (library: Library, albumId: string): Promise<string> => library.albumRecordId?.(albumId) ?? albumRecordId(library.masterKey, albumId)

/** The record's entries of an album's feed, in feed order. */
async function recordEntries(library: Library, albumId: string): Promise<Feed['entries'][number][]> {
  const recordId = await recordIdOf(library, albumId)
  const found: Feed['entries'][number][] = []
  for await (const entry of feedEntries(library.client, albumId, { pageSize: STREAM_PAGE })) if (entry.asset_id === recordId) found.push(entry)
  return found
}

/**
 * What the album's record says, from its feed entries in feed order (the album's other entries
 * are skipped): the entries that verify (the account's signature, this album and record) and
 * continue the record's chain (each names the one before as prior_provenance_hash, the first
 * none) are its versions; the latest of them that opens is the record. So an entry the server
 * forged, or an older version it serves again, is passed over; a verified delete ends the record
 * (null), as does a record without any version that opens.
 */
export async function recordOf(library: Library, albumId: string, entries: Iterable<Feed['entries'][number]>): Promise<AlbumRecord | null> {
  const recordId = await recordIdOf(library, albumId)
  const versions: Feed['entries'][number][] = []
  let head: string | null = null
  for (const entry of entries) {
    if (entry.asset_id !== recordId) continue
    const read = await readSignedManifest(library, fromBase64(entry.manifest_cbor)).catch(() => null)
    if (read === null || read.envelope.album_id !== albumId || read.envelope.file_id !== recordId || read.envelope.prior_provenance_hash !== head) continue
    head = read.manifestHash
    versions.push(entry)
  }
  for (const entry of versions.reverse()) {
    if (entry.action === 'delete') return null
    const record = await restoreFile({ ...library, albumId }, entry).catch(() => null)
    if (record?.metadata.type === ALBUM_RECORD_TYPE) return { name: record.metadata.name, cover: record.metadata.cover ?? null }
  }
  return null
}

/** What the album's record says (recordOf), its feed read; null when it has none that opens. */
export async function albumRecordOf(library: Library, albumId: string): Promise<AlbumRecord | null> {
  return recordOf(library, albumId, await recordEntries(library, albumId))
}

/** Writes the album's record: its first version, or (`exists`) a replace of its latest. */
async function writeRecord(
  library: Library,
  albumId: string,
  protocolVersion: string | undefined,
  record: AlbumRecord,
  exists: boolean,
  membership?: Membership,
): Promise<void> {
  const target = { ...library, albumId, ...(protocolVersion === undefined ? {} : { protocolVersion }) }
  // No digest: the record keeps a random file key (as before renames), so its empty original is
  // never the same blob as an empty file backed up into the album.
  const source = { name: record.name, size: 0, type: ALBUM_RECORD_TYPE, modified: null, open: () => [new Uint8Array(0)] }
  const options = { ...(record.cover === null ? {} : { cover: record.cover }), ...(membership === undefined ? {} : { membership }) }
  if (exists) await replaceFile(target, await recordIdOf(library, albumId), source, options)
  else await backupFile(target, source, options)
}

/**
 * Where a name is: the album holding it, when one does, and otherwise the first of the name's
 * ids (albumIdFor, attempt 0, 1, ...) free for a new album of it (not provisioned, or provisioned
 * without a record: a device making it stopped between the two). The name's own ids are looked
 * at first (an album that was never renamed is found by reading one feed), then every album.
 */
async function locate(library: Library, name: string): Promise<{ readonly found: NamedAlbum | null; readonly free: string | null }> {
  const { albums } = await library.client.listAlbums()
  const listed = new Map(albums.map((album) => [album.album_id, album.protocol_version]))
  let free: string | null = null
  for (let attempt = 0; attempt < ALBUM_ID_ATTEMPTS && free === null; attempt++) {
    const albumId = await albumIdFor(library.masterKey, name, attempt)
    const protocolVersion = listed.get(albumId)
    if (protocolVersion === undefined) free = albumId
    else {
      const entries = await recordEntries(library, albumId)
      if (entries.length === 0) free = albumId
      else {
        const record = await recordOf(library, albumId, entries)
        if (record?.name === name) return { found: { albumId, ...record, protocolVersion }, free: null }
      }
    }
  }
  const found = (await namedAlbums(library, albums)).find((album) => album.name === name) ?? null
  return { found, free }
}

/**
 * The album named `name`, provisioned and its record created when there is none (under the
 * first of the name's ids that is free: locate). Answers it.
 */
export async function openAlbum(library: Library, name: string): Promise<NamedAlbum> {
  const normalized = albumName(name)
  const { found, free } = await locate(library, normalized)
  if (found !== null) return found
  if (free === null) throw new Error(`the album name "${normalized}" was used ${ALBUM_ID_ATTEMPTS} times: choose another`)
  const { protocol_version: protocolVersion } = await library.client.provisionAlbum(free)
  await writeRecord(library, free, protocolVersion, { name: normalized, cover: null }, false)
  return { albumId: free, name: normalized, cover: null, protocolVersion }
}

/**
 * Renames an album: a replace of its record with the new name, its cover kept (an album without
 * a readable record gets one). Throws AlbumNameTakenError, writing nothing, when another album
 * has that name.
 */
export async function renameAlbum(library: Library, albumId: string, newName: string): Promise<AlbumRecord> {
  const name = albumName(newName)
  const holder = await findAlbum(library, name)
  if (holder !== null && holder.albumId !== albumId) throw new AlbumNameTakenError(name)
  const entries = await recordEntries(library, albumId)
  const record = await recordOf(library, albumId, entries)
  const renamed = { name, cover: record?.cover ?? null }
  if (record?.name !== name) await writeRecord(library, albumId, undefined, renamed, entries.length > 0)
  return renamed
}

/**
 * Sets the album's cover to one of its photos (an asset id), or clears it (null: the newest
 * photo is shown): a replace of its record, its name kept. Throws when the album has no
 * readable record or no live photo of that id.
 */
export async function setAlbumCover(library: Library, albumId: string, assetId: string | null): Promise<AlbumRecord> {
  const record = await albumRecordOf(library, albumId)
  if (record === null) throw new Error('this album has no readable name: rename it first')
  if (assetId !== null && (assetId === (await recordIdOf(library, albumId)) || (await findAssetEntry(library.client, albumId, assetId)) === null))
    throw new Error(`asset ${assetId} is not a photo of the album`)
  const covered = { name: record.name, cover: assetId }
  if (record.cover !== assetId) await writeRecord(library, albumId, undefined, covered, true)
  return covered
}

/**
 * Records the album's membership in its history (format/membership.ts): a replace of its record,
 * name and cover kept, whose signed content carries it. The owner's alone count. Throws when the
 * album has no readable record.
 */
export async function writeMembership(library: Library, albumId: string, membership: Membership): Promise<void> {
  const record = await albumRecordOf(library, albumId)
  if (record === null) throw new Error('this album has no readable name: rename it first')
  await writeRecord(library, albumId, undefined, record, true, membership)
}

/** A photo as albumCover weighs it: its date taken (taken.ts `local`, the wall clock; `at` when there is none). */
export interface DatedAsset {
  readonly assetId: string
  readonly taken: number
}

/**
 * The photo an album shows as its cover: the one its record names while it is a live photo of
 * the album, else the newest by date taken (the greatest asset id on a tie, so every device
 * picks the same); null for an album without photos.
 */
export function albumCover(chosen: string | null, photos: Iterable<DatedAsset>): string | null {
  let newest: DatedAsset | null = null
  for (const photo of photos) {
    if (photo.assetId === chosen) return chosen
    if (newest === null || photo.taken > newest.taken || (photo.taken === newest.taken && photo.assetId > newest.assetId)) newest = photo
  }
  return newest?.assetId ?? null
}

/** Every feed entry of an album after `after` (0: from the start), page by page (`pageSize` entries, 1000 unless given), oldest first. */
export async function* feedEntries(
  client: CofferClient,
  albumId: string,
  options: { readonly after?: number; readonly pageSize?: number } = {},
): AsyncGenerator<Feed['entries'][number]> {
  let after = options.after ?? 0
  for (;;) {
    const page = await client.feed(albumId, after, options.pageSize ?? 1000)
    yield* page.entries
    if (page.entries.length === 0 || page.next_after === after) return
    after = page.next_after
  }
}

/** The live assets of an album: each asset's latest entry, when that is not a delete, in feed order. */
export async function liveEntries(client: CofferClient, albumId: string): Promise<Feed['entries'][number][]> {
  const latest = new Map<string, Feed['entries'][number]>()
  for await (const entry of feedEntries(client, albumId)) {
    latest.delete(entry.asset_id) // re-inserted below: a Map keeps insertion order, so the order is of the latest entries
    if (entry.action !== 'delete') latest.set(entry.asset_id, entry)
  }
  return [...latest.values()]
}

/**
 * Feed entries per page where the feed is read without being held (each holds a manifest of about
 * 7 KiB in base64): a page of the server's default 1000 is about 10 MB of JSON and its parse.
 */
export const STREAM_PAGE = 256

/**
 * Each live asset's latest feed position (a delete removes the asset), and the last position
 * read: one pass over the feed that keeps ids and numbers only.
 */
export async function livePositions(
  client: CofferClient,
  albumId: string,
): Promise<{ readonly latest: ReadonlyMap<string, number>; readonly through: number }> {
  const latest = new Map<string, number>()
  let through = 0
  for await (const entry of feedEntries(client, albumId, { pageSize: STREAM_PAGE })) {
    through = entry.sync_seq
    latest.delete(entry.asset_id) // re-inserted below, as liveEntries does
    if (entry.action !== 'delete') latest.set(entry.asset_id, entry.sync_seq)
  }
  return { latest, through }
}

/**
 * The entries liveEntries answers, in the same order, given one at a time instead of held: the
 * positions first (livePositions), then the feed read again up to where that pass ended,
 * STREAM_PAGE entries at a time, each live asset's latest entry given as it comes. For an album
 * of any size, memory holds its ids and a page.
 */
export async function* streamLiveEntries(client: CofferClient, albumId: string): AsyncGenerator<Feed['entries'][number]> {
  const { latest, through } = await livePositions(client, albumId)
  for await (const entry of feedEntries(client, albumId, { pageSize: STREAM_PAGE })) {
    if (entry.sync_seq > through) return
    if (latest.get(entry.asset_id) === entry.sync_seq) yield entry
  }
}

/** The latest feed entry of a live asset of the album, for restoreFile; null when it has none (or it was deleted). */
export async function findAssetEntry(client: CofferClient, albumId: string, assetId: string): Promise<Feed['entries'][number] | null> {
  return (await liveEntries(client, albumId)).find((entry) => entry.asset_id === assetId) ?? null
}

/** An album's name, read from its record (albumRecordOf); null when it has no readable one (see NamedAlbum). */
export async function albumNameOf(library: Library, albumId: string): Promise<string | null> {
  return (await albumRecordOf(library, albumId))?.name ?? null
}

/**
 * The account's albums (oldest first, as the server lists them) with their names and covers,
 * read from their records: each album's feed is read through.
 */
export async function namedAlbums(library: Library, listed?: Awaited<ReturnType<CofferClient['listAlbums']>>['albums']): Promise<NamedAlbum[]> {
  const albums = listed ?? (await library.client.listAlbums()).albums
  return Promise.all(
    albums.map(async (album) => {
      const record = await albumRecordOf(library, album.album_id)
      return { albumId: album.album_id, name: record?.name ?? null, cover: record?.cover ?? null, protocolVersion: album.protocol_version }
    }),
  )
}

/**
 * The album named `name` among the account's, or null: found through the records (a renamed
 * album by its new name, never by its old one). Two albums of one name (renamed on two devices
 * at once): the one at the first of the name's ids, else the oldest.
 */
export async function findAlbum(library: Library, name: string): Promise<NamedAlbum | null> {
  return (await locate(library, albumName(name))).found
}

/** A planned asset: its latest feed position and the plaintext size its envelope states (unchecked). */
export interface PlannedAsset {
  readonly seq: number
  readonly size: number
}

/**
 * What restoring an album's files means, read from its feed without opening any (planAlbum):
 * about 130 bytes per file (an asset id and two numbers), against about 20 KB per file opened.
 */
export interface AlbumPlan {
  readonly albumId: string
  /** The album's photos and videos when planned: its live assets, its record left out. */
  readonly files: number
  /**
   * Their plaintext bytes, the sum of the envelopes' plaintext_size read WITHOUT checking the
   * signatures: for progress only. Each file's size is checked when it is opened.
   */
  readonly bytes: number
  /** The last feed position read: what the feed gains after it is left for the next plan. */
  readonly through: number
  /** The planned assets by id. */
  readonly assets: ReadonlyMap<string, PlannedAsset>
}

/** The envelope an entry's manifest states, its signature unchecked ({} when it cannot be read): for totals and prefetching, which the checked opening confirms. */
function statedEnvelope(manifestCbor: string): { readonly plaintext_size?: unknown; readonly metadata_blob_hash?: unknown } {
  try {
    const outer = decodeCanonical(fromBase64(manifestCbor)) as { body?: unknown }
    const body = decodeCanonical(outer.body as Uint8Array) as { envelope?: { plaintext_size?: unknown; metadata_blob_hash?: unknown } }
    return body.envelope ?? {}
  } catch {
    return {}
  }
}

/** The plaintext size an entry's envelope states, its signature unchecked (0 when it cannot be read). */
function statedSize(manifestCbor: string): number {
  const size = statedEnvelope(manifestCbor).plaintext_size
  return typeof size === 'number' && Number.isSafeInteger(size) && size >= 0 ? size : 0
}

/** Which live assets a plan takes: all unless `keep` says no (e.g. those in the trash, trash.ts trashedIds). */
export interface PlanOptions {
  readonly keep?: (assetId: string) => boolean
}

/**
 * Plans the restore of an album's files in one pass over its feed, opening none: for each live
 * asset (its record left out) only its latest feed position and stated size are kept, and
 * where the feed ended. openPlanned then opens the files one window at a time.
 */
export async function planAlbum(library: Library, albumId: string, options: PlanOptions = {}): Promise<AlbumPlan> {
  const recordId = await recordIdOf(library, albumId)
  const assets = new Map<string, PlannedAsset>()
  let through = 0
  for await (const entry of feedEntries(library.client, albumId, { pageSize: STREAM_PAGE })) {
    through = entry.sync_seq
    if (entry.asset_id === recordId || options.keep?.(entry.asset_id) === false) continue
    if (entry.action === 'delete') assets.delete(entry.asset_id)
    else assets.set(entry.asset_id, { seq: entry.sync_seq, size: statedSize(entry.manifest_cbor) })
  }
  let bytes = 0
  for (const asset of assets.values()) bytes += asset.size
  return { albumId, files: assets.size, bytes, through, assets }
}

/** A planned file as openPlanned gives it: opened (restoreFile), or the error that opening it met. */
export type PlannedFile =
  | { readonly assetId: string; readonly size: number; readonly file: RestoredFile; readonly error?: undefined }
  | { readonly assetId: string; readonly size: number; readonly file?: undefined; readonly error: FileTransferError }

/** Files openPlanned opens ahead of the one it gives, unless told: opening one is a signature check and a download of its metadata blob, and the next ones' overlap it. */
export const OPEN_AHEAD = 8
/**
 * Files whose metadata blobs openPlanned asks for in one batch request (POST /v1/blobs/batch),
 * read from the feed ahead of the files it opens: one request per file was half of a restore's
 * requests, each costing the server and the client more than the few hundred bytes it carried.
 */
export const METADATA_BATCH = 32
const BLOB_HASH = /^[0-9a-f]{64}$/

/**
 * The plan's files in feed order (of their latest entries), each opened when its turn nears: the
 * feed is read again up to plan.through, STREAM_PAGE entries at a time, and while a file is
 * given, at most `ahead` more (OPEN_AHEAD unless given) are opened and not yet taken. So memory
 * holds a window of files, not the album: a consumer that works on k files at once holds at
 * most ahead + k opened. The metadata blobs of the next files are asked for METADATA_BATCH at a
 * time (the manifest's hash, read before the manifest is checked: opening the file checks the blob
 * against the checked manifest, and a blob the batch did not bring is downloaded alone). A file
 * that fails to open is given with its error; the feed's own failures are thrown.
 */
export async function* openPlanned(library: Library, plan: AlbumPlan, options: { readonly ahead?: number } = {}): AsyncGenerator<PlannedFile> {
  const ahead = Math.max(0, options.ahead ?? OPEN_AHEAD)
  const source = { ...library, albumId: plan.albumId }
  const entries = feedEntries(library.client, plan.albumId, { pageSize: STREAM_PAGE })
  const open = (entry: Feed['entries'][number], size: number, metadataBlob: Promise<Uint8Array | null>): Promise<PlannedFile> =>
    restoreFile(source, entry, metadataBlob).then(
      (file) => ({ assetId: entry.asset_id, size, file }),
      (error: unknown) => ({
        assetId: entry.asset_id,
        size,
        error: error instanceof FileTransferError ? error : new FileTransferError('restore', null, entry.asset_id, String(error), error),
      }),
    )
  type Queued = { readonly entry: Feed['entries'][number]; readonly size: number; readonly metadataBlob: Promise<Uint8Array | null> }
  // Read from the feed, their metadata blobs on the way, not yet opened.
  const queued: Queued[] = []
  let exhausted = false
  const readAhead = async (): Promise<void> => {
    const batch: Feed['entries'] = []
    while (!exhausted && batch.length < METADATA_BATCH) {
      const next = await entries.next()
      if (next.done === true || next.value.sync_seq > plan.through) exhausted = true
      else if (plan.assets.get(next.value.asset_id)?.seq === next.value.sync_seq) batch.push(next.value)
    }
    const hashes = batch.map((entry) => statedEnvelope(entry.manifest_cbor).metadata_blob_hash)
    const wanted = hashes.filter((hash): hash is string => typeof hash === 'string' && BLOB_HASH.test(hash))
    // A batch that fails leaves each file to download its own, and to meet the failure as its own.
    const fetched =
      wanted.length === 0
        ? Promise.resolve(new Map<string, Uint8Array>())
        : library.client.downloadBlobs(wanted).then(
            (r) => r.blobs,
            () => new Map<string, Uint8Array>(),
          )
    batch.forEach((entry, i) => {
      const hash = hashes[i]
      queued.push({
        entry,
        size: plan.assets.get(entry.asset_id)!.size,
        metadataBlob: fetched.then((blobs) => (typeof hash === 'string' ? (blobs.get(hash) ?? null) : null)),
      })
    })
  }
  const opening: Promise<PlannedFile>[] = []
  try {
    for (;;) {
      while (opening.length <= ahead) {
        if (queued.length === 0 && !exhausted) await readAhead()
        const next = queued.shift()
        if (next === undefined) break
        opening.push(open(next.entry, next.size, next.metadataBlob))
      }
      const head = opening.shift()
      if (head === undefined) return
      yield await head
    }
  } finally {
    await entries.return(undefined)
  }
}

/**
 * An album's photos and videos (its record left out), each opened: metadata read, bytes on
 * demand. In feed order, planned then opened a window at a time (planAlbum, openPlanned); a
 * failure is thrown when its turn comes.
 */
export async function* albumFiles(library: Library, albumId: string, options: PlanOptions = {}): AsyncGenerator<RestoredFile> {
  for await (const planned of openPlanned(library, await planAlbum(library, albumId, options))) {
    if (planned.error !== undefined) throw planned.error
    yield planned.file
  }
}
