// What the album commands share: the account as the client library's Library, and an album
// named on the command line.
import path from 'node:path'
import { albumRecordOf, findAlbum, openAlbum, type Library, type NamedAlbum, type PlanOptions } from '../../client/albums.ts'
import { albumName } from '../../client/format/ids.ts'
import { contactsFile } from '../../client/node/contacts.ts'
import { memberLibrary, sharedHistory, sharePartnerAlbums, writerKeysOf, type ContactStore, type SharedLibrary } from '../../client/sharing.ts'
import { fromBase64 } from '../../sdk/bytes.ts'
import type { ChainHead } from '../../client/format/album-chain.ts'
import { AlbumHistoryKeeper, type AlbumMemoryStore } from '../../client/history.ts'
import { AlbumTamperedError } from '../../client/tampering.ts'
import { albumMemoryFile } from '../../client/node/album-memory.ts'
import { nativeSha256, nativeVerify } from '../../client/node/crypto.ts'
import { listTrash, type TrashList } from '../../client/trash.ts'
import { openSyncState, type SqliteSyncState } from '../../client/node/state.ts'
import type { ReplaceTarget } from '../../client/edits.ts'
import type { Account } from './account.ts'
import { SetupNeeded, UsageError, type Invocation } from './command.ts'
import { Home } from './home.ts'
import type { Output } from './output.ts'

/** The account as the client library takes it, with the albums' histories this device checks and remembers (in state.sqlite). */
export type PhotosLibrary = SharedLibrary & { readonly history: AlbumHistoryKeeper }

/** What this device remembers of the albums' histories: in the config folder's state.sqlite. */
export const albumMemoryIn = (home: string): AlbumMemoryStore => albumMemoryFile(path.join(home, 'state.sqlite'))

/** Where this device keeps the identity keys it pinned for other accounts: the config folder's state.sqlite. */
export const contactsOf = (account: Pick<Account, 'home'>): ContactStore => contactsFile(path.join(account.home, 'state.sqlite'))

/**
 * The account's own albums: every entry verified under its writer's key (the account's, or in an
 * album it shares a contributor's, pinned), the membership it recorded held to what the server lists.
 */
export function libraryOf(account: Account): PhotosLibrary {
  const own = { client: account.client, userId: account.userId, identityPublicKey: account.identity.publicKey }
  return withHistory(account, {
    ...own,
    verify: nativeVerify,
    sha256: nativeSha256,
    identity: account.identity,
    deviceId: account.deviceId,
    masterKey: account.masterKey,
    writerKeys: writerKeysOf({ library: own, contacts: contactsOf(account) }),
    ownerId: account.userId,
  })
}

/** The library with the history keeper that checks its albums; once an album is checked, every later read of its feed in this command is held to what was checked. */
function withHistory(account: Account, library: SharedLibrary): PhotosLibrary {
  const source = { client: account.client, identityPublicKey: library.identityPublicKey, verify: nativeVerify, sha256: nativeSha256, ...sharedHistory(library) }
  const history = new AlbumHistoryKeeper(source, albumMemoryIn(account.home))
  return { ...library, client: history.guard(account.client), history }
}

/**
 * Checks the album's history against what this device saw and wrote (client/history.ts): throws
 * AlbumTamperedError, which exits with EXIT.untrusted, before a command reads or writes the album.
 */
export async function checkHistory(library: PhotosLibrary, album: Pick<NamedAlbum, 'albumId' | 'name'>): Promise<ChainHead> {
  return library.history.check(album.albumId, album.name)
}

/** checkHistory's answer for a command that goes on to other albums: the head, or the tampering found. */
export async function historyOf(library: PhotosLibrary, album: Pick<NamedAlbum, 'albumId' | 'name'>): Promise<ChainHead | AlbumTamperedError> {
  try {
    return await checkHistory(library, album)
  } catch (error) {
    if (error instanceof AlbumTamperedError) return error
    throw error
  }
}

/** The album named `name`; a usage error naming `coffer-photos albums` when there is none. */
/**
 * The library for an album shared with this account (client/sharing.ts memberLibrary: the keys it
 * received, each writer's pinned identity key), its history checked and remembered as this
 * account's own albums' are, under each writer's key.
 */
async function sharedPhotosLibrary(account: Account, albumId: string): Promise<PhotosLibrary> {
  const keys = new Home(account.home).readKeys()
  if (keys === null) throw new SetupNeeded('this device is not set up: run `coffer-photos setup` or `join` first')
  const own = libraryOf(account)
  const shared = await memberLibrary(
    { library: { ...own, client: account.client }, contacts: contactsOf(account), xwingSecret: fromBase64(keys.xwing_seed) },
    albumId,
  )
  return withHistory(account, shared)
}

/** The albums shared with this account, each with the library that reads it (its name not read: sharedAlbumsOf reads it). */
export async function sharedLibrariesOf(
  account: Account,
): Promise<Array<{ albumId: string; protocolVersion: string; library: PhotosLibrary; ownerId: string; role: 'viewer' | 'contributor' }>> {
  const out = []
  for (const listed of (await account.client.listSharedAlbums()).albums)
    out.push({
      albumId: listed.album_id,
      protocolVersion: listed.protocol_version,
      library: await sharedPhotosLibrary(account, listed.album_id),
      ownerId: listed.owner_id,
      role: listed.role,
    })
  return out
}

