// "Recently deleted" (docs/client-library.md, "The trash"; decision 0059): a deleted photo goes
// to the trash, where the server holds its signed `delete` for TRASH_RETENTION_S (30 days by
// default) before applying it. It can be restored, or deleted for good at once. The list is
// checked: every entry's manifest must be a `delete` of that very asset signed with the
// account's identity key, so a server cannot make a photo look deleted (hidden from the
// library) by inventing an entry; one that fails is reported, never treated as trashed.
// Browser-safe.
import { fromBase64 } from '../sdk/bytes.ts'
import type { AssetDeletion, Trash } from '../sdk/client.ts'
import type { Library } from './albums.ts'
import { retainedOr, withDeletion, type DeleteResult } from './edits.ts'
import { readSignedManifest } from './files.ts'

/** Entries `listTrash` asks for a page: the server's default page. */
export const TRASH_PAGE = 200

/** An asset in the trash, its held delete checked. */
export interface TrashedFile {
  readonly albumId: string
  readonly assetId: string
  /** When it went in, and when the server applies its delete (Unix ms). */
  readonly trashedAt: number
  readonly purgeAt: number
  /** The signed delete the server holds: what `deleteForGood` sends. */
  readonly deletion: AssetDeletion
}

/** An entry the server listed that is not a delete of that asset signed by this account. */
export interface RefusedTrashEntry {
  readonly albumId: string
  readonly assetId: string
  readonly reason: string
}

export interface TrashList {
  readonly files: readonly TrashedFile[]
  readonly refused: readonly RefusedTrashEntry[]
}

/** What `trashFile` answers: when the asset went in, and until when it can be restored. */
export interface TrashResult {
  readonly albumId: string
  readonly assetId: string
  readonly trashedAt: number
  readonly purgeAt: number
}

/**
 * Moves an asset to the trash: signs the same `delete` manifest deleteFile signs (edits.ts
 * withDeletion: the chain re-read on a stale answer, 426 and upgrade windows carried out) and
 * sends it to the trash route. The asset stays readable until `purgeAt`.
 */
export async function trashFile(library: Library, albumId: string, assetId: string): Promise<TrashResult> {
  const entry = await withDeletion(library, albumId, assetId, (deletion) => library.client.trashAsset(albumId, assetId, deletion))
  return { albumId, assetId, trashedAt: Date.parse(entry.trashed_at), purgeAt: Date.parse(entry.purge_at) }
}

/** Takes an asset out of the trash (the server's 404 CofferProblem when it is not there). */
export function restoreFromTrash(library: Library, albumId: string, assetId: string): Promise<void> {
  return library.client.restoreAsset(albumId, assetId)
}

/** Checks one listed entry; the reason it is refused, or the file. */
async function checkEntry(library: Library, entry: Trash['entries'][number]): Promise<TrashedFile | string> {
  let read: Awaited<ReturnType<typeof readSignedManifest>>
  try {
    read = await readSignedManifest(library, fromBase64(entry.manifest_cbor))
  } catch (error) {
    return `its manifest is not one this account signed (${error instanceof Error ? error.message : String(error)})`
  }
  const { envelope } = read
  if (envelope.action !== 'delete') return `its manifest is a ${envelope.action}, not a delete`
  if (envelope.album_id !== entry.album_id || envelope.file_id !== entry.file_id) return 'its manifest deletes another asset'
  return {
    albumId: entry.album_id,
    assetId: entry.file_id,
    trashedAt: Date.parse(entry.trashed_at),
    purgeAt: Date.parse(entry.purge_at),
    deletion: { manifest_envelope: envelope, manifest_cbor: entry.manifest_cbor },
  }
}

/**
 * Every asset of the account in the trash, oldest first, each entry's manifest checked (see the
 * top of this file). Pages are asked for after the last entry received, not after what the
 * server says is next, so it cannot make the list loop.
 */
export async function listTrash(library: Library, options: { readonly pageSize?: number } = {}): Promise<TrashList> {
  const pageSize = options.pageSize ?? TRASH_PAGE
  const files: TrashedFile[] = []
  const refused: RefusedTrashEntry[] = []
  for (let after = 0; ; ) {
    const page = await library.client.trashPage(after, pageSize)
    for (const entry of page.entries) {
      const checked = await checkEntry(library, entry)
      if (typeof checked === 'string') refused.push({ albumId: entry.album_id, assetId: entry.file_id, reason: checked })
      else files.push(checked)
    }
    const last = page.entries.at(-1)
    if (last === undefined || page.entries.length < pageSize || last.trash_seq <= after) return { files, refused }
    after = last.trash_seq
  }
}

/** The ids of the assets in the trash, checked: what the library's lists leave out. */
export async function trashedIds(library: Library): Promise<Set<string>> {
  return new Set((await listTrash(library)).files.map((file) => file.assetId))
}

/** Deletes an asset in the trash for good, at once: the held manifest, on the asset deletion route. */
export async function deleteForGood(library: Library, file: TrashedFile): Promise<DeleteResult> {
  try {
    const result = await library.client.deleteAsset(file.albumId, file.assetId, file.deletion)
    return { assetId: file.assetId, syncSeq: result.sync_seq, replayed: result.replayed === true }
  } catch (error) {
    throw retainedOr(error, file.assetId)
  }
}
