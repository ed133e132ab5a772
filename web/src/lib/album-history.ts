// What this browser remembers of each album's history (src/client/history.ts AlbumMemoryStore;
// docs/decisions/0065-album-chain.md): the head of its last passing check, each entry's manifest
// hash through it, and its own writes since. Its own IndexedDB database, 'coffer-history', one
// record per album, sealed (lib/sealed.ts) under a key derived from the account's master key:
// unlike the date and photo indexes it outlives a sign-out and a new sign-in (this browser stays
// the same device, and forgetting what it saw would let a server roll an album back unnoticed),
// and opens only where the keys are. "Forget this browser" drops it with the keys. Writes go
// under a Web Lock per album, so that two tabs never write one album's record over each other.
import { clear, createStore, get, keys as storedAlbums, set } from 'idb-keyval'
import { EMPTY_HEAD, type AlbumHandOver, type ChainHead, type HandedOverAlbum } from '#photos/format/album-chain.ts'
import { hkdfSha256 } from '#photos/format/keys.ts'
import { AlbumHistoryKeeper, type AlbumMemory, type AlbumMemoryStore, type HistorySource, type OwnWrite } from '#photos/history.ts'
import { utf8 } from '#sdk/bytes.ts'
import { importedKey, isSealed, openValue, sealValue, type AesKey } from './sealed.ts'
import { inWorker } from './pool.ts'

const db = createStore('coffer-history', 'albums')
const KEY_INFO = 'coffer/v1/web/album-history'

/** An album's record as sealed: JSON, its digest as {"bytes": base64}. */
interface StoredMemory {
  readonly head: ChainHead
  /** [sync_seq, manifest hash] of each entry through the head. */
  readonly entries: readonly (readonly [number, string])[]
  readonly ownWrites: readonly OwnWrite[]
}

const recordName = (albumId: string): string => `history/${albumId}`

/** The sealing key of a master key: derived once per page. */
const keys = new WeakMap<Uint8Array, Promise<AesKey>>()
function sealingKey(masterKey: Uint8Array): Promise<AesKey> {
  let key = keys.get(masterKey)
  if (key === undefined) {
    key = hkdfSha256(masterKey, new Uint8Array(0), utf8(KEY_INFO), 32).then(importedKey)
    keys.set(masterKey, key)
  }
  return key
}

/** The browser's album memory for the account whose master key this is. */
export function browserAlbumMemory(masterKey: Uint8Array): AlbumMemoryStore {
  const read = async (albumId: string): Promise<StoredMemory | null> => {
    const stored = await get<unknown>(albumId, db)
    if (!isSealed(stored)) return null
    // A record that does not open (another account's, or damaged) is as none: the album is checked as by a new device.
    return openValue<StoredMemory>(await sealingKey(masterKey), recordName(albumId), stored).catch(() => null)
  }
  const update = async (albumId: string, change: (memory: StoredMemory) => StoredMemory): Promise<void> => {
    await navigator.locks.request(`coffer-history/${albumId}`, async () => {
      const next = change((await read(albumId)) ?? { head: EMPTY_HEAD, entries: [], ownWrites: [] })
      await set(albumId, await sealValue(await sealingKey(masterKey), recordName(albumId), next), db)
    })
  }
  return {
    async load(albumId): Promise<AlbumMemory | null> {
      const memory = await read(albumId)
      return memory === null ? null : { head: memory.head, checkedEntries: new Map(memory.entries), ownWrites: memory.ownWrites }
    },
    checked: (albumId, head, entries) =>
      update(albumId, (memory) => ({
        head,
        entries: [...memory.entries.filter(([seq]) => seq <= memory.head.seq), ...entries],
        ownWrites: memory.ownWrites.filter((write) => write.seq > head.seq),
      })),
    wrote: (albumId, write) => update(albumId, (memory) => ({ ...memory, ownWrites: [...memory.ownWrites, write] })),
    async handOver(): Promise<AlbumHandOver> {
      const albums = new Map<string, HandedOverAlbum>()
      for (const albumId of await storedAlbums<string>(db)) {
        const memory = await read(albumId)
        if (memory !== null) albums.set(albumId, { head: memory.head, writes: memory.ownWrites })
      }
      return albums
    },
    async adopt(albums) {
      for (const [albumId, { head, writes }] of albums)
        await update(albumId, (memory) => ({
          // This browser's own memory of an album, if any, stays: what it checked itself.
          ...(memory.head.seq > 0 ? memory : { ...memory, head }),
          ownWrites: [
            ...memory.ownWrites,
            ...writes.filter((write) => !memory.ownWrites.some((own) => own.seq === write.seq && own.manifestHash === write.manifestHash)),
          ],
        }))
    },
  }
}

/** Drops every album's record ("forget this browser"). */
export const dropAlbumHistory = (): Promise<void> => clear(db)

/**
 * The account's album histories as this browser checks them: signatures verified in the gallery
 * workers (an album of 2,000 photos is 2,000 ML-DSA-65 verifications, seconds of a page's
 * thread), and the page's own part (decoding the manifests) a slice at a time.
 */
export function browserHistory(source: Omit<HistorySource, 'verify' | 'pace'>, masterKey: Uint8Array): AlbumHistoryKeeper {
  return new AlbumHistoryKeeper(
    {
      ...source,
      verify: (publicKey, message, signature) => inWorker((worker) => worker.verifySignature(publicKey, message, signature)),
      // Each slice of manifests decoded in a task of its own: the album scrolls while its history is checked.
      pace: () => new Promise((resolve) => setTimeout(resolve, 0)),
    },
    browserAlbumMemory(masterKey),
  )
}
