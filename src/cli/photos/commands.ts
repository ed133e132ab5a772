// Every `coffer-photos` command as `coffer-photos --help` lists it. A command's own file, with
// what it imports (the client library, sharp, the prompts), is loaded only when that command
// runs or shows its own --help: the overview and the account commands start without it.
import type { Command } from './command.ts'

export interface ListedCommand {
  readonly name: string
  /** One line for `coffer-photos --help`. */
  readonly summary: string
  /**
   * Reads, writes or walks the photos themselves (thumbnails, albums' feeds, whole files): main.ts
   * runs it with the memory settings that bound such work (MALLOC_ARENA_MAX, a small young generation).
   */
  readonly photoWork: boolean
  load(): Promise<Command>
}

export const COMMANDS: readonly ListedCommand[] = [
  {
    name: 'login',
    summary: 'log in to a Coffer server (--register creates the account)',
    photoWork: false,
    load: async () => (await import('./login.ts')).login,
  },
  {
    name: 'setup',
    summary: "make the account's keys on its first device and show the recovery phrase",
    photoWork: false,
    load: async () => (await import('./setup.ts')).setup,
  },
  {
    name: 'device',
    summary: 'add a new device to this account (`device add`): shows the pairing code for `join`',
    photoWork: false,
    load: async () => (await import('./device.ts')).device,
  },
  {
    name: 'join',
    summary: 'make this device another device of an account, with the pairing code `device add` shows',
    photoWork: false,
    load: async () => (await import('./join.ts')).join,
  },
  {
    name: 'recover',
    summary: 'set this device up from the recovery phrase (signs in first, like login)',
    photoWork: false,
    load: async () => (await import('./recover.ts')).recover,
  },
  {
    name: 'status',
    summary: 'who is logged in where, and whether this device is set up',
    photoWork: false,
    load: async () => (await import('./status.ts')).status,
  },
  {
    name: 'backup',
    summary: 'back up a folder of photos and videos into an album (resumable)',
    photoWork: true,
    load: async () => (await import('./backup.ts')).backup,
  },
  {
    name: 'import',
    summary: 'bring in a Google Takeout export (its zips as they are), or a folder with XMP sidecars: dates, places (resumable)',
    photoWork: true,
    load: async () => (await import('./import.ts')).importCommand,
  },
  {
    name: 'albums',
    summary: 'list the albums (how many files, when taken), or rename one',
    photoWork: true,
    load: async () => (await import('./albums.ts')).albums,
  },
  { name: 'ls', summary: 'list the files of an album', photoWork: true, load: async () => (await import('./albums.ts')).ls },
  {
    name: 'search',
    summary: 'find photos by name, date taken, place, camera, album, favourite or video (on this device)',
    photoWork: true,
    load: async () => (await import('./search.ts')).search,
  },
  {
    name: 'verify',
    summary: 'check that the server holds every file, and every custody receipt',
    photoWork: true,
    load: async () => (await import('./verify.ts')).verify,
  },
  {
    name: 'restore',
    summary: 'restore an album into a folder, every file checked (resumable)',
    photoWork: true,
    load: async () => (await import('./restore.ts')).restore,
  },
  { name: 'rm', summary: 'move photos of an album to Recently deleted (on every device)', photoWork: true, load: async () => (await import('./edit.ts')).rm },
  {
    name: 'trash',
    summary: 'Recently deleted: list, restore, or delete for good what rm deleted',
    photoWork: true,
    load: async () => (await import('./trash.ts')).trash,
  },
  {
    name: 'replace',
    summary: 'store a new version of a photo in an album (e.g. after an edit)',
    photoWork: true,
    load: async () => (await import('./edit.ts')).replace,
  },
  { name: 'cp', summary: 'copy photos into another album (nothing uploaded again)', photoWork: true, load: async () => (await import('./organise.ts')).cp },
  { name: 'mv', summary: 'move photos into another album (nothing uploaded again)', photoWork: true, load: async () => (await import('./organise.ts')).mv },
  { name: 'fav', summary: 'mark photos as favourites', photoWork: true, load: async () => (await import('./organise.ts')).fav },
  { name: 'unfav', summary: 'take the favourite mark off photos', photoWork: true, load: async () => (await import('./organise.ts')).unfav },
  {
    name: 'free-up',
    summary: 'delete local photos the album holds safely (a dry run unless --yes)',
    photoWork: true,
    load: async () => (await import('./free-up.ts')).freeUp,
  },
  {
    name: 'share',
    summary: 'invite another account into one of your albums (--contributor: they add photos too)',
    photoWork: false,
    load: async () => (await import('./sharing.ts')).share,
  },
  {
    name: 'invites',
    summary: 'the albums others invited you into; `invites accept <album-id>` or `decline`',
    photoWork: false,
    load: async () => (await import('./sharing.ts')).invites,
  },
  {
    name: 'members',
    summary: 'who one of your albums is shared with, and whether you verified them',
    photoWork: false,
    load: async () => (await import('./sharing.ts')).members,
  },
  { name: 'unshare', summary: 'stop sharing one of your albums with someone', photoWork: false, load: async () => (await import('./sharing.ts')).unshare },
  {
    name: 'partner',
    summary: 'share every album with someone, the new ones too (`partner --stop <email>` ends it)',
    photoWork: false,
    load: async () => (await import('./sharing.ts')).partner,
  },
  { name: 'leave', summary: 'leave an album shared with you', photoWork: false, load: async () => (await import('./sharing.ts')).leave },
  {
    name: 'safety-number',
    summary: 'the number to compare with someone you share with (--confirm once it matches)',
    photoWork: false,
    load: async () => (await import('./sharing.ts')).safetyNumberCommand,
  },
  {
    name: 'link',
    summary: 'make a public link to an album, or to some of its photos, for people with no account',
    photoWork: true,
    load: async () => (await import('./links.ts')).link,
  },
  {
    name: 'links',
    summary: 'your public links: how often each was opened, its state and URL',
    photoWork: false,
    load: async () => (await import('./links.ts')).links,
  },
  {
    name: 'unlink',
    summary: 'revoke a public link (its id or URL): it shows nothing more',
    photoWork: false,
    load: async () => (await import('./links.ts')).unlink,
  },
  {
    name: 'devices',
    summary: "the account's devices, from the signed device directory (checked here)",
    photoWork: false,
    load: async () => (await import('./devices.ts')).devices,
  },
  {
    name: 'sessions',
    summary: "the account's signed-in sessions on every device, and which one is this",
    photoWork: false,
    load: async () => (await import('./sessions.ts')).sessions,
  },
  {
    name: 'revoke',
    summary: 'end one session (`sessions` lists them): its device is signed out',
    photoWork: false,
    load: async () => (await import('./sessions.ts')).revoke,
  },
  {
    name: 'revoke-all',
    summary: 'sign out every session on every device, this one included (proved with the identity key)',
    photoWork: false,
    load: async () => (await import('./revoke-all.ts')).revokeAll,
  },
  {
    name: 'export',
    summary: 'save everything the server holds about the account as one JSON file',
    photoWork: true,
    load: async () => (await import('./export.ts')).exportCommand,
  },
  {
    name: 'logout',
    summary: "end the session on the server (--forget-keys: remove this device's keys too)",
    photoWork: false,
    load: async () => (await import('./logout.ts')).logout,
  },
  {
    name: 'delete-account',
    summary: 'delete the account on the server, every album and photo in it, and forget it here',
    photoWork: false,
    load: async () => (await import('./delete-account.ts')).deleteAccount,
  },
]
