// Named albums (docs/client-format.md, "Albums"). The server knows an album by a UUID only; its
// name lives in the album itself, encrypted like everything else: the album's record is an
// asset with empty content, media type ALBUM_RECORD_TYPE and the album's name as its metadata
// name. The album id follows from the name and the asset id from the (empty) content
// (format/ids.ts), so every device finds both without asking anyone, and creating an album
// twice, or on two devices at once, makes one.
import { sha256 } from '@noble/hashes/sha2.js'
import type { CofferClient, Feed } from '../sdk/client.ts'
import { decodeCanonical } from '../codec/cbor.ts'
import { fromBase64 } from '../sdk/bytes.ts'
import { FileTransferError, restoreFile, type BackupTarget, type RestoredFile, type RestoreSource } from './files.ts'
import { backupFile } from './upload.ts'
import { albumIdFor, albumName, assetIdFor } from './format/ids.ts'

export const ALBUM_RECORD_TYPE = 'application/vnd.coffer.album'

/** An account's keys and client, as the album functions need them. */
export type Library = Omit<BackupTarget, 'albumId' | 'protocolVersion'> & Pick<RestoreSource, 'identityPublicKey' | 'verify'>

export interface NamedAlbum {
  readonly albumId: string
  /** null when the album has no readable record (made by another client, or its record is damaged). */
  readonly name: string | null
  readonly protocolVersion: string
}

/** The asset id of an album's record (its content is empty), to tell it from the album's photos. */
export const albumRecordId = (masterKey: Uint8Array, albumId: string): Promise<string> => assetIdFor(masterKey, albumId, sha256(new Uint8Array(0)))

/** The album named `name`, provisioned and its record created when they are not yet. Answers its id. */
export async function openAlbum(library: Library, name: string): Promise<NamedAlbum> {
  const normalized = albumName(name)
  const albumId = await albumIdFor(library.masterKey, normalized)
  const { protocol_version: protocolVersion } = await library.client.provisionAlbum(albumId)
  await backupFile(
    { ...library, albumId, protocolVersion },
    { name: normalized, size: 0, type: ALBUM_RECORD_TYPE, modified: null, open: () => [new Uint8Array(0)] },
  )
  return { albumId, name: normalized, protocolVersion }
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

/** An album's name, read from its record; null when it has no readable one (see NamedAlbum). */
export async function albumNameOf(library: Library, albumId: string): Promise<string | null> {
  const recordId = await albumRecordId(library.masterKey, albumId)
  // The record is normally the album's first entry: small pages, and stop there.
  for await (const entry of feedEntries(library.client, albumId, { pageSize: STREAM_PAGE })) {
    if (entry.asset_id !== recordId) continue
    const record = await restoreFile({ ...library, albumId }, entry).catch(() => null)
    return record?.metadata.type === ALBUM_RECORD_TYPE ? record.metadata.name : null
  }
  return null
}

/** The account's albums with their names, read from their records. */
export async function namedAlbums(library: Library): Promise<NamedAlbum[]> {
  const { albums } = await library.client.listAlbums()
  return Promise.all(
    albums.map(async (album) => ({ albumId: album.album_id, name: await albumNameOf(library, album.album_id), protocolVersion: album.protocol_version })),
  )
}

/** The album named `name` among the account's, or null. */
export async function findAlbum(library: Library, name: string): Promise<NamedAlbum | null> {
  const albumId = await albumIdFor(library.masterKey, albumName(name))
  const { albums } = await library.client.listAlbums()
  const found = albums.find((a) => a.album_id === albumId)
  return found === undefined ? null : { albumId, name: albumName(name), protocolVersion: found.protocol_version }
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

/** The plaintext size an entry's envelope states, its signature unchecked (0 when it cannot be read). */
function statedSize(manifestCbor: string): number {
  try {
    const outer = decodeCanonical(fromBase64(manifestCbor)) as { body?: unknown }
    const body = decodeCanonical(outer.body as Uint8Array) as { envelope?: { plaintext_size?: unknown } }
    const size = body.envelope?.plaintext_size
    return typeof size === 'number' && Number.isSafeInteger(size) && size >= 0 ? size : 0
  } catch {
    return 0
  }
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
  const recordId = await albumRecordId(library.masterKey, albumId)
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
 * The plan's files in feed order (of their latest entries), each opened when its turn nears: the
 * feed is read again up to plan.through, STREAM_PAGE entries at a time, and while a file is
 * given, at most `ahead` more (OPEN_AHEAD unless given) are opened and not yet taken. So memory
 * holds a window of files, not the album: a consumer that works on k files at once holds at
 * most ahead + k opened. A file that fails to open is given with its error; the feed's own
 * failures are thrown.
 */
export async function* openPlanned(library: Library, plan: AlbumPlan, options: { readonly ahead?: number } = {}): AsyncGenerator<PlannedFile> {
  const ahead = Math.max(0, options.ahead ?? OPEN_AHEAD)
  const source = { ...library, albumId: plan.albumId }
  const entries = feedEntries(library.client, plan.albumId, { pageSize: STREAM_PAGE })
  const open = (entry: Feed['entries'][number], size: number): Promise<PlannedFile> =>
    restoreFile(source, entry).then(
      (file) => ({ assetId: entry.asset_id, size, file }),
      (error: unknown) => ({
        assetId: entry.asset_id,
        size,
        error: error instanceof FileTransferError ? error : new FileTransferError('restore', null, entry.asset_id, String(error), error),
      }),
    )
  const opening: Promise<PlannedFile>[] = []
  let exhausted = false
  try {
    for (;;) {
      while (!exhausted && opening.length <= ahead) {
        const next = await entries.next()
        if (next.done === true || next.value.sync_seq > plan.through) exhausted = true
        else if (plan.assets.get(next.value.asset_id)?.seq === next.value.sync_seq) opening.push(open(next.value, plan.assets.get(next.value.asset_id)!.size))
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
