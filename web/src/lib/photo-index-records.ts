// The photo index's records and its bound (lib/photo-index.ts keeps them in IndexedDB;
// docs/decisions/0053-record-index-sealed-in-browser.md). Pure: no IndexedDB here, so Node (the
// tests) seals, opens and bounds with the same code.
//
// - One record per photo, under a random key: its asset id, album id, name and thumbnail, sealed
//   as one (name `photo-index/<key>`). Layout of the plaintext: the facts' JSON length (4 bytes,
//   big-endian), the facts as JSON, then the thumbnail's bytes (none when it has no thumbnail).
// - The directory ('directory', name `photo-index`): the list of what is kept, oldest first, each
//   as [asset id, record key, version, sealed size]. It alone says which asset a record holds, so
//   the store's keys and plain values name no asset and no order of viewing.
import { own, randomBytes, u32be } from '#photos/format/bytes.ts'
import { toHex, utf8 } from '#sdk/bytes.ts'
import { decodedValue, encodedValue, type Sealed } from './sealed.ts'

/** Seals `plaintext` under `name` (the sign-in's storage key: lib/store.ts sealWithStorageKey). */
export type Seal = (name: string, plaintext: Uint8Array) => Promise<Sealed>
/** Opens what Seal sealed; null when it does not open (another sign-in's key, another name, altered). */
export type Open = (name: string, sealed: Sealed) => Promise<Uint8Array | null>

/** A photo as the index keeps it. */
export interface IndexedPhoto {
  readonly assetId: string
  readonly albumId: string
  readonly name: string
  /** Its thumbnail (the 512-pixel one), or null when it has none (a video). */
  readonly thumbnail: { readonly type: string; readonly bytes: Uint8Array } | null
}

/** A photo in the directory: the record holding it, the version of the photo kept, and the record's sealed size in bytes. */
export interface Listed {
  readonly assetId: string
  readonly record: string
  /** The metadata blob hash of the version kept: a replace makes a new one. */
  readonly version: string
  readonly size: number
}

export interface Limits {
  /** Photos kept at most: the directory (about 150 bytes a photo) is sealed again at each write. */
  readonly photos: number
  /** Sealed bytes of the records kept at most: the thumbnails' disk space. */
  readonly bytes: number
}

/**
 * 2,000 photos (the gallery keeps as many opened in memory, lib/album.ts) and 32 MiB (512-pixel
 * WebP thumbnails run 15 to 60 KiB: about 1,000 photos), whichever is reached first.
 */
export const LIMITS: Limits = { photos: 2000, bytes: 32 * 2 ** 20 }

export const DIRECTORY = 'directory'
const DIRECTORY_NAME = 'photo-index'
const recordName = (record: string): string => `photo-index/${record}`

/** A new record key: 16 random bytes in hex. */
export const newRecordKey = (): string => toHex(randomBytes(16))

export const sealedSize = (sealed: Sealed): number => sealed.iv.length + sealed.data.length

/** A record's facts: the photo's, and its thumbnail's media type (null: no thumbnail). */
interface Facts {
  readonly assetId: string
  readonly albumId: string
  readonly name: string
  readonly type: string | null
}

export async function sealPhoto(seal: Seal, record: string, photo: IndexedPhoto): Promise<Sealed> {
  const facts = utf8(JSON.stringify({ assetId: photo.assetId, albumId: photo.albumId, name: photo.name, type: photo.thumbnail?.type ?? null } satisfies Facts))
  const thumbnail = photo.thumbnail?.bytes ?? new Uint8Array(0)
  const plaintext = new Uint8Array(4 + facts.length + thumbnail.length)
  plaintext.set(u32be(facts.length), 0)
  plaintext.set(facts, 4)
  plaintext.set(thumbnail, 4 + facts.length)
  return seal(recordName(record), plaintext)
}

/** The photo a record holds; null when it does not open, or holds another asset than `assetId`. */
export async function openPhoto(open: Open, record: string, sealed: Sealed, assetId: string): Promise<IndexedPhoto | null> {
  const plaintext = await open(recordName(record), sealed)
  if (plaintext === null || plaintext.length < 4) return null
  const length = new DataView(plaintext.buffer, plaintext.byteOffset).getUint32(0)
  const facts = JSON.parse(new TextDecoder().decode(plaintext.subarray(4, 4 + length))) as Facts
  if (facts.assetId !== assetId) return null
  const thumbnail = facts.type === null ? null : { type: facts.type, bytes: own(plaintext.subarray(4 + length)) }
  return { assetId: facts.assetId, albumId: facts.albumId, name: facts.name, thumbnail }
}

type ListedRow = [assetId: string, record: string, version: string, size: number]

export const sealDirectory = (seal: Seal, listed: readonly Listed[]): Promise<Sealed> =>
  seal(DIRECTORY_NAME, encodedValue({ listed: listed.map((l): ListedRow => [l.assetId, l.record, l.version, l.size]) }))

/** The directory; null when it does not open (sealed under an ended sign-in). */
export async function openDirectory(open: Open, sealed: Sealed): Promise<Listed[] | null> {
  const plaintext = await open(DIRECTORY_NAME, sealed)
  if (plaintext === null) return null
  return decodedValue<{ listed: ListedRow[] }>(plaintext).listed.map(([assetId, record, version, size]) => ({ assetId, record, version, size }))
}

export interface Admitted {
  /** The directory after the write, oldest first. */
  readonly listed: readonly Listed[]
  /** Records to delete: replaced by a newer version, or pushed out by the bound. */
  readonly evicted: readonly string[]
  /** The records of `added` still listed: those to write (one pushed out at once is not written). */
  readonly written: ReadonlySet<string>
}

/**
 * The directory once `touched` (asset ids seen again at the version kept) are moved to the newest
 * end and `added` (new records: a photo not kept, or a newer version of it) appended, then the
 * oldest dropped until it is within `limits`. A record larger than the whole byte budget is left out.
 */
export function admit(listed: readonly Listed[], touched: readonly string[], added: readonly Listed[], limits: Limits = LIMITS): Admitted {
  const byAsset = new Map(listed.map((l) => [l.assetId, l]))
  const evicted: string[] = []
  for (const assetId of touched) {
    const kept = byAsset.get(assetId)
    if (kept === undefined) continue
    byAsset.delete(assetId) // Map keeps insertion order: set again, it is the newest
    byAsset.set(assetId, kept)
  }
  for (const add of added) {
    if (add.size > limits.bytes) continue // would push out everything, then itself
    const kept = byAsset.get(add.assetId)
    if (kept !== undefined) evicted.push(kept.record)
    byAsset.delete(add.assetId)
    byAsset.set(add.assetId, add)
  }
  let bytes = 0
  for (const l of byAsset.values()) bytes += l.size
  for (const [assetId, oldest] of byAsset) {
    if (byAsset.size <= limits.photos && bytes <= limits.bytes) break
    byAsset.delete(assetId)
    bytes -= oldest.size
    evicted.push(oldest.record)
  }
  const records = new Set([...byAsset.values()].map((l) => l.record))
  const written = new Set(added.filter((a) => records.has(a.record)).map((a) => a.record))
  return { listed: [...byAsset.values()], evicted: evicted.filter((record) => !added.some((a) => a.record === record)), written }
}
