// Sharing in the web app (decision 0067): the album an account opens, as its library and the
// keys its photos open with. One of the account's own albums: its master key, and when others
// write into it each writer's identity key as this browser pinned it. An album shared with it:
// the album keys it received (its keyring, or the owner's sealing for this browser), its owner's
// record, each writer's pinned key, and its history held to the membership the owner signed.
import { ContactUnusableError, memberLibrary, sharedHistory, type MemberDevice, type SharedLibrary } from '#photos/sharing.ts'
import { CofferProblem, type AlbumMembers, type CofferClient } from '#sdk/client.ts'
import { browserAlbumMemory, browserHistory } from './album-history.ts'
import type { SharedKeys } from './album-keys.ts'
import { browserContacts } from './contacts.ts'
import { libraryOf } from './library.ts'
import type { SavedKeys } from './store.ts'

/** An album as this account opens it: the library that reads it, the keys the workers take, who owns it, and who is in it. */
export interface AlbumAccess {
  readonly library: SharedLibrary
  readonly shared: SharedKeys
  readonly role: 'owner' | 'viewer' | 'contributor'
  readonly members: AlbumMembers
}

/** This browser as a member's device: the account's library, its pins, and its X-Wing secret. */
export const memberDevice = (client: CofferClient, keys: SavedKeys): MemberDevice => ({
  library: libraryOf(client, keys),
  contacts: browserContacts(keys.masterKey),
  xwingSecret: keys.xwingSeed,
})

/**
 * Each writer's identity key the workers check an album's photos with: the owner's and each
 * contributor's, as pinned. One the server lists without a usable directory is left out (a
 * photo it wrote then does not open); which of them may write is the history check's to say.
 */
async function writersOf(library: SharedLibrary, members: AlbumMembers): Promise<ReadonlyMap<string, Uint8Array>> {
  const writers = new Map<string, Uint8Array>()
  const contributors = members.members.filter((member) => member.role === 'contributor').map((member) => member.user_id)
  for (const userId of [members.owner.user_id, ...contributors]) {
    try {
      writers.set(userId, await library.writerKeys(userId))
    } catch (error) {
      if (!(error instanceof ContactUnusableError) && !(error instanceof CofferProblem && error.status === 404)) throw error
    }
  }
  return writers
}

/**
 * The album `albumId` as this account opens it: its own (`role` owner), or one shared with it
 * (the owner the server names is another account: its keys then open only if that owner sealed
 * them for this account). Throws IdentityKeyChangedError when a writer's key is not the one this
 * browser pinned.
 */
export async function albumAccess(client: CofferClient, keys: SavedKeys, albumId: string): Promise<AlbumAccess> {
  const members = await client.listMembers(albumId)
  if (members.owner.user_id === keys.userId) {
    const library = libraryOf(client, keys)
    // An album nobody else is in: the account's own key checks every photo, as before sharing.
    const shared = members.members.length === 0 ? {} : { writers: await writersOf(library, members) }
    return { library, shared, role: 'owner', members }
  }
  const member = await memberLibrary(memberDevice(client, keys), albumId)
  const library: SharedLibrary = {
    ...member,
    history: browserHistory({ client, identityPublicKey: member.identityPublicKey, ...sharedHistory(member) }, keys.masterKey),
  }
  const own = members.members.find((listed) => listed.user_id === keys.userId)
  return {
    library,
    shared: { writers: await writersOf(library, members), ...(member.albumKeys === undefined ? {} : { albumKeys: member.albumKeys }) },
    role: own?.role ?? 'viewer',
    members,
  }
}

/** The most new photos a badge counts ("99+" past it): one page of the feed. */
export const NEW_PHOTOS_COUNTED = 99

/**
 * How many photos others added to an album since this browser last checked it (its album page
 * opened): the feed's creates after the head this browser remembers, less its own writes; every
 * photo for an album it never opened. A hint for a badge, read from the feed's plain fields (the
 * album page checks each entry when it opens); at most NEW_PHOTOS_COUNTED + 1.
 */
export async function newPhotosIn(client: CofferClient, masterKey: Uint8Array, albumId: string): Promise<number> {
  const remembered = await browserAlbumMemory(masterKey).load(albumId)
  const own = new Set(remembered?.ownWrites.map((write) => write.seq))
  const page = await client.feed(albumId, remembered?.head.seq ?? 0, NEW_PHOTOS_COUNTED + 1)
  const created = page.entries.filter((entry) => entry.action === 'create' && !own.has(entry.sync_seq)).length
  // Never opened here: the album's record is the first create, not a photo.
  return Math.max(0, created - (remembered === null ? 1 : 0))
}
