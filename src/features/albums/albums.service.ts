// Albums: provisioning, the owner's list, the feed (SPEC.md "Albums", API.md section 6).
import type { Deps } from '../../deps.ts'
import { AppError } from '../../errors.ts'
import type { Album, AppliedOp, AlbumStore } from '../../storage/port.ts'
import type { Caller } from '../context.ts'
import { ensureNotSuspended } from '../moderation/moderation.service.ts'

/** The caller's album; another account's answers exactly like an unknown one. */
export async function ownAlbum(store: AlbumStore, caller: Caller, albumId: string): Promise<Album> {
  const album = await store.findAlbum(albumId)
  if (album === undefined || album.ownerId !== caller.userId) throw new AppError('error.not_found', 'No album of this account has that id')
  return album
}

/** Created once per id; a repeat by the same account writes nothing. */
export async function provisionAlbum(deps: Deps, caller: Caller, albumId: string): Promise<{ album: Album; created: boolean }> {
  ensureNotSuspended(caller)
  const outcome = await deps.storage.provisionAlbum({ albumId, ownerId: caller.userId, protocolVersion: deps.config.protocol.current, createdAt: deps.clock.now() })
  if (outcome === 'taken') throw new AppError('error.album.id_unavailable', 'This album id is provisioned by another account; generate a new one')
  return { album: await ownAlbum(deps.storage, caller, albumId), created: outcome === 'created' }
}

export function listAlbums(deps: Deps, caller: Caller): Promise<Album[]> {
  return deps.storage.listAlbums(caller.userId)
}

export async function albumFeed(deps: Deps, caller: Caller, albumId: string, after: number, limit: number): Promise<AppliedOp[]> {
  await ownAlbum(deps.storage, caller, albumId)
  return deps.storage.feed(albumId, after, limit)
}
