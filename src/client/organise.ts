// Organising photos (docs/client-library.md, "Copying, moving and favourites"; decision 0061):
// copying an asset into another album, moving it there, and marking it a favourite, none of
// which sends a photo's bytes again. Each writes a new metadata blob that names the SAME
// original and derivatives under the SAME file key: a copy wraps the key under the other
// album's key (a `create` there), a favourite re-seals the metadata with `favourite` set (a
// `replace` of the asset). The lifecycle write needs an upload session of the original in the
// album (API.md section 6, check 6); the account stores every blob already, so the session
// answers `present` for each and nothing is PUT. Browser-safe.
import { equalBytes, fromBase64, sha256Hex, toHex } from '../sdk/bytes.ts'
import type { Feed } from '../sdk/client.ts'
import { buildLifecycleWrite } from '../sdk/manifest.ts'
import { findAssetEntry, type Library } from './albums.ts'
import { AssetNotFoundError, deleteFile, type DeleteResult } from './edits.ts'
import { albumKeyOf, CLIENT_VERSION, CRYPTO_SUITE_V1, openStoredAsset, restoreFile, staleRevival, Tap, writeEpoch, type OpenedAsset } from './files.ts'
import { contentMacOf } from './format/content.ts'
import { assetIdFor, namedAssetIdFor } from './format/ids.ts'
import { sealMetadata, type AssetMetadata } from './format/metadata.ts'
import { ciphertextSize, DEFAULT_CHUNK_SIZE } from './format/stream.ts'
import { pinnedVersion, upgradeInFlight, waitForUpgrade, writeWithProtocol } from './protocol.ts'
import { appliedWrite } from './history.ts'

/** The asset as its album holds it now: opened (signature, metadata and file key checked), with its feed entry. */
interface Current {
  readonly asset: OpenedAsset
  readonly entry: Feed['entries'][number]
}

async function current(library: Library, albumId: string, assetId: string, known?: Feed['entries'][number]): Promise<Current> {
  const entry = known ?? (await findAssetEntry(library.client, albumId, assetId))
  if (entry === null || entry.asset_id !== assetId || entry.action === 'delete') throw new AssetNotFoundError(albumId, assetId)
  const asset = await openStoredAsset({ ...library, albumId }, entry)
  // The envelope's file id is signed; the feed entry's asset_id is the server's word.
  if (asset.envelope.file_id !== assetId) throw new Error(`the feed entry of asset ${assetId} carries a manifest of another asset`)
  return { asset, entry }
}

type Chain = { readonly action: 'create' } | { readonly action: 'replace'; readonly manifestHash: string }

/** Signs and applies a lifecycle write of the asset's original under `fileId`, carrying `metadataBlob`; answers its feed position. */
type Apply = (fileId: string, metadataBlob: Uint8Array, chain: Chain) => Promise<number>

/**
 * Runs `write` while an upload session of `albumId` declares the asset's original and
 * derivatives, which the account stores already: the session answers `present` for each and no
 * byte is sent. A blob the server does not hold any more cannot be named without its bytes, so
 * that is an error. The session closes with the write it carries (`apply`), or is aborted. A 426
 * runs `write` again at the version the album takes; an upgrade window is waited out, once.
 */
async function withStoredBlobs<T>(library: Library, albumId: string, asset: OpenedAsset, write: (apply: Apply) => Promise<T>): Promise<T> {
  const { client } = library
  const { envelope, metadata } = asset
  const blobs = [
    { role: 'original' as const, hash: envelope.ciphertext_hash, size: ciphertextSize(envelope.plaintext_size, envelope.chunk_size) },
    ...metadata.blobs
      .filter((b) => b.kind !== 'original')
      .map((b) => ({ role: 'derivative' as const, hash: toHex(b.hash), size: ciphertextSize(b.size, DEFAULT_CHUNK_SIZE) })),
  ]
  for (let round = 0; ; round++) {
    const version = await pinnedVersion(client, albumId, envelope.protocol_version)
    const session = await client.openUploadSession({ album_id: albumId, crypto_suite_id: CRYPTO_SUITE_V1, ciphertext_hash: envelope.ciphertext_hash, blobs })
    let applied = false
    try {
      const missing = session.blobs.filter((blob) => !blob.present)
      if (missing.length > 0)
        throw new Error(`the server no longer holds the photo's ${missing.map((blob) => blob.role).join(' and ')}: it cannot be named without its bytes`)
      return await writeWithProtocol(
        client,
        albumId,
        version,
        (protocolVersion) =>
          write(async (fileId, metadataBlob, chain) => {
            const seq = await applyWrite(library, albumId, fileId, asset, metadataBlob, protocolVersion, chain)
            applied = true
            return seq
          }),
        { waitWhileUpgrading: false },
      )
    } catch (error) {
      if (!upgradeInFlight(error) || round >= 1) throw error
      await waitForUpgrade(client, albumId)
    } finally {
      if (!applied) await client.abortUploadSession(session.upload_id).catch(() => {})
    }
  }
}

