// Deleting a photo and replacing it with a new version (docs/client-library.md, "Deleting and
// replacing files"), through signed lifecycle writes that continue the asset's chain: a `delete`
// manifest on the asset deletion route (API.md section 6, "Asset deletion"), and a `replace`
// that uploads the new version under the same asset id (backupFile's upload, files.ts
// storeFile). Every other device sees either in the album's feed at its next sync. A 426 or an
// upgrade window on the way is carried out without asking anyone (protocol.ts). Browser-safe.
import { fromBase64 } from '../sdk/bytes.ts'
import { CofferProblem, type AssetDeletion, type CofferClient } from '../sdk/client.ts'
import { buildAssetDeletion, type DeleteEnvelope, type Envelope, type SignedManifest } from '../sdk/manifest.ts'
import { findAssetEntry, type Library } from './albums.ts'
import {
  CLIENT_VERSION,
  readSignedManifest,
  staleRevival,
  type BackupOptions,
  type BackupResult,
  type BackupTarget,
  type ChainHead,
  type FileSource,
  type RestoreSource,
} from './files.ts'
import { storeFile } from './upload.ts'
import { appliedWrite } from './history.ts'
import { pinnedVersion, writeWithProtocol } from './protocol.ts'

/** The asset is not a live asset of the album (never was, or was deleted). */
export class AssetNotFoundError extends Error {
  override readonly name = 'AssetNotFoundError'
  readonly albumId: string
  readonly assetId: string
  constructor(albumId: string, assetId: string) {
    super(`asset ${assetId} is not in the album (it was deleted, or never there)`)
    this.albumId = albumId
    this.assetId = assetId
  }
}

/** The server keeps the asset until its retention date (409 error.asset.retained). */
export class AssetRetainedError extends Error {
  override readonly name = 'AssetRetainedError'
  /** RFC 3339, or null when the server did not say. */
  readonly retainedUntil: string | null
  readonly assetId: string
  constructor(assetId: string, retainedUntil: string | null, cause: unknown) {
    super(`asset ${assetId} is retained${retainedUntil === null ? '' : ` until ${retainedUntil}`}: it cannot be deleted before then`, { cause })
    this.assetId = assetId
    this.retainedUntil = retainedUntil
  }
}

/** The asset's last write, its signature checked: what a delete or a replace continues from. */
interface LastWrite {
  readonly envelope: Envelope
  readonly head: ChainHead
}

/**
 * `position`, when the caller knows it, is the sync_seq of the asset's latest feed entry: that
 * entry alone is read, not the whole feed (the sync engine read the feed already). An entry
 * found there that is not the asset's is refused as the feed's answer would be.
 */
async function lastWrite(
  client: CofferClient,
  source: Pick<RestoreSource, 'identityPublicKey' | 'verify' | 'writerKeys'>,
  albumId: string,
  assetId: string,
  position?: number,
): Promise<LastWrite> {
  const entry = position === undefined ? await findAssetEntry(client, albumId, assetId) : ((await client.feed(albumId, position - 1, 1)).entries[0] ?? null)
  if (entry === null || entry.asset_id !== assetId) throw new AssetNotFoundError(albumId, assetId)
  const read = await readSignedManifest(source, fromBase64(entry.manifest_cbor))
  if (read.envelope.action === 'delete') throw new AssetNotFoundError(albumId, assetId)
  const envelope = read.envelope as Envelope
  if (envelope.album_id !== albumId || envelope.file_id !== assetId) throw new Error(`the feed entry of asset ${assetId} carries a manifest of another asset`)
  return { envelope, head: { manifestHash: read.manifestHash, originalHash: envelope.ciphertext_hash } }
}

export interface DeleteResult {
  readonly assetId: string
  /** The feed position of the delete. */
  readonly syncSeq: number
  /** True when the server had applied this very deletion already (an answer lost on the way). */
  readonly replayed: boolean
}

export interface DeletionOptions {
  /** The version to delete, as the SHA-256 of its manifest (the chain head): a newer one written since is kept (a move deletes only what it copied). Any unless given. */
  readonly head?: string
  /** The sync_seq of the asset's latest feed entry, when known: only that entry is read. */
  readonly position?: number
}

/**
 * Signs a `delete` manifest continuing from the asset's latest feed entry (its signature checked)
 * and hands it to `post` (the delete route, or the trash's). When someone wrote the asset
 * meanwhile (409 stale_revival), it reads the asset again and signs once more. Throws
 * AssetNotFoundError when the album holds no such live asset, AssetRetainedError while the
 * server keeps it (its retention date), AssetMovedOnError when `head` is not its current
 * version (nothing deleted), and the server's CofferProblem otherwise.
 */
