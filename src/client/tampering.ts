// What a server that rewrote an album's history is called out for (history.ts finds it): apart
// from the check itself, so that what only reports it (coffer-photos' error lines) loads none of
// the manifest and signature code.

export type TamperingKind = 'forged' | 'replayed' | 'reordered' | 'omitted' | 'forked' | 'rolled_back' | 'membership'

/** What each kind means, in a sentence a person can read. */
export const TAMPERING: Readonly<Record<TamperingKind, string>> = {
  forged: 'the server served an entry this account did not write, or changed what an entry says',
  replayed: 'the server served an earlier entry again',
  reordered: 'the server served the entries in another order than they were written',
  omitted: 'the server left out an entry a device of this account wrote',
  forked: 'the server showed devices of this account different histories',
  rolled_back: 'the server rolled the album back to an earlier state',
  membership: 'the server lists members, roles or keys of the album that its owner did not record',
}

/** The server served an album's history that is not the one the account's devices wrote and saw. */
export class AlbumTamperedError extends Error {
  override readonly name = 'AlbumTamperedError'
  readonly albumId: string
  readonly kind: TamperingKind
  /** The feed position where it showed (the entry, or the point remembered). */
  readonly seq: number
  readonly detail: string
  /** The album's name, when the caller knew it. */
  readonly albumName: string | null
  constructor(albumId: string, kind: TamperingKind, seq: number, detail: string, albumName: string | null = null) {
    super(`album ${albumName === null ? albumId : `"${albumName}" (${albumId})`}: ${TAMPERING[kind]} (${detail})`)
    this.albumId = albumId
    this.kind = kind
    this.seq = seq
    this.detail = detail
    this.albumName = albumName
  }
}