async function applyWrite(
  library: Library,
  albumId: string,
  fileId: string,
  asset: OpenedAsset,
  metadataBlob: Uint8Array,
  protocolVersion: string,
  chain: Chain,
): Promise<number> {
  const { envelope } = asset
  const write = await buildLifecycleWrite(library.identity, {
    envelope: {
      crypto_suite_id: CRYPTO_SUITE_V1,
      protocol_version: protocolVersion,
      album_id: albumId,
      file_id: fileId,
      amk_version: chain.action === 'replace' ? envelope.amk_version : writeEpoch(library, albumId),
      ciphertext_hash: envelope.ciphertext_hash,
      plaintext_size: envelope.plaintext_size,
      chunk_size: envelope.chunk_size,
      key_mode: 'wrapped',
      created_by_user: library.userId,
      created_by_device: library.deviceId,
      client_version: library.clientVersion ?? CLIENT_VERSION,
      action: chain.action,
      ...(chain.action === 'replace' ? { prior_provenance_hash: chain.manifestHash, original_blob_hash: envelope.ciphertext_hash } : {}),
    },
    metadata: metadataBlob,
    content: await library.history?.content(albumId),
  })
  return (await appliedWrite(library.history, albumId, write, () => library.client.applyManifest(albumId, write.request))).sync_seq
}

/** The plaintext SHA-256 of an asset's original: downloaded and decrypted as a restore does (its hash, size and every chunk checked), kept nowhere. */
async function contentOf(library: Library, albumId: string, entry: Feed['entries'][number]): Promise<Uint8Array> {
  const file = await restoreFile({ ...library, albumId }, entry)
  const plain = new Tap(library.sha256)
  for await (const _ of plain.through(file.bytes));
  return plain.digest()
}

const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'

/**
 * The ids a copy of `content` named `name` may take in an album, in order: the content id (what
 * a backup of the same file into that album takes, so that a later backup finds it there), then
 * the named id (what a backup takes for a second file of that content), then numbered named ids
 * ("name" NUL n: a name never holds NUL) for an album where those were deleted (a create cannot
 * reuse a deleted asset's id). Empty content's content id is the album's record: never taken.
 */
async function* copyIds(library: Library, albumId: string, content: Uint8Array, name: string): AsyncGenerator<string> {
  if (toHex(content) !== EMPTY_SHA256) yield assetIdFor(library.masterKey, albumId, content)
  yield namedAssetIdFor(library.masterKey, albumId, content, name)
  for (let n = 2; n <= MAX_COPY_IDS; n++) yield namedAssetIdFor(library.masterKey, albumId, content, `${name}\u0000${n}`)
}

/** How many deleted copies of one photo an album may hold before a copy there gives up. */
const MAX_COPY_IDS = 64

export interface CopyResult {
  /** `stored`: the copy was created; `present`: the album holds this photo already (live), so nothing was written. */
  readonly status: 'stored' | 'present'
  /** The asset in the target album: the one created, or the one that holds the photo already. */
  readonly assetId: string
  /** Hex SHA-256 of the photo's plaintext. */
  readonly contentHash: string
}

/**
 * Copies an asset of `fromAlbumId` into `toAlbumId` without sending its bytes: a `create` there
 * naming the same original and derivatives, with a new metadata blob (the same fields, the
 * favourite mark with them, and the content mac) wrapping the same file key under the target
 * album's key. The copy's id follows from its content as a backup's would, so copying twice, or
 * copying a photo the album already holds, makes one (`present`). The original is downloaded
 * and decrypted once to learn its content hash (nothing of it is sent). Throws
 * AssetNotFoundError when the source is not a live asset of its album.
 */
export async function copyToAlbum(library: Library, fromAlbumId: string, assetId: string, toAlbumId: string, options: CopyOptions = {}): Promise<CopyResult> {
  if (fromAlbumId === toAlbumId) throw new TypeError('a photo is copied into another album, not its own')
  return copyOpened(library, fromAlbumId, await current(library, fromAlbumId, assetId, options.entry), toAlbumId, options)
}

export interface CopyOptions {
  /**
   * The photo's plaintext SHA-256, when this device knows it (it stored the photo: the local
   * index keeps it): the original is not downloaded. It must be what the metadata's `content_mac`
   * names (checked: a copy is never made under another content's id); without a mac to check it
   * by (metadata version 1), the original is read all the same.
   */
  readonly contentSha256?: Uint8Array
  /**
   * The source's live feed entry, when the caller read the album's feed already (an import
   * copying many photos reads it once, not once a photo): opened and checked as one found here.
   */
  readonly entry?: Feed['entries'][number]
}