/** The albums shared with this account, each named by its record (null when none opens) with the library that reads it, its owner's id and this account's role. */
export async function sharedAlbumsOf(
  account: Account,
): Promise<Array<{ album: NamedAlbum; library: PhotosLibrary; ownerId: string; role: 'viewer' | 'contributor' }>> {
  const out = []
  for (const { albumId, protocolVersion, library, ownerId, role } of await sharedLibrariesOf(account)) {
    const record = await albumRecordOf(library, albumId).catch(() => null)
    out.push({ album: { albumId, name: record?.name ?? null, cover: record?.cover ?? null, protocolVersion }, library, ownerId, role })
  }
  return out
}

/**
 * An album by the name its record gives: one of this account's, else one shared with it (with
 * the library that reads it: sharedPhotosLibrary). A usage error names what to run when none is.
 */
export async function albumByName(account: Account, name: string | undefined): Promise<{ album: NamedAlbum; library: PhotosLibrary }> {
  const library = libraryOf(account)
  if (name === undefined) throw new UsageError('name the album (`coffer-photos albums` lists them)')
  const own = await findAlbum(library, name)
  if (own !== null) return { album: own, library }
  for (const shared of await sharedAlbumsOf(account)) if (shared.album.name === albumName(name)) return shared
  throw new UsageError(`there is no album "${name}" (\`coffer-photos albums\` lists yours, \`coffer-photos invites\` those others invited you into)`)
}

/**
 * The album `backup` writes into: one of this account's by that name, else one shared with it as
 * a contributor (a viewer's is a usage error: it may not add photos), else a new album of this
 * account's by that name.
 */
export async function backupAlbum(account: Account, name: string): Promise<{ album: NamedAlbum; library: PhotosLibrary }> {
  const library = libraryOf(account)
  const own = await findAlbum(library, name)
  if (own !== null) return { album: own, library }
  for (const shared of await sharedAlbumsOf(account)) {
    if (shared.album.name !== albumName(name)) continue
    if (shared.role === 'viewer') throw new UsageError(`"${shared.album.name}" was shared with you to view: only its owner and contributors add photos to it`)
    return shared
  }
  const made = await openAlbum(library, name)
  // A new album of this account's: shared with its partners at once ("share everything").
  const { refused } = await sharePartnerAlbums({ library, contacts: contactsOf(account) }, [made.albumId])
  if (refused[0] !== undefined) throw refused[0]
  return { album: made, library }
}

/**
 * The album `backup` or `import` writes into (backupAlbum), as the sync engine's target: its
 * history checked first, and kept on the sync state's connection (`state`), so that each write is
 * noted without opening the file again.
 */
export async function backupTargetOf(
  account: Account,
  name: string,
  state: AlbumMemoryStore,
): Promise<{ album: NamedAlbum; library: PhotosLibrary; target: ReplaceTarget & { readonly history: AlbumHistoryKeeper; readonly albumId: string } }> {
  const { album, library } = await backupAlbum(account, name)
  const history = new AlbumHistoryKeeper({ ...library, ...sharedHistory(library), client: account.client }, state)
  await history.check(album.albumId, album.name)
  return {
    album,
    library,
    target: { ...library, client: history.guard(account.client), history, albumId: album.albumId, protocolVersion: album.protocolVersion },
  }
}

/**
 * backupTargetOf on a sync state opened here (the config folder's state.sqlite), which the caller
 * closes; closed here when the album cannot be opened or its history does not check.
 */
export async function openBackupTarget(
  account: Account,
  name: string,
): Promise<Awaited<ReturnType<typeof backupTargetOf>> & { readonly state: SqliteSyncState }> {
  const state = openSyncState(path.join(account.home, 'state.sqlite'))
  try {
    return { ...(await backupTargetOf(account, name, state)), state }
  } catch (error) {
    state.close()
    throw error
  }
}

export async function namedAlbum(library: Library, name: string | undefined): Promise<NamedAlbum> {
  if (name === undefined) throw new UsageError('name the album (`coffer-photos albums` lists them)')
  const album = await findAlbum(library, name)
  if (album === null) throw new UsageError(`there is no album "${name}" (\`coffer-photos albums\` lists them)`)
  return album
}

/** A whole number option from 1 to `max` (e.g. --concurrency, up to 64), or `fallback` when not given. */
export function countOption(value: Invocation['values'][string], option: string, fallback: number, max = 64): number {
  if (value === undefined) return fallback
  const count = Number(value)
  if (typeof value !== 'string' || !Number.isSafeInteger(count) || count < 1 || count > max)
    throw new UsageError(`--${option} takes a whole number from 1 to ${max}`)
  return count
}

/**
 * The account's trash, checked (listTrash): an entry whose delete this account did not sign is
 * warned about and left out, so the file it names stays listed.
 */
export async function checkedTrash(library: Library, out: Output): Promise<TrashList> {
  const trash = await listTrash(library)
  for (const entry of trash.refused)
    out.warn(`coffer-photos: the server lists file ${entry.assetId} as deleted, but ${entry.reason}: it is ignored, the file stays listed`)
  return trash
}

/** What ls, restore and rm take of an album: its files not in Recently deleted. */
export async function outsideTrash(library: Library, out: Output): Promise<PlanOptions> {
  const trashed = new Set((await checkedTrash(library, out)).files.map((file) => file.assetId))
  return { keep: (assetId) => !trashed.has(assetId) }
}