export async function withDeletion<R>(
  library: Library,
  albumId: string,
  assetId: string,
  post: (deletion: AssetDeletion, signed: SignedManifest<DeleteEnvelope>) => Promise<R>,
  options: DeletionOptions = {},
): Promise<R> {
  const { client } = library
  const headOf = async (position?: number): Promise<LastWrite> => {
    const found = await lastWrite(client, library, albumId, assetId, position)
    if (options.head !== undefined && found.head.manifestHash !== options.head) throw new AssetMovedOnError(assetId)
    return found
  }
  let last = await headOf(options.position)
  const version = await pinnedVersion(client, albumId, last.envelope.protocol_version)
  const send = async (protocolVersion: string) => {
    const deletion = await buildAssetDeletion(library.identity, {
      last: { envelope: last.envelope, manifestHash: last.head.manifestHash },
      created_by_device: library.deviceId,
      client_version: library.clientVersion ?? CLIENT_VERSION,
      protocol_version: protocolVersion,
      content: await library.history?.content(albumId),
    })
    return post(deletion.request, deletion)
  }
  const attempt = async (protocolVersion: string) => {
    try {
      return await send(protocolVersion)
    } catch (error) {
      if (!staleRevival(error)) throw error
      last = await headOf() // AssetNotFoundError when someone deleted it meanwhile
      return await send(protocolVersion)
    }
  }
  try {
    return await writeWithProtocol(client, albumId, version, attempt)
  } catch (error) {
    throw retainedOr(error, assetId)
  }
}

/** A 409 error.asset.retained as AssetRetainedError; any other error as it is. */
export function retainedOr(error: unknown, assetId: string): unknown {
  if (error instanceof CofferProblem && error.code === 'error.asset.retained') {
    const until = (error.problem as { retained_until?: unknown }).retained_until
    return new AssetRetainedError(assetId, typeof until === 'string' ? until : null, error)
  }
  return error
}

/**
 * Deletes an asset of the album at once (withDeletion on the asset deletion route); an asset in
 * the trash leaves it too. `trashFile` (trash.ts) moves it to the trash instead.
 */
export async function deleteFile(library: Library, albumId: string, assetId: string, options: DeletionOptions = {}): Promise<DeleteResult> {
  const result = await withDeletion(
    library,
    albumId,
    assetId,
    (deletion, signed) => appliedWrite(library.history, albumId, signed, () => library.client.deleteAsset(albumId, assetId, deletion)),
    options,
  )
  return { assetId, syncSeq: result.sync_seq, replayed: result.replayed === true }
}

/**
 * The asset's current version is not the one the replace was told to continue from
 * (replaceFile's `from`): someone else wrote it since. Nothing was written.
 */
export class AssetMovedOnError extends Error {
  override readonly name = 'AssetMovedOnError'
  readonly assetId: string
  constructor(assetId: string) {
    super(`asset ${assetId} has a newer version in the album, written elsewhere`)
    this.assetId = assetId
  }
}

/** Who replaces, where: a backup target that can also check the asset's signatures. */
export type ReplaceTarget = BackupTarget & Pick<RestoreSource, 'identityPublicKey' | 'verify' | 'writerKeys'>

/**
 * A new version of an existing asset (e.g. the photo after an edit): `source` is encrypted and
 * uploaded as backupFile does (a new file key, derivatives from `options.describe`, the metadata
 * with the source's name), under the same asset id, with a `replace` manifest that continues the
 * asset's chain and names its current original. A concurrent write to the asset (409
 * stale_revival) makes it read the chain head again and sign once more. Answers status
 * `stored`. Throws AssetNotFoundError before anything is sent when the album holds no such live
 * asset, and FileTransferError naming the file for the rest.
 */
export async function replaceFile(
  target: ReplaceTarget,
  assetId: string,
  source: FileSource,
  options: Omit<BackupOptions, 'isStored'> & {
    /** The asset's current plaintext SHA-256 (hex), when known (the local index): the same content again is not sent, and the answer is `present`. */
    readonly currentContentHash?: string
    /** The sync_seq of the asset's latest feed entry, when known: only that entry is read. */
    readonly position?: number
    /**
     * The version (its original's ciphertext hash) the new one must follow: when the asset's
     * signed head is another (someone wrote it since, before or during this upload), nothing is
     * written and AssetMovedOnError is thrown. Any head unless given.
     */
    readonly from?: string
  } = {},
): Promise<BackupResult> {
  const { currentContentHash, position, from, ...storing } = options
  const headOf = async (at?: number): Promise<ChainHead> => {
    const { head } = await lastWrite(target.client, target, target.albumId, assetId, at)
    if (from !== undefined && head.originalHash !== from) throw new AssetMovedOnError(assetId)
    return head
  }
  return storeFile(target, source, storing, {
    action: 'replace',
    assetId,
    head: await headOf(position),
    ...(currentContentHash === undefined ? {} : { currentContentHash }),
    reread: () => headOf(),
  })
}
