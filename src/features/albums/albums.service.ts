// Albums: provisioning, the owner's list, the feed (SPEC.md "Albums", API.md section 6), and who
// may read an album: its owner, or a member (decision 0067).
import type { Static } from 'typebox'
import type { AlbumView, FeedEntry } from '../../contract/albums.ts'
import { timestamp } from '../../contract/common.ts'
import type { Deps } from '../../deps.ts'
import { AppError } from '../../errors.ts'
import type { Album, AlbumStore } from '../../storage/port/albums.ts'
import type { AppliedOp } from '../../storage/port/lifecycle.ts'
import type { AlbumRole, MemberStore } from '../../storage/port/members.ts'
import type { Caller } from '../context.ts'
import { ensureNotSuspended } from '../moderation/moderation.service.ts'

/** The caller's album; another account's answers exactly like an unknown one. */
export async function ownAlbum(store: AlbumStore, caller: Caller, albumId: string): Promise<Album> {
  const album = await store.findAlbum(albumId)
  if (album === undefined || album.ownerId !== caller.userId) throw new AppError('error.not_found', 'No album of this account has that id')
  return album
}

/**
 * The album and what the caller is to it, when it may read it: its owner, or an active member
 * (decision 0067). Anyone else gets exactly what an unknown album gets.
 */
export async function readableAlbum(store: MemberStore, caller: Caller, albumId: string): Promise<{ album: Album; role: AlbumRole }> {
  const access = await store.albumAccess(albumId, caller.userId)
  if (access === undefined) throw new AppError('error.not_found', 'No album this account may read has that id')
  return access
}

/**
 * The album and what the caller is to it, when it may write it: its owner, or an active
 * contributor. A viewer: 403 error.member.read_only; anyone else: what an unknown album gets.
 */
export async function writableAlbum(store: MemberStore, caller: Caller, albumId: string): Promise<{ album: Album; role: AlbumRole }> {
  const access = await readableAlbum(store, caller, albumId)
  if (access.role === 'viewer') throw readOnly()
  return access
}

export const readOnly = (): AppError => new AppError('error.member.read_only', 'A viewer of this album reads it; its owner and its contributors write it')

/** Created once per id; a repeat by the same account writes nothing. */
export async function provisionAlbum(deps: Deps, caller: Caller, albumId: string): Promise<{ album: Album; created: boolean }> {
  ensureNotSuspended(caller)
  const outcome = await deps.storage.provisionAlbum({
    albumId,
    ownerId: caller.userId,
    protocolVersion: deps.config.protocol.current,
    createdAt: deps.clock.now(),
  })
  if (outcome === 'taken') throw new AppError('error.album.id_unavailable', 'This album id is provisioned by another account; generate a new one')
  return { album: await ownAlbum(deps.storage, caller, albumId), created: outcome === 'created' }
}

export function listAlbums(deps: Deps, caller: Caller): Promise<Album[]> {
  return deps.storage.listAlbums(caller.userId)
}

export async function albumFeed(deps: Deps, caller: Caller, albumId: string, after: number, limit: number): Promise<AppliedOp[]> {
  await readableAlbum(deps.storage, caller, albumId)
  return deps.storage.feed(albumId, after, limit)
}

/** AlbumView: an album as the albums list (and the account export) shows it. */
export function albumView(album: Album): Static<typeof AlbumView> {
  return { album_id: album.albumId, protocol_version: album.protocolVersion, created_at: timestamp(album.createdAt) }
}

/** FeedEntry: an applied manifest as the album feed (and the account export) shows it. */
export function feedEntryView(op: AppliedOp): Static<typeof FeedEntry> {
  return {
    sync_seq: op.syncSeq,
    asset_id: op.assetId,
    action: op.action,
    manifest_cbor: op.manifestCbor.toString('base64'),
    envelope_hash: op.manifestHash,
    ...(op.metadataBlobHash === null ? {} : { metadata_blob_hash: op.metadataBlobHash }),
    applied_at: timestamp(op.appliedAt),
  }
}
