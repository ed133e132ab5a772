// What opening an album's assets in a worker takes (src/client/files.ts AssetKeys), as data a
// worker can be sent: the account's own keys, and for an album shared with it the album keys it
// received, and for an album of several writers each writer's pinned identity key (the page
// resolved them: lib/sharing.ts). The worker turns them back into AssetKeys' functions.
import type { AssetKeys } from '#photos/files.ts'

/** The keys of an album others write into, or that others shared: the album keys received (a member's), and each writer's identity key. */
export interface SharedKeys {
  readonly albumKeys?: ReadonlyMap<number, Uint8Array>
  readonly writers?: ReadonlyMap<string, Uint8Array>
}

export type AlbumKeys = Pick<AssetKeys, 'masterKey' | 'albumId' | 'identityPublicKey'> & SharedKeys

export function assetKeysOf(keys: AlbumKeys): AssetKeys {
  const { albumKeys, writers, ...own } = keys
  return {
    ...own,
    ...(albumKeys === undefined
      ? {}
      : {
          albumKey: async (albumId: string, epoch: number) => {
            const key = albumId === keys.albumId ? albumKeys.get(epoch) : undefined
            if (key === undefined) throw new Error(`this account holds no key of the album at epoch ${epoch}`)
            return key
          },
        }),
    ...(writers === undefined
      ? {}
      : {
          writerKeys: (userId: string) => {
            const key = writers.get(userId)
            if (key === undefined) throw new Error(`account ${userId} is not one this album's photos may be written by`)
            return key
          },
        }),
  }
}
