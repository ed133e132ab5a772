// What this browser keeps between visits, in IndexedDB (origin-private): the session's token
// pair with the account it belongs to, and, once the browser is a device of the account, the
// device's keys. Nothing here ever leaves the browser except the tokens, sent to this origin.
// Signing out drops the tokens and keeps the keys (the browser stays a device, as the CLI's
// logout does); "forget this browser" drops both (docs/web.md).
//
// Setting up the account's first device keeps its new keys under 'pending-keys' before anything
// is published (the first publish binds the identity key for good), and moves them to 'keys'
// only once the recovery phrase was checked: 'keys' always holds a finished device, which is all
// the rest of the app reads (decision 0020, "Becoming a device").
import { createStore, del, delMany, get, promisifyRequest, set } from 'idb-keyval'
import type { Tokens } from '../../../src/sdk/client.ts'

const db = createStore('coffer', 'state')

export interface SavedSession {
  readonly email: string
  readonly userId: string
  readonly tokens: Tokens
}

/** A device's secrets, as the CLI keeps them in keys.json (standard base64 fields). */
export interface SavedKeys {
  readonly userId: string
  readonly deviceId: string
  readonly masterKey: Uint8Array
  /** IdentityKey.exportSeeds(): 64 bytes. */
  readonly identitySeeds: Uint8Array
  readonly xwingSeed: Uint8Array
  /**
   * The identity key's public half (1984 bytes), kept so that opening the app need not derive it
   * from the seeds: an ML-DSA-65 key generation, about 100 ms of the page's thread. Keys saved
   * without it are given it at their next load (lib/library.ts keysWithPublicKey).
   */
  readonly identityPublicKey?: Uint8Array
}

export const readSession = (): Promise<SavedSession | undefined> => get<SavedSession>('session', db)
export const saveSession = (session: SavedSession): Promise<void> => set('session', session, db)
export const dropSession = (): Promise<void> => del('session', db)

export const readKeys = (): Promise<SavedKeys | undefined> => get<SavedKeys>('keys', db)
export const saveKeys = (keys: SavedKeys): Promise<void> => set('keys', keys, db)
export const dropKeys = (): Promise<void> => delMany(['keys', 'pending-keys'], db)

/** A first-device setup that has not finished: its keys (never complete yet) and the name it publishes. */
export interface PendingKeys extends SavedKeys {
  readonly deviceName: string
}

export const readPendingKeys = (): Promise<PendingKeys | undefined> => get<PendingKeys>('pending-keys', db)
export const savePendingKeys = (keys: PendingKeys): Promise<void> => set('pending-keys', keys, db)
export const dropPendingKeys = (): Promise<void> => del('pending-keys', db)

/** The setup finished: its keys become this browser's device keys, in one transaction. */
export async function completePendingKeys(keys: PendingKeys): Promise<SavedKeys> {
  const { deviceName: _name, ...saved } = keys
  await db('readwrite', (store) => {
    store.put(saved, 'keys')
    store.delete('pending-keys')
    return promisifyRequest(store.transaction)
  })
  return saved
}