async function copyOpened(library: Library, fromAlbumId: string, { asset, entry }: Current, toAlbumId: string, options: CopyOptions = {}): Promise<CopyResult> {
  // Only against a mac to check it by (metadata version 1 has none: the original is read then).
  const known = asset.metadata.contentMac === undefined ? undefined : options.contentSha256
  const content = known ?? (await contentOf(library, fromAlbumId, entry))
  const contentMac = await contentMacOf(library.masterKey, content)
  // The original is authenticated under the file key; a mac that differs would be metadata written for another content.
  if (asset.metadata.contentMac !== undefined && !equalBytes(asset.metadata.contentMac, contentMac))
    throw new Error(`asset ${asset.assetId}: its original is not the content ${known === undefined ? 'its metadata names' : 'given'}`)
  const metadata: AssetMetadata = { ...asset.metadata, contentMac }
  const albumKey = await albumKeyOf(library, toAlbumId, writeEpoch(library, toAlbumId))
  const contentHash = toHex(content)
  return withStoredBlobs(library, toAlbumId, asset, async (apply) => {
    for await (const id of copyIds(library, toAlbumId, content, metadata.name)) {
      try {
        await apply(id, await sealMetadata(albumKey, { albumId: toAlbumId, fileId: id }, asset.fileKey, metadata), { action: 'create' })
        return { status: 'stored' as const, assetId: id, contentHash }
      } catch (error) {
        if (!staleRevival(error)) throw error
        // The id is taken: by this photo, live (copied or backed up before), or by a deleted asset (the next id is tried).
        if ((await findAssetEntry(library.client, toAlbumId, id)) !== null) return { status: 'present' as const, assetId: id, contentHash }
      }
    }
    throw new Error(`album ${toAlbumId} holds ${MAX_COPY_IDS} deleted copies of this photo: no id is left for another`)
  })
}

export interface MoveResult extends CopyResult {
  /** The source's deletion. */
  readonly deleted: DeleteResult
}

/**
 * Moves an asset into another album: copyToAlbum, then, once the copy is stored (or the album
 * held the photo already), the source is deleted for good (a move is not a deletion: nothing
 * goes to any trash). The deletion continues from the version that was copied: when the source
 * changed in between (a new version, a favourite mark), it is kept (AssetMovedOnError) and the
 * album has a copy. So a failure
 * between the two steps leaves the photo in both albums, never in none.
 */
export async function moveToAlbum(library: Library, fromAlbumId: string, assetId: string, toAlbumId: string): Promise<MoveResult> {
  if (fromAlbumId === toAlbumId) throw new TypeError('a photo is moved into another album, not its own')
  const source = await current(library, fromAlbumId, assetId)
  const copied = await copyOpened(library, fromAlbumId, source, toAlbumId)
  const deleted = await deleteFile(library, fromAlbumId, assetId, {
    head: sha256Hex(fromBase64(source.entry.manifest_cbor)),
    position: source.entry.sync_seq,
  })
  return { ...copied, deleted }
}

export interface FavouriteResult {
  /** `stored`: a new version carries the mark; `unchanged`: the asset was already so. */
  readonly status: 'stored' | 'unchanged'
  /** The feed position of the new version; null when unchanged. */
  readonly syncSeq: number | null
}

/**
 * Marks an asset a favourite (`on`) or not: a `replace` that keeps its original and derivatives
 * (nothing is sent) with its metadata re-sealed carrying `favourite: true`, or without it. The
 * mark lives in the encrypted metadata: the server cannot tell a favourite. When someone wrote
 * the asset meanwhile (409 stale_revival), it is read again and marked once more.
 */
export async function setFavourite(library: Library, albumId: string, assetId: string, on: boolean): Promise<FavouriteResult> {
  for (let attempt = 0; ; attempt++) {
    const { asset, entry } = await current(library, albumId, assetId)
    if ((asset.metadata.favourite === true) === on) return { status: 'unchanged', syncSeq: null }
    const metadata: AssetMetadata = { ...asset.metadata, favourite: on }
    const albumKey = await albumKeyOf(library, albumId, asset.envelope.amk_version)
    const sealed = await sealMetadata(albumKey, { albumId, fileId: assetId }, asset.fileKey, metadata)
    try {
      const syncSeq = await withStoredBlobs(library, albumId, asset, (apply) =>
        apply(assetId, sealed, { action: 'replace', manifestHash: sha256Hex(fromBase64(entry.manifest_cbor)) }),
      )
      return { status: 'stored', syncSeq }
    } catch (error) {
      if (!staleRevival(error) || attempt >= 1) throw error
    }
  }
}
