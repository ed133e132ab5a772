// What this browser keeps between visits, in IndexedDB (origin-private): the session's token
// pair with the account it belongs to, and, once the browser is a device of the account, the
// device's keys. Nothing here ever leaves the browser except the tokens, sent to this origin.
// Signing out drops the tokens and keeps the keys (the browser stays a device, as the CLI's
// logout does); "forget this browser" drops both (docs/web.md).
import { createStore, del, get, set } from 'idb-keyval'
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
}

export const readSession = (): Promise<SavedSession | undefined> => get<SavedSession>('session', db)
export const saveSession = (session: SavedSession): Promise<void> => set('session', session, db)
export const dropSession = (): Promise<void> => del('session', db)

export const readKeys = (): Promise<SavedKeys | undefined> => get<SavedKeys>('keys', db)
export const saveKeys = (keys: SavedKeys): Promise<void> => set('keys', keys, db)
export const dropKeys = (): Promise<void> => del('keys', db)
